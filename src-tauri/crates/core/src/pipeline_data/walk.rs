//! Reading JSON Schemas for the pipeline check: the types a node admits, and the node a JSON
//! pointer reaches (through `properties`, `items`, `prefixItems`, `additionalProperties`, the
//! branches of `allOf`/`anyOf`/`oneOf`, and local `$ref`s, a bounded number of times). What a
//! schema does not say is `None`, "anything", never a guess.

use std::collections::BTreeSet;

use serde_json::Value;

pub(super) fn show(t: Option<&BTreeSet<&'static str>>) -> String {
    match t {
        None => "anything".into(),
        Some(t) => t.iter().copied().collect::<Vec<_>>().join(" or "),
    }
}

/// Whether every type the source may have is one the target takes.
pub(super) fn compatible(src: Option<&BTreeSet<&str>>, dst: Option<&BTreeSet<&str>>) -> bool {
    let (Some(src), Some(dst)) = (src, dst) else {
        return true;
    };
    src.iter()
        .all(|s| dst.contains(s) || (*s == "integer" && dst.contains("number")))
}

pub(super) fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// The types a schema node admits, `None` when it does not say.
pub(super) fn types(root: &Value, node: &Value) -> Option<BTreeSet<&'static str>> {
    let node = deref(root, node)?;
    match node.get("type") {
        Some(Value::String(t)) => return known_type(t).map(|t| BTreeSet::from([t])),
        Some(Value::Array(a)) => {
            let mut out = BTreeSet::new();
            for t in a {
                out.insert(known_type(t.as_str()?)?);
            }
            return Some(out);
        }
        _ => {}
    }
    if let Some(c) = node.get("const") {
        return Some(BTreeSet::from([type_of(c)]));
    }
    if let Some(Value::Array(e)) = node.get("enum") {
        return Some(e.iter().map(type_of).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(key) {
            let mut out = BTreeSet::new();
            for b in branches {
                out.extend(types(root, b)?);
            }
            return Some(out);
        }
    }
    None
}

fn known_type(t: &str) -> Option<&'static str> {
    TYPES.iter().copied().find(|k| *k == t)
}

/// Follows local `$ref`s (`#/...`), a bounded number of times.
fn deref<'a>(root: &'a Value, mut node: &'a Value) -> Option<&'a Value> {
    for _ in 0..16 {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => node = root.pointer(r.strip_prefix('#')?)?,
            None => return Some(node),
        }
    }
    None
}

/// The `required` names of an object schema.
pub(super) fn required(schema: &Value) -> Vec<&str> {
    deref(schema, schema)
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether an object schema refuses properties it does not list.
pub(super) fn closed(schema: &Value) -> bool {
    deref(schema, schema).and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false))
}

/// The schema of property `name` of an object schema.
pub(super) fn property<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    child(schema, schema, name)
}

/// The schema of one step down (`token` of a JSON pointer) from `node`.
fn child<'a>(root: &'a Value, node: &'a Value, token: &str) -> Option<&'a Value> {
    let node = deref(root, node)?;
    if let Some(p) = node.get("properties").and_then(|p| p.get(token)) {
        return Some(p);
    }
    let index = token.parse::<usize>().ok();
    if let Some(i) = index {
        for key in ["prefixItems", "items"] {
            if let Some(Value::Array(items)) = node.get(key) {
                if let Some(s) = items.get(i) {
                    return Some(s);
                }
            }
        }
        if let Some(items @ Value::Object(_)) = node.get("items") {
            return Some(items);
        }
    }
    if let Some(extra @ Value::Object(_)) = node.get("additionalProperties") {
        return Some(extra);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(key) {
            if let Some(found) = branches.iter().find_map(|b| child(root, b, token)) {
                return Some(found);
            }
        }
    }
    None
}

/// The schema node a JSON pointer reaches in `schema`, walking `properties` and `items`.
pub(super) fn resolve<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(schema);
    }
    let mut node = schema;
    for raw in pointer.strip_prefix('/')?.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        node = child(schema, node, &token)?;
    }
    Some(node)
}

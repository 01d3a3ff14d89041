//! Pinning a server's surface on first use, and diffing every later catalog against it (TD-02).
//!
//! A *pin* is what the person accepted of a server: per item (each tool, prompt and resource
//! template, and the server's `instructions`) a SHA-256 over the item's canonical JSON, with the
//! canonical JSON itself kept for showing a before/after diff. A tool's pinned form is exactly
//! `{name, title, description, inputSchema, outputSchema, annotations}`: everything a model
//! reads or a policy looks at. Icons are left out; they change nothing a model sees.
//!
//! [`tool_digest`] is the same digest, exported on its own because "always" grants are bound to
//! it (AP-02): a tool whose definition changes gets a new digest, so its old grants stop
//! matching without anyone having to find and revoke them.
//!
//! Everything here is pure: no I/O, no clock. What is pinned and stored, and what is held
//! back from models until reviewed, is the host's business (`host::pins`); the rules it
//! applies are [`assess`] and [`diff`], table-tested below.
//!
//! # Canonical JSON
//! A small canonicaliser of our own rather than a crate: object keys are sorted by their
//! UTF-16 code units and written without insignificant whitespace, strings are escaped as
//! `serde_json` escapes them, as RFC 8785 (JCS) does. Numbers are written as `serde_json`
//! prints them, which equals JCS for integers but may differ for fractional numbers; a pin is
//! only ever compared with digests this same code made, so that difference never matters, and
//! it saves a dependency (the JCS crates are small, little used and rarely released). Not relying
//! on `serde_json::Map` happening to be a `BTreeMap` matters: any crate in the build turning on
//! serde_json's `preserve_order` feature would otherwise silently change every digest.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::catalog::{Catalog, PromptInfo, ResourceTemplateInfo, ToolInfo};
pub use crate::pin_data::{HoldReason, ItemKey, ItemKind, Pin, PinnedItem};

/// How many tools a server may have pinned on first use without the person looking at them
/// (TD-04). Beyond this, tools are held for review like new ones. A cap that refused the
/// server outright would break servers that really have thousands of generated tools (our
/// own 5,000-tool test server among them); holding the extras keeps them listed and visible
/// while nothing a person has not seen reaches a model.
pub const FIRST_PIN_TOOLS_MAX: usize = 200;

// The types live in the `pin_data` leaf (store keeps them); how an item is digested and a
// surface built from a catalog is decided here.
impl PinnedItem {
    fn of(value: &Value) -> Self {
        let canonical = canonical_json(value);
        Self {
            digest: sha256_hex(canonical.as_bytes()),
            canonical,
        }
    }
}

impl Pin {
    /// The whole surface of a catalog.
    pub fn of(catalog: &Catalog) -> Self {
        let mut items = BTreeMap::new();
        for t in &catalog.tools {
            items.insert(ItemKey::tool(&t.name), PinnedItem::of(&tool_view(t)));
        }
        for p in &catalog.prompts {
            items.insert(
                ItemKey {
                    kind: ItemKind::Prompt,
                    name: p.name.clone(),
                },
                PinnedItem::of(&prompt_view(p)),
            );
        }
        for r in &catalog.resource_templates {
            items.insert(
                ItemKey {
                    kind: ItemKind::ResourceTemplate,
                    name: r.name.clone(),
                },
                PinnedItem::of(&template_view(r)),
            );
        }
        if let Some(i) = &catalog.instructions {
            items.insert(
                ItemKey::instructions(),
                PinnedItem::of(&instructions_view(i)),
            );
        }
        Self { items }
    }

    /// What is pinned the first time a server is seen (trust on first use): everything, except
    /// tools past the first [`FIRST_PIN_TOOLS_MAX`] in the server's order, which stay unpinned
    /// and so are held for review.
    pub fn first(catalog: &Catalog) -> Self {
        let mut pin = Self::of(catalog);
        for t in catalog.tools.iter().skip(FIRST_PIN_TOOLS_MAX) {
            pin.items.remove(&ItemKey::tool(&t.name));
        }
        pin
    }

    /// One digest over the whole surface: what a review was shown, so an approval can be
    /// refused when the surface changed in between.
    pub fn surface_digest(&self) -> String {
        let mut h = Sha256::new();
        for (k, v) in &self.items {
            h.update(k.kind.as_str().as_bytes());
            h.update([0]);
            h.update(k.name.as_bytes());
            h.update([0]);
            h.update(v.digest.as_bytes());
            h.update([b'\n']);
        }
        hex::encode(h.finalize())
    }

    /// The pinned digest of a tool.
    pub fn tool(&self, name: &str) -> Option<&PinnedItem> {
        self.items.get(&ItemKey::tool(name))
    }
}

/// The digest of a tool's definition (`{name, title, description, inputSchema, outputSchema,
/// annotations}` as canonical JSON). Grants made "always" are bound to it (AP-02).
pub fn tool_digest(tool: &ToolInfo) -> String {
    sha256_hex(canonical_json(&tool_view(tool)).as_bytes())
}

/// The digest of the server's instructions.
pub fn instructions_digest(text: &str) -> String {
    sha256_hex(canonical_json(&instructions_view(text)).as_bytes())
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn put(m: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(key.to_owned(), v);
    }
}

/// The pinned form of a tool.
pub fn tool_view(t: &ToolInfo) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(t.name.clone()));
    put(&mut m, "title", t.title.clone().map(Value::String));
    put(
        &mut m,
        "description",
        t.description.clone().map(Value::String),
    );
    m.insert("inputSchema".into(), t.input_schema.clone());
    put(&mut m, "outputSchema", t.output_schema.clone());
    put(
        &mut m,
        "annotations",
        t.annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok()),
    );
    // An app's view (MCP Apps' `_meta.ui`) is what the person sees and what it may call, so a
    // change to it is held for review like a changed description. Added only when present, so
    // a tool without one keeps the digest it had before this key existed.
    put(
        &mut m,
        "ui",
        t.meta.as_ref().and_then(|meta| meta.get("ui")).cloned(),
    );
    Value::Object(m)
}

fn prompt_view(p: &PromptInfo) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(p.name.clone()));
    put(&mut m, "title", p.title.clone().map(Value::String));
    put(
        &mut m,
        "description",
        p.description.clone().map(Value::String),
    );
    if !p.arguments.is_empty() {
        put(&mut m, "arguments", serde_json::to_value(&p.arguments).ok());
    }
    Value::Object(m)
}

fn template_view(r: &ResourceTemplateInfo) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(r.name.clone()));
    m.insert("uriTemplate".into(), Value::String(r.uri_template.clone()));
    put(&mut m, "title", r.title.clone().map(Value::String));
    put(
        &mut m,
        "description",
        r.description.clone().map(Value::String),
    );
    put(&mut m, "mimeType", r.mime_type.clone().map(Value::String));
    Value::Object(m)
}

fn instructions_view(text: &str) -> Value {
    let mut m = Map::new();
    m.insert("instructions".into(), Value::String(text.to_owned()));
    Value::Object(m)
}

/// Canonical JSON: keys sorted by UTF-16 code units, no insignificant whitespace.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(&mut out, v);
    out
}

fn write_string(out: &mut String, s: &str) {
    // serde_json's escaping of a plain string cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn write_canonical(out: &mut String, v: &Value) {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => out.push_str(&v.to_string()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                if let Some(item) = m.get(k) {
                    write_canonical(out, item);
                }
            }
            out.push('}');
        }
    }
}

/// What of the current surface waits for review, and why. Tools in here are not offered to
/// models and calls to them are refused; held instructions are not sent to models. Prompts and
/// resource templates are listed for review but not blocked: a person picks them by hand and
/// sees them when doing so, and no model reads them on its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assessment {
    /// Items of the current surface that differ from the pin.
    pub pending: BTreeMap<ItemKey, HoldReason>,
}

impl Assessment {
    /// Why a tool is held, if it is.
    pub fn tool(&self, name: &str) -> Option<HoldReason> {
        // A lookup key is built rather than scanning: this runs on every tool call.
        self.pending.get(&ItemKey::tool(name)).copied()
    }

    /// Why a prompt is held, if it is: a prompt's messages go into conversations, so one that
    /// is new or changed is not expanded until reviewed.
    pub fn prompt(&self, name: &str) -> Option<HoldReason> {
        self.pending
            .get(&ItemKey {
                kind: ItemKind::Prompt,
                name: name.to_owned(),
            })
            .copied()
    }

    /// Whether the server's instructions are held back.
    pub fn instructions_held(&self) -> bool {
        self.pending.contains_key(&ItemKey::instructions())
    }

    /// The names of held tools.
    pub fn held_tools(&self) -> impl Iterator<Item = &str> {
        self.pending
            .keys()
            .filter(|k| k.kind == ItemKind::Tool)
            .map(|k| k.name.as_str())
    }
}

/// Compares the current surface with the pin: every item that is new or differs is pending.
/// Items that disappeared need nothing: they cannot be called.
pub fn assess(pinned: &Pin, current: &Pin) -> Assessment {
    let pending = current
        .items
        .iter()
        .filter_map(|(k, item)| match pinned.items.get(k) {
            None => Some((k.clone(), HoldReason::New)),
            Some(p) if p.digest != item.digest => Some((k.clone(), HoldReason::Changed)),
            Some(_) => None,
        })
        .collect();
    Assessment { pending }
}

/// Which part of an item changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "field", content = "path", rename_all = "snake_case")]
pub enum Field {
    /// The title.
    Title,
    /// The description.
    Description,
    /// The input schema, apart from its descriptions.
    InputSchema,
    /// The output schema, apart from its descriptions.
    OutputSchema,
    /// A description inside the input schema (a parameter's), at this JSON pointer.
    ParamDescription(String),
    /// A description inside the output schema, at this JSON pointer.
    OutputDescription(String),
    /// The annotations (hints).
    Annotations,
    /// A prompt's arguments.
    Arguments,
    /// A resource template's URI template.
    UriTemplate,
    /// A resource template's MIME type.
    MimeType,
    /// The server's instructions text.
    Instructions,
    /// Any other member, by name.
    Other(String),
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Title => f.write_str("title"),
            Self::Description => f.write_str("description"),
            Self::InputSchema => f.write_str("input schema"),
            Self::OutputSchema => f.write_str("output schema"),
            Self::ParamDescription(p) => write!(f, "description of {}", schema_place(p)),
            Self::OutputDescription(p) => {
                write!(f, "output schema: description of {}", schema_place(p))
            }
            Self::Annotations => f.write_str("annotations"),
            Self::Arguments => f.write_str("arguments"),
            Self::UriTemplate => f.write_str("URI template"),
            Self::MimeType => f.write_str("MIME type"),
            Self::Instructions => f.write_str("instructions"),
            Self::Other(name) => write!(f, "{name}"),
        }
    }
}

/// `/properties/text/description` reads "parameter text"; deeper pointers stay pointers.
fn schema_place(pointer: &str) -> String {
    let p = pointer.strip_suffix("/description").unwrap_or(pointer);
    match p.strip_prefix("/properties/") {
        Some(name) if !name.contains('/') => format!("parameter {name}"),
        _ if p.is_empty() => "the schema".to_owned(),
        _ => p.to_owned(),
    }
}

/// One field of one item, before and after. Texts are as the server sent them (escape them
/// for display); JSON members are pretty-printed with sorted keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldChange {
    /// Which field.
    pub field: Field,
    /// As pinned (absent for new items and new fields).
    pub before: Option<String>,
    /// As now (absent for removed items and removed fields).
    pub after: Option<String>,
}

/// One item that was added, removed or changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Its kind.
    pub kind: ItemKind,
    /// Its name (empty for instructions).
    pub name: String,
    /// What differs.
    pub fields: Vec<FieldChange>,
    /// The pinned digest, if it was pinned.
    pub before_digest: Option<String>,
    /// The current digest, if it still exists.
    pub after_digest: Option<String>,
}

/// The difference between a pin and the current surface.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinDiff {
    /// Items that are new (including tools past the first-use cap).
    pub added: Vec<Change>,
    /// Items that are gone.
    pub removed: Vec<Change>,
    /// Items whose definition differs.
    pub changed: Vec<Change>,
    /// Whether the instructions are new or differ.
    pub instructions_changed: bool,
}

impl PinDiff {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Item by item and field by field, what differs between `old` and `new`.
pub fn diff(old: &Pin, new: &Pin) -> PinDiff {
    let mut d = PinDiff::default();
    for (k, item) in &new.items {
        match old.items.get(k) {
            None => d.added.push(change(k, None, Some(item))),
            Some(p) if p.digest != item.digest => d.changed.push(change(k, Some(p), Some(item))),
            Some(_) => {}
        }
    }
    for (k, item) in &old.items {
        if !new.items.contains_key(k) {
            d.removed.push(change(k, Some(item), None));
        }
    }
    d.instructions_changed = d
        .added
        .iter()
        .chain(&d.changed)
        .any(|c| c.kind == ItemKind::Instructions);
    d
}

fn parse_object(item: Option<&PinnedItem>) -> Map<String, Value> {
    match item.map(|i| serde_json::from_str(&i.canonical)) {
        Some(Ok(Value::Object(m))) => m,
        _ => Map::new(),
    }
}

fn change(key: &ItemKey, before: Option<&PinnedItem>, after: Option<&PinnedItem>) -> Change {
    let (old, new) = (parse_object(before), parse_object(after));
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    let mut fields = Vec::new();
    for name in names {
        if name == "name" {
            continue; // the key itself; a rename is a removal plus an addition
        }
        let (b, a) = (old.get(name), new.get(name));
        if b == a {
            continue;
        }
        match name.as_str() {
            "inputSchema" => schema_fields(
                b,
                a,
                Field::InputSchema,
                Field::ParamDescription,
                &mut fields,
            ),
            "outputSchema" => schema_fields(
                b,
                a,
                Field::OutputSchema,
                Field::OutputDescription,
                &mut fields,
            ),
            other => fields.push(FieldChange {
                field: field_named(other),
                before: b.map(text_of),
                after: a.map(text_of),
            }),
        }
    }
    Change {
        kind: key.kind,
        name: key.name.clone(),
        fields,
        before_digest: before.map(|i| i.digest.clone()),
        after_digest: after.map(|i| i.digest.clone()),
    }
}

fn field_named(name: &str) -> Field {
    match name {
        "title" => Field::Title,
        "description" => Field::Description,
        "annotations" => Field::Annotations,
        "arguments" => Field::Arguments,
        "uriTemplate" => Field::UriTemplate,
        "mimeType" => Field::MimeType,
        "instructions" => Field::Instructions,
        other => Field::Other(other.to_owned()),
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => pretty(other),
    }
}

fn pretty(v: &Value) -> String {
    // Through the canonical form so keys come out sorted whatever serde_json's map is.
    serde_json::from_str::<Value>(&canonical_json(v))
        .and_then(|c| serde_json::to_string_pretty(&c))
        .unwrap_or_else(|_| canonical_json(v))
}

/// A schema's change, split so a rug pull that only rewrites one parameter's description shows
/// as exactly that: each differing `description` by its JSON pointer, then the rest of the
/// schema (descriptions removed) if that differs too.
fn schema_fields(
    before: Option<&Value>,
    after: Option<&Value>,
    whole: Field,
    described: fn(String) -> Field,
    out: &mut Vec<FieldChange>,
) {
    let (mut b_desc, mut a_desc) = (BTreeMap::new(), BTreeMap::new());
    let b_rest = before.map(|v| strip_descriptions(v, String::new(), &mut b_desc));
    let a_rest = after.map(|v| strip_descriptions(v, String::new(), &mut a_desc));
    let mut paths: Vec<&String> = b_desc.keys().chain(a_desc.keys()).collect();
    paths.sort();
    paths.dedup();
    for p in paths {
        let (b, a) = (b_desc.get(p), a_desc.get(p));
        if b != a {
            out.push(FieldChange {
                field: described(p.clone()),
                before: b.cloned(),
                after: a.cloned(),
            });
        }
    }
    if b_rest != a_rest {
        out.push(FieldChange {
            field: whole,
            before: before.map(pretty),
            after: after.map(pretty),
        });
    }
}

/// The value without any string `description` member, collecting those by JSON pointer.
fn strip_descriptions(v: &Value, at: String, found: &mut BTreeMap<String, String>) -> Value {
    match v {
        Value::Object(m) => {
            let mut rest = Map::new();
            for (k, item) in m {
                let path = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match item {
                    Value::String(s) if k == "description" => {
                        found.insert(path, s.clone());
                    }
                    other => {
                        rest.insert(k.clone(), strip_descriptions(other, path, found));
                    }
                }
            }
            Value::Object(rest)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| strip_descriptions(item, format!("{at}/{i}"), found))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;

//! Tool input schemas: compiled offline, bounded, and used to check arguments before anything
//! is sent (TD-05, TD-07).
//!
//! Schemas come from servers and are untrusted. They are compiled with `jsonschema` built
//! without its HTTP and file resolvers and with its offline retriever, so a `$ref` to
//! `https://...` or `file:///...` is an error, never a fetch. Size and nesting are bounded before
//! compiling. A tool whose schema does not compile is excluded from the catalog and the reason is
//! logged; it is never treated as "anything goes".
//!
//! A leaf (re-exported as `mcp::schema`, where it used to live): the supervisor compiles the
//! schemas of a catalog, and `approval` checks an elicitation form's answer with the same
//! validator without depending on `mcp`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

/// Largest schema accepted, serialized.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Deepest nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// Why a schema was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// Over [`MAX_SCHEMA_BYTES`].
    #[error("the schema is {0} bytes; at most {MAX_SCHEMA_BYTES} are accepted")]
    TooLarge(usize),
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("the schema nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Not a JSON object.
    #[error("the schema is not a JSON object")]
    NotAnObject,
    /// The validator refused it (including any reference it would have to fetch).
    #[error("the schema does not compile: {0}")]
    Invalid(String),
}

fn depth(v: &Value) -> usize {
    // Iterative, so a hostile 100k-deep schema cannot overflow our stack.
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if d > MAX_DEPTH {
            return d;
        }
        match v {
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

/// A compiled input schema.
#[derive(Clone)]
pub struct ArgValidator(Arc<jsonschema::Validator>);

impl std::fmt::Debug for ArgValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgValidator")
    }
}

impl ArgValidator {
    /// Compiles a schema without fetching anything.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        if !schema.is_object() {
            return Err(SchemaError::NotAnObject);
        }
        let size = serde_json::to_vec(schema)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if size > MAX_SCHEMA_BYTES {
            return Err(SchemaError::TooLarge(size));
        }
        if depth(schema) > MAX_DEPTH {
            return Err(SchemaError::TooDeep);
        }
        jsonschema::options()
            .offline()
            .build(schema)
            .map(|v| Self(Arc::new(v)))
            .map_err(|e| SchemaError::Invalid(e.to_string()))
    }

    /// Checks arguments; on failure returns up to ten messages naming where and what.
    pub fn check(&self, args: &Value) -> Result<(), Vec<String>> {
        // The common case answers without building an error iterator.
        if self.0.is_valid(args) {
            return Ok(());
        }
        let errors: Vec<String> = self
            .0
            .iter_errors(args)
            .take(10)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Validators of a server's tools by name. Equality is not meaningful for compiled validators;
/// two sets compare equal so the catalog that carries them can still derive `PartialEq`.
#[derive(Clone, Debug, Default)]
pub struct Validators(pub HashMap<String, ArgValidator>);

impl PartialEq for Validators {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validates_arguments() {
        let v = ArgValidator::compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        }))
        .unwrap();
        assert!(v.check(&json!({"a": 1, "b": 2})).is_ok());
        let errs = v.check(&json!({"a": "x"})).unwrap_err();
        assert!(errs.iter().any(|e| e.contains("/a")), "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("\"b\"")), "{errs:?}");
    }

    #[test]
    fn never_fetches_references() {
        for r in [
            "https://127.0.0.1:9/schema.json",
            "http://example.com/s.json",
            "file:///etc/passwd",
        ] {
            let err =
                ArgValidator::compile(&json!({"type": "object", "properties": {"x": {"$ref": r}}}))
                    .unwrap_err();
            assert!(matches!(err, SchemaError::Invalid(_)), "{r}: {err}");
        }
        // Local references still work.
        assert!(ArgValidator::compile(&json!({
            "type": "object",
            "$defs": {"n": {"type": "number"}},
            "properties": {"x": {"$ref": "#/$defs/n"}}
        }))
        .is_ok());
    }

    #[test]
    fn bounds_size_and_depth() {
        let mut deep = json!({"type": "object"});
        for _ in 0..100 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert_eq!(
            ArgValidator::compile(&deep).unwrap_err(),
            SchemaError::TooDeep
        );
        let big = json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)});
        assert!(matches!(
            ArgValidator::compile(&big),
            Err(SchemaError::TooLarge(_))
        ));
        assert_eq!(
            ArgValidator::compile(&json!(true)).unwrap_err(),
            SchemaError::NotAnObject
        );
    }

    /// The 2020-12 keywords a server may use are honoured, not stripped: `$defs` with an
    /// `$anchor`, composition, conditionals, `additionalProperties: false` (issue 13, point 4).
    #[test]
    fn json_schema_2020_12_keywords_are_honoured() {
        let v = ArgValidator::compile(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"n": {"$anchor": "num", "type": "integer", "minimum": 0}},
            "properties": {"a": {"$ref": "#num"}, "b": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "allOf": [{"required": ["a"]}],
            "if": {"properties": {"a": {"const": 0}}},
            "then": {"required": ["b"]},
            "additionalProperties": false
        }))
        .unwrap();
        assert!(v.check(&json!({"a": 0, "b": "x"})).is_ok());
        assert!(v.check(&json!({"a": 1})).is_ok());
        assert!(v.check(&json!({"a": 0})).is_err(), "if/then ignored");
        assert!(
            v.check(&json!({"a": -1})).is_err(),
            "$anchor reference ignored"
        );
        assert!(v.check(&json!({"b": "x"})).is_err(), "allOf ignored");
        assert!(
            v.check(&json!({"a": 1, "c": 1})).is_err(),
            "additionalProperties ignored"
        );
        assert!(v.check(&json!({"a": 1, "b": 3})).is_err(), "anyOf ignored");
    }
}

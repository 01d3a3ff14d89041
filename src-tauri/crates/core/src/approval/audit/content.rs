//! What an audit row may hold: canonical JSON and digests, secret redaction, size caps, and
//! the one-line summary lists show. Pure functions, no I/O.

use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{AuditKind, REDACTED, TEXT_MAX};
use crate::ids::ConversationId;
use crate::redact::{name_looks_secret, redact_for_logs, value_looks_secret};

/// SHA-256 (hex) of arguments in canonical JSON (object keys sorted at every level), so the
/// same arguments give the same digest whatever order their keys arrived in.
pub fn arguments_digest(arguments: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(arguments).as_bytes()))
}

/// SHA-256 (hex) of a value's canonical JSON and the JSON's length in bytes.
pub fn digest_and_size(value: &impl Serialize) -> (String, u64) {
    let v = serde_json::to_value(value).unwrap_or(Value::Null);
    let s = canonical_json(&v);
    (
        hex::encode(Sha256::digest(s.as_bytes())),
        u64::try_from(s.len()).unwrap_or(u64::MAX),
    )
}

/// Compact JSON with object keys sorted at every level.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(child) = m.get(k) {
                    write_canonical(child, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A copy of `v` with secrets masked: values under credential-like keys whole, known secret
/// values wherever they occur, and strings that look like credentials on their own.
pub fn redact_value(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, child)| {
                    let masked = name_looks_secret(k) && !child.is_null();
                    let child = if masked {
                        Value::String(REDACTED.into())
                    } else {
                        redact_value(child)
                    };
                    (redact_for_logs(k), child)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_value).collect()),
        Value::String(s) => Value::String(redact_string(s)),
        other => other.clone(),
    }
}

/// One string with known secrets replaced, or masked whole when it looks like a credential.
fn redact_string(s: &str) -> String {
    if value_looks_secret(s) && ConversationId::parse(&s.trim().to_ascii_lowercase()).is_err() {
        return REDACTED.into();
    }
    redact_for_logs(s)
}

/// Free text: redacted and cut to [`TEXT_MAX`] bytes.
pub(super) fn text(s: &str) -> String {
    let r = redact_for_logs(s);
    if r.len() <= TEXT_MAX {
        return r;
    }
    let mut out = crate::redact::cut_for_logs(&r, TEXT_MAX).to_owned();
    out.push('…');
    out
}

/// `s` cut to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `v` itself when its JSON fits in `max` bytes, else a marker with its size and the start of
/// its JSON as text (cut JSON is not JSON).
pub fn capped(v: Value, max: usize) -> Value {
    let s = v.to_string();
    if s.len() <= max {
        return v;
    }
    // The preview never ends in the beginning of a secret (SE-06).
    json!({ "truncated": true, "bytes": s.len(), "preview": crate::redact::cut_for_logs(&s, max) })
}

/// A one-line description of an entry for lists (the GUI's audit view, `audit list`).
pub fn summarize(kind: AuditKind, detail_json: &str) -> String {
    let d: Value = serde_json::from_str(detail_json).unwrap_or(Value::Null);
    let s = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_owned);
    let n = |k: &str| d.get(k).and_then(Value::as_u64);
    let short = |digest: Option<String>| {
        digest
            .map(|h| format!("sha256 {}", cut(&h, 12)))
            .unwrap_or_else(|| "no digest".into())
    };
    let line = match kind {
        AuditKind::Proposed => {
            let what = match s("request").as_deref() {
                None | Some("tool") => String::new(),
                Some(kind) => format!("{kind} request, "),
            };
            format!(
                "{what}arguments {} ({} bytes)",
                short(s("arguments_sha256")),
                n("arguments_bytes").unwrap_or(0)
            )
        }
        AuditKind::Decided => match s("reason") {
            Some(r) => format!("{}: {r}", s("decision").unwrap_or_default()),
            None => s("decision").unwrap_or_default(),
        },
        AuditKind::Edited => format!(
            "arguments changed to {} ({} bytes)",
            short(s("after_sha256")),
            n("after_bytes").unwrap_or(0)
        ),
        AuditKind::Started => "sent to the server".into(),
        AuditKind::Finished => {
            let ms = n("duration_ms").unwrap_or(0);
            match (s("error"), d.get("is_error").and_then(Value::as_bool)) {
                (Some(e), _) => format!("failed after {ms} ms: {e}"),
                (None, Some(true)) => format!(
                    "tool error after {ms} ms, result {}",
                    short(s("result_sha256"))
                ),
                _ => format!(
                    "ok in {ms} ms, result {} ({} bytes)",
                    short(s("result_sha256")),
                    n("result_bytes").unwrap_or(0)
                ),
            }
        }
        AuditKind::Elicitation => format!(
            "{} ({}): {}",
            s("reply").unwrap_or_default(),
            s("mode").unwrap_or_default(),
            s("message").unwrap_or_default()
        ),
        AuditKind::Sampling => match s("model") {
            Some(m) => format!("{} with {m}", s("reply").unwrap_or_default()),
            None => s("reply").unwrap_or_default(),
        },
        AuditKind::Grant => [s("change"), s("scope"), s("grant_id")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" "),
        AuditKind::Policy => [s("change"), s("rule_id")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" "),
        AuditKind::Pin => format!("{} {}", s("change").unwrap_or_default(), short(s("sha256"))),
        AuditKind::Config => {
            let what = s("change").unwrap_or_default().replace('_', " ");
            match d.get("detail").filter(|v| !v.is_null()) {
                Some(v) => format!("{what}: {}", cut(&v.to_string(), 160)),
                None => what,
            }
        }
    };
    let one: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one.chars().count() > 160 {
        one.chars().take(159).chain(['…']).collect()
    } else {
        one
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_ignores_key_order() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"q":2,"p":3}],"x":"é"}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":"é","y":[1,{"p":3,"q":2}]},"b":1}"#).unwrap();
        assert_eq!(arguments_digest(&a), arguments_digest(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"é","y":[1,{"p":3,"q":2}]},"b":1}"#
        );
        assert_ne!(arguments_digest(&a), arguments_digest(&json!({"b": 2})));
    }
}

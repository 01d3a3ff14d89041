//! A server's `elicitation/create` read into something a person can be shown (AP-07), and the
//! person's form answer checked before it goes back.
//!
//! Form mode: the spec allows a flat object of primitive fields (string, number, integer,
//! boolean, enums); anything else is refused rather than half-rendered. Fields whose name, title
//! or description look like a password, key, token or other credential are flagged: the spec
//! forbids servers to ask for those in a form, so a dialog warns before anything is typed.
//! URL mode: the URL goes through [`crate::url_check::check`]; a refused URL is never shown as
//! openable.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::ArgValidator;
use crate::url_check::{self, CheckedUrl};

/// Characters of a server's message kept for display.
pub const MESSAGE_MAX: usize = 4_000;
/// Fields a form may have.
pub const FIELDS_MAX: usize = 50;

/// A form a server wants filled in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormQuestion {
    /// The server's message (untrusted text).
    pub message: String,
    /// The requested schema, as sent (a flat object).
    pub schema: Value,
    /// Names of fields that look like credentials.
    pub sensitive: Vec<String>,
}

/// A URL a server wants the person to open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UrlQuestion {
    /// The server's message (untrusted text).
    pub message: String,
    /// The URL, checked, with its domain and warnings.
    pub url: CheckedUrl,
    /// The server's id for this elicitation.
    pub elicitation_id: Option<String>,
}

/// What a server asked for, read.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation {
    /// A form.
    Form(FormQuestion),
    /// A URL.
    Url(UrlQuestion),
}

/// Why an elicitation request is not shown (it is declined, and the reason logged).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ElicitError {
    /// A mode we do not know.
    #[error("unknown elicitation mode {0:?}")]
    Mode(String),
    /// The form schema is not a flat object of primitive fields.
    #[error("the requested form is not a flat object of simple fields: {0}")]
    Schema(String),
    /// The URL was refused.
    #[error("the URL was refused: {0}")]
    Url(#[from] url_check::UrlRefusal),
    /// A required member is missing.
    #[error("the request has no {0}")]
    Missing(&'static str),
}

/// Words that mark a credential. `None` only if the constant pattern failed to compile, which
/// a unit test rules out; then every field counts as sensitive (fail closed).
static SENSITIVE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)pass(word|phrase|wd)?\b|secret|token|api[\s_-]?key|private[\s_-]?key|credential|\bpin\b|\bcvv\b|\bcvc\b|credit[\s_-]?card|card[\s_-]?number|\bssn\b|social[\s_-]?security|\botp\b|seed[\s_-]?phrase|mnemonic",
    )
    .ok()
});

fn looks_sensitive(text: &str) -> bool {
    SENSITIVE.as_ref().is_none_or(|re| re.is_match(text))
}

/// Reads `elicitation/create` params.
pub fn read(params: &Value) -> Result<Elicitation, ElicitError> {
    let message: String = params
        .get("message")
        .and_then(Value::as_str)
        .ok_or(ElicitError::Missing("message"))?
        .chars()
        .take(MESSAGE_MAX)
        .collect();
    match params.get("mode").and_then(Value::as_str).unwrap_or("form") {
        "form" => {
            let schema = params
                .get("requestedSchema")
                .ok_or(ElicitError::Missing("requestedSchema"))?;
            let sensitive = check_form_schema(schema)?;
            Ok(Elicitation::Form(FormQuestion {
                message,
                schema: schema.clone(),
                sensitive,
            }))
        }
        "url" => {
            let url = params
                .get("url")
                .and_then(Value::as_str)
                .ok_or(ElicitError::Missing("url"))?;
            Ok(Elicitation::Url(UrlQuestion {
                message,
                url: url_check::check(url)?,
                elicitation_id: params
                    .get("elicitationId")
                    .and_then(Value::as_str)
                    .map(|s| s.chars().take(200).collect()),
            }))
        }
        other => Err(ElicitError::Mode(other.chars().take(40).collect())),
    }
}

/// Checks a form schema and returns the names of fields that look like credentials.
fn check_form_schema(schema: &Value) -> Result<Vec<String>, ElicitError> {
    let bad = |why: String| ElicitError::Schema(why);
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(bad("its type is not \"object\"".into()));
    }
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("it has no properties".into()))?;
    if props.len() > FIELDS_MAX {
        return Err(bad(format!(
            "it has {} fields (at most {FIELDS_MAX})",
            props.len()
        )));
    }
    ArgValidator::compile(schema).map_err(|e| bad(e.to_string()))?;
    let mut sensitive = Vec::new();
    for (name, prop) in props {
        let kind = prop.get("type").and_then(Value::as_str);
        let simple = matches!(kind, Some("string" | "number" | "integer" | "boolean"))
            || (kind == Some("array")
                && (prop.pointer("/items/enum").is_some()
                    || prop.pointer("/items/anyOf").is_some()));
        if !simple {
            return Err(bad(format!("the field {name:?} is not a simple value")));
        }
        let text = |k: &str| prop.get(k).and_then(Value::as_str).unwrap_or_default();
        let said = format!("{name} {} {}", text("title"), text("description"));
        if looks_sensitive(&said.replace(['_', '-'], " "))
            || looks_sensitive(&said)
            || text("format") == "password"
            || prop.get("writeOnly") == Some(&Value::Bool(true))
        {
            sensitive.push(name.clone());
        }
    }
    Ok(sensitive)
}

/// Checks a person's form answer against the requested schema: only declared fields, valid
/// values. Returns the first problems found.
pub fn check_content(form: &FormQuestion, content: &Map<String, Value>) -> Result<(), Vec<String>> {
    let declared = form.schema.get("properties").and_then(Value::as_object);
    let extra: Vec<String> = content
        .keys()
        .filter(|k| !declared.is_some_and(|d| d.contains_key(*k)))
        .map(|k| format!("{k:?} is not a field of this form"))
        .collect();
    if !extra.is_empty() {
        return Err(extra);
    }
    let validator = ArgValidator::compile(&form.schema).map_err(|e| vec![e.to_string()])?;
    validator.check(&Value::Object(content.clone()))
}

/// The content with the values of sensitive fields replaced, for the audit log.
pub fn redacted(form: &FormQuestion, content: &Map<String, Value>) -> Value {
    Value::Object(
        content
            .iter()
            .map(|(k, v)| {
                let v = if form.sensitive.contains(k) {
                    Value::String("[redacted]".into())
                } else {
                    v.clone()
                };
                (k.clone(), v)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({"message": "Who are you?", "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "api_key": {"type": "string", "title": "API key"},
                "pw": {"type": "string", "description": "Your password"},
                "age": {"type": "integer", "minimum": 0},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "subscribe": {"type": "boolean"}
            },
            "required": ["name"]
        }})
    }

    #[test]
    fn the_credential_pattern_compiles() {
        assert!(SENSITIVE.is_some());
        assert!(!looks_sensitive("Name Your full name"));
    }

    #[test]
    fn a_form_is_read_and_credentials_are_flagged() {
        let Ok(Elicitation::Form(f)) = read(&form()) else {
            panic!("a form")
        };
        assert_eq!(f.message, "Who are you?");
        let mut s = f.sensitive.clone();
        s.sort();
        assert_eq!(s, ["api_key", "pw"]);
    }

    #[test]
    fn nested_or_odd_forms_are_refused() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "object"}}}),
            json!({"type": "array"}),
            json!({"type": "object"}),
        ] {
            let e = read(&json!({"message": "m", "requestedSchema": schema}));
            assert!(matches!(e, Err(ElicitError::Schema(_))), "{e:?}");
        }
        assert!(matches!(
            read(&json!({"message": "m", "mode": "telepathy"})),
            Err(ElicitError::Mode(_))
        ));
        assert!(matches!(
            read(&json!({"requestedSchema": {}})),
            Err(ElicitError::Missing("message"))
        ));
    }

    #[test]
    fn answers_are_checked_against_the_form() {
        let Ok(Elicitation::Form(f)) = read(&form()) else {
            panic!("a form")
        };
        let ok = json!({"name": "Ada", "age": 36, "color": "red"});
        assert!(check_content(&f, ok.as_object().unwrap()).is_ok());
        for bad in [
            json!({"age": 3}),
            json!({"name": "Ada", "age": -1}),
            json!({"name": "Ada", "color": "green"}),
            json!({"name": "Ada", "extra": 1}),
        ] {
            assert!(
                check_content(&f, bad.as_object().unwrap()).is_err(),
                "{bad}"
            );
        }
        let with_key = json!({"name": "Ada", "api_key": "sk-123"});
        assert_eq!(
            redacted(&f, with_key.as_object().unwrap()),
            json!({"name": "Ada", "api_key": "[redacted]"})
        );
    }

    #[test]
    fn urls_are_checked_before_they_are_shown() {
        let ok = read(
            &json!({"mode": "url", "message": "Sign in", "url": "https://auth.example.com/x",
                              "elicitationId": "e1"}),
        );
        let Ok(Elicitation::Url(u)) = ok else {
            panic!("{ok:?}")
        };
        assert_eq!(u.url.domain, "example.com");
        assert_eq!(u.elicitation_id.as_deref(), Some("e1"));
        for url in ["javascript:alert(1)", "file:///etc/passwd"] {
            let r = read(&json!({"mode": "url", "message": "m", "url": url}));
            assert!(matches!(r, Err(ElicitError::Url(_))), "{url}");
        }
    }
}

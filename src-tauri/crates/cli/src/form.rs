//! The fields of a server's elicitation form (AP-07) as a terminal shows and reads them.
//!
//! The core has already refused anything but a flat object of simple fields, so each field is
//! text, a number, an integer, a yes/no, a choice from a list, or several choices. What a person
//! types is read into a JSON value of the field's type here; whether the whole answer fits the
//! form (required fields, bounds, patterns) is the core's to check when it is submitted.

use serde_json::{Number, Value};
use switchboard_core::approval::elicit::FormQuestion;

use crate::output::inert;

/// What a field holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these (value, label).
    Choice(Vec<(Value, String)>),
    /// Any of these (value, label), comma-separated.
    Choices(Vec<(Value, String)>),
}

/// One field of the form.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub kind: Kind,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    /// It looks like a credential (the core's judgement).
    pub sensitive: bool,
}

/// `enum` (with legacy `enumNames`) or `oneOf`/`anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<(Value, String)>> {
    let label = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let name = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    (v.clone(), name.unwrap_or_else(|| label(v)))
                })
                .collect(),
        );
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let v = o.get("const")?;
                let title = o.get("title").and_then(Value::as_str).map(str::to_owned);
                Some((v.clone(), title.unwrap_or_else(|| label(v))))
            })
            .collect(),
    )
}

/// The form's fields, in the schema's order.
pub fn fields(form: &FormQuestion) -> Vec<Field> {
    let required: Vec<&str> = form
        .schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = form.schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let text = |k: &str| prop.get(k).and_then(Value::as_str).map(str::to_owned);
            let kind = match (prop.get("type").and_then(Value::as_str), choices(prop)) {
                (Some("array"), _) => {
                    Kind::Choices(prop.get("items").and_then(choices).unwrap_or_default())
                }
                (_, Some(c)) => Kind::Choice(c),
                (Some("number"), None) => Kind::Number,
                (Some("integer"), None) => Kind::Integer,
                (Some("boolean"), None) => Kind::Boolean,
                _ => Kind::Text,
            };
            Field {
                name: name.clone(),
                kind,
                title: text("title"),
                description: text("description"),
                required: required.contains(&name.as_str()),
                sensitive: form.sensitive.contains(name),
            }
        })
        .collect()
}

impl Field {
    /// The field's type in words.
    pub fn kind_words(&self) -> String {
        match &self.kind {
            Kind::Text => "text".into(),
            Kind::Number => "number".into(),
            Kind::Integer => "whole number".into(),
            Kind::Boolean => "y/n".into(),
            Kind::Choice(c) => format!("one of: {}", labels(c)),
            Kind::Choices(c) => format!("any of, comma-separated: {}", labels(c)),
        }
    }

    /// One line describing the field (server text made inert).
    pub fn line(&self) -> String {
        let mut s = format!("{} ({}", inert(&self.name), self.kind_words());
        if self.required {
            s.push_str(", required");
        }
        s.push(')');
        if let Some(t) = &self.title {
            s.push_str(&format!(" \"{}\"", inert(t)));
        }
        if let Some(d) = &self.description {
            s.push_str(&format!(": {}", inert(d)));
        }
        s
    }

    /// Reads what was typed for this field; `None` when left empty (the field is omitted).
    pub fn parse(&self, typed: &str) -> Result<Option<Value>, String> {
        let t = typed.trim();
        if t.is_empty() {
            return Ok(None);
        }
        let value = match &self.kind {
            // Text is taken as typed, inner spaces and all; only the line break is dropped.
            Kind::Text => Value::String(typed.trim_end_matches(['\n', '\r']).to_owned()),
            Kind::Number => {
                let n: f64 = t.parse().map_err(|_| format!("{t:?} is not a number"))?;
                Value::Number(
                    Number::from_f64(n).ok_or_else(|| format!("{t:?} is not a finite number"))?,
                )
            }
            Kind::Integer => Value::from(
                t.parse::<i64>()
                    .map_err(|_| format!("{t:?} is not a whole number"))?,
            ),
            Kind::Boolean => match t.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err(format!("{t:?} is not y or n")),
            },
            Kind::Choice(c) => pick(c, t)?,
            Kind::Choices(c) => Value::Array(
                t.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| pick(c, s))
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Some(value))
    }
}

fn labels(c: &[(Value, String)]) -> String {
    c.iter()
        .enumerate()
        .map(|(i, (_, l))| format!("{}={}", i + 1, inert(l)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A choice by its value, its label, or its number in the list.
fn pick(c: &[(Value, String)], typed: &str) -> Result<Value, String> {
    let as_text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some((v, _)) = c.iter().find(|(v, l)| as_text(v) == typed || l == typed) {
        return Ok(v.clone());
    }
    let folded: Vec<_> = c
        .iter()
        .filter(|(v, l)| as_text(v).eq_ignore_ascii_case(typed) || l.eq_ignore_ascii_case(typed))
        .collect();
    if let [(v, _)] = folded.as_slice() {
        return Ok(v.clone());
    }
    if let Some((v, _)) = typed
        .parse::<usize>()
        .ok()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| c.get(i))
    {
        return Ok(v.clone());
    }
    Err(format!(
        "{typed:?} is not one of the choices ({})",
        labels(c)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> FormQuestion {
        FormQuestion {
            message: "m".into(),
            schema: json!({"type": "object", "properties": {
                "age": {"type": "integer", "title": "Age"},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "level": {"type": "string", "oneOf": [{"const": "lo", "title": "Low"}, {"const": "hi", "title": "High"}]},
                "name": {"type": "string", "description": "Your name"},
                "ok": {"type": "boolean"},
                "score": {"type": "number"},
                "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                "token": {"type": "string"}
            }, "required": ["name"]}),
            sensitive: vec!["token".into()],
        }
    }

    fn field(name: &str) -> Field {
        fields(&form())
            .into_iter()
            .find(|f| f.name == name)
            .unwrap()
    }

    #[test]
    fn fields_are_read_from_the_schema() {
        let f = fields(&form());
        assert_eq!(f.len(), 8);
        assert!(field("name").required && !field("age").required);
        assert!(field("token").sensitive);
        assert_eq!(field("level").kind_words(), "one of: 1=Low, 2=High");
        assert!(field("name").line().contains("(text, required): Your name"));
    }

    #[test]
    fn typed_values_become_the_fields_types() {
        assert_eq!(field("age").parse("42").unwrap(), Some(json!(42)));
        assert!(field("age").parse("4.2").is_err());
        assert_eq!(field("score").parse("4.5").unwrap(), Some(json!(4.5)));
        assert!(field("score").parse("NaN").is_err());
        assert_eq!(field("ok").parse("Y").unwrap(), Some(json!(true)));
        assert_eq!(field("ok").parse("no").unwrap(), Some(json!(false)));
        assert!(field("ok").parse("maybe").is_err());
        assert_eq!(field("color").parse("blue").unwrap(), Some(json!("blue")));
        assert_eq!(field("color").parse("RED").unwrap(), Some(json!("red")));
        assert_eq!(field("color").parse("2").unwrap(), Some(json!("blue")));
        assert!(field("color").parse("green").is_err());
        assert_eq!(field("level").parse("High").unwrap(), Some(json!("hi")));
        assert_eq!(
            field("tags").parse("a, c").unwrap(),
            Some(json!(["a", "c"]))
        );
        assert!(field("tags").parse("a, z").is_err());
        assert_eq!(
            field("name").parse("  Ada L  ").unwrap(),
            Some(json!("  Ada L  "))
        );
        assert_eq!(
            field("name").parse("   ").unwrap(),
            None,
            "empty leaves it out"
        );
    }
}

//! One-line YAML values of a frontmatter: flow sequences and mappings, quoted scalars with
//! their escapes, and plain scalars resolved as YAML's core schema resolves them.

use serde_json::{Map, Number, Value};

pub(super) fn scalar_or_flow(text: &str) -> Result<Value, String> {
    let mut p = Flow { s: text, at: 0 };
    let v = p.value(false)?;
    p.space();
    if p.at != text.len() {
        return Err(format!("unexpected text after a value in {text:?}"));
    }
    Ok(v)
}

/// A value on one line: a flow collection, a quoted scalar or a plain one.
struct Flow<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Flow<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.at..]
    }

    fn space(&mut self) {
        let r = self.rest();
        self.at += r.len() - r.trim_start().len();
    }

    fn value(&mut self, in_flow: bool) -> Result<Value, String> {
        self.space();
        let r = self.rest();
        if r.starts_with(['&', '*', '!', '%', '@', '`']) {
            return Err(format!(
                "unsupported YAML ({r:?}): anchors, aliases and tags are not read"
            ));
        }
        if r.starts_with(['"', '\'']) {
            let (s, used) = quoted(r)?;
            self.at += used;
            return Ok(Value::String(s));
        }
        if let Some(open) = r.chars().next().filter(|c| *c == '[' || *c == '{') {
            self.at += 1;
            return self.collection(open == '{');
        }
        let stop = if in_flow {
            r.find([',', ']', '}']).unwrap_or(r.len())
        } else {
            r.len()
        };
        let plain = r[..stop].trim();
        self.at += stop;
        if plain.starts_with(['|', '>']) || (in_flow && plain.contains(": ")) {
            return Err(format!("unsupported value {plain:?}"));
        }
        Ok(resolve(plain))
    }

    fn collection(&mut self, is_map: bool) -> Result<Value, String> {
        let close = if is_map { '}' } else { ']' };
        let mut items = Vec::new();
        let mut map = Map::new();
        loop {
            self.space();
            if self.rest().starts_with(close) {
                self.at += 1;
                break;
            }
            if is_map {
                let key = match self.value(true)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                self.space();
                if !self.rest().starts_with(':') {
                    return Err("expected ':' in a flow mapping".into());
                }
                self.at += 1;
                let v = self.value(true)?;
                if map.insert(key.clone(), v).is_some() {
                    return Err(format!("the key {key:?} appears twice"));
                }
            } else {
                items.push(self.value(true)?);
            }
            self.space();
            match self.rest().chars().next() {
                Some(',') => self.at += 1,
                Some(c) if c == close => {}
                _ => return Err(format!("an unclosed flow collection in {:?}", self.s)),
            }
        }
        Ok(if is_map {
            Value::Object(map)
        } else {
            Value::Array(items)
        })
    }
}

/// A quoted scalar at the start of `s`: its value and the bytes it used.
pub(super) fn quoted(s: &str) -> Result<(String, usize), String> {
    let q = s.chars().next().unwrap_or('"');
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == q && q == '\'' => {
                if s[i + 1..].starts_with('\'') {
                    out.push('\'');
                    chars.next();
                } else {
                    return Ok((out, i + 1));
                }
            }
            '"' if q == '"' => return Ok((out, i + 1)),
            '\\' if q == '"' => {
                let (_, e) = chars.next().ok_or("a dangling escape")?;
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    '"' | '\\' | '/' | ' ' => e,
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, c)| c))
                            .collect();
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or("a bad \\u escape")?
                    }
                    other => return Err(format!("unsupported escape \\{other}")),
                });
            }
            c => out.push(c),
        }
    }
    Err("an unclosed quoted string (multi-line quoted strings are not read)".into())
}

/// A plain scalar as YAML's core schema resolves it.
fn resolve(plain: &str) -> Value {
    match plain {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = plain.strip_prefix(['-', '+']).unwrap_or(plain);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = plain.trim_start_matches('+').parse::<i64>() {
            return Value::Number(i.into());
        }
    }
    let floaty = !digits.is_empty()
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && digits
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.');
    if floaty {
        if let Some(n) = plain.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(plain.to_owned())
}

//! How one server entry's transport is read: which kind it is (stdio, HTTP, the legacy SSE
//! that becomes HTTP), the remote and the local half, and the fields Switchboard does not know.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::urls::bad_url;
use super::values::{vars, Field, ServerCx};
use super::{esc, named_values, NoteKind, KNOWN};
use crate::config::{HttpSpec, StdioSpec, TransportSpec};

/// Notes the fields of an entry that Switchboard does not read.
pub(super) fn note_unknown_fields(cx: &mut ServerCx<'_>, obj: &Map<String, Value>) {
    for key in obj.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        let why = match key.as_str() {
            "envFile" => "Switchboard does not read env files; add the variables to the server",
            "alwaysAllow" | "autoApprove" => {
                "automatic approvals are not imported; set tool policies in Switchboard"
            }
            _ => "Switchboard does not support it",
        };
        cx.note(
            NoteKind::DroppedField,
            format!("field \"{}\" was dropped: {why}", esc(key)),
        );
    }
}

/// The entry's `type` as written (lowercased), and whether it is a remote server; notes the
/// fields that do not apply to its kind.
pub(super) fn transport_kind(
    cx: &mut ServerCx<'_>,
    obj: &Map<String, Value>,
) -> Result<(Option<String>, bool), String> {
    let kind = match obj.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.to_ascii_lowercase()),
        Some(_) => return Err("its \"type\" is not a string".to_owned()),
    };
    let remote = match kind.as_deref() {
        Some("stdio") => false,
        Some("http" | "streamable-http" | "streamable_http" | "streamablehttp") => true,
        Some("sse") => {
            cx.note(
                NoteKind::TransportChanged,
                "type \"sse\" (the legacy HTTP+SSE transport) was imported as an HTTP server"
                    .to_owned(),
            );
            true
        }
        Some(other) => return Err(format!("its type \"{}\" is not supported", esc(other))),
        None if obj.contains_key("command") => false,
        None if obj.contains_key("url") => true,
        None => return Err("it has neither a \"command\" nor a \"url\"".to_owned()),
    };
    let unused: &[&str] = if remote {
        &["command", "args", "env", "cwd"]
    } else {
        &["url", "headers"]
    };
    for key in unused.iter().filter(|k| obj.contains_key(**k)) {
        let t = if remote {
            "a remote"
        } else {
            "a local (stdio)"
        };
        cx.note(
            NoteKind::DroppedField,
            format!("field \"{key}\" was dropped: it does not apply to {t} server"),
        );
    }

    Ok((kind, remote))
}

/// A remote server's transport: its URL (a legacy SSE address noted) and headers.
pub(super) fn remote_transport(
    cx: &mut ServerCx<'_>,
    obj: &Map<String, Value>,
    kind: Option<&str>,
) -> Result<TransportSpec, String> {
    let str_field = |k: &str| obj.get(k).and_then(Value::as_str);
    let url =
        str_field("url").ok_or_else(|| "its \"url\" is missing or not a string".to_owned())?;
    let url = cx.expand("the URL", url);
    let parsed = crate::config::validate_url(&url).map_err(|e| bad_url(&url, &e))?;
    if parsed.path().trim_end_matches('/').ends_with("/sse") && kind != Some("sse") {
        cx.note(
            NoteKind::TransportChanged,
            "the URL ends in /sse, which usually means the legacy HTTP+SSE transport; it was \
             imported as an HTTP server"
                .to_owned(),
        );
    }
    cx.check_url(&parsed);
    let headers = named_values(cx, obj.get("headers"), Field::Header);
    Ok(TransportSpec::Http(HttpSpec {
        url,
        headers,
        auth: None,
        allow_insecure: false,
    }))
}

/// A local server's transport: its command, arguments (never split by a shell), variables
/// and working directory.
pub(super) fn local_transport(
    cx: &mut ServerCx<'_>,
    obj: &Map<String, Value>,
) -> Result<TransportSpec, String> {
    let str_field = |k: &str| obj.get(k).and_then(Value::as_str);
    let command = str_field("command")
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| "its \"command\" is missing, empty or not a string".to_owned())?;
    let command = cx.expand("the command", command);
    let args = match obj.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let mut args = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let text = match item {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return Err(format!("argument {} is not a string", i + 1)),
                };
                args.push(cx.expand(&format!("argument {}", i + 1), &text));
            }
            args
        }
        Some(_) => {
            return Err(
                "its \"args\" is not a list (arguments are never split by a shell)".to_owned(),
            )
        }
    };
    cx.check_args(&args);
    let env = named_values(cx, obj.get("env"), Field::Env);
    let cwd = match obj.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if vars(c).is_empty() && !c.is_empty() => Some(PathBuf::from(c)),
        Some(Value::String(c)) if !c.is_empty() => {
            cx.note(
                NoteKind::UnresolvedVariable,
                format!(
                    "field \"cwd\" was dropped: `{}` only has a meaning inside VS Code; set \
                     the working directory yourself",
                    esc(c)
                ),
            );
            None
        }
        Some(_) => {
            cx.note(
                NoteKind::DroppedField,
                "field \"cwd\" was dropped: it is empty or not a string".to_owned(),
            );
            None
        }
    };
    Ok(TransportSpec::Stdio(StdioSpec {
        command,
        args,
        env,
        cwd,
        sandbox: Default::default(),
    }))
}

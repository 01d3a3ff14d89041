//! The built-in state tools: their specs, their arguments as a model sends them, and their
//! answers as JSON.
//!
//! Names: `switchboard_state_get` and so on, a single underscore. `mcp::naming` can never give
//! a server's tool one of these names, whatever the server is called (a server named
//! `switchboard` included), because every name it produces has one of two shapes:
//! - plain: `{server}__{tool}`, which contains `__` (the server part is never empty: a server
//!   id starts with a letter or digit); ours contain no `__`;
//! - hashed: `{prefix}_{hex}` with exactly 8, 16 or 32 lowercase hex digits after the last
//!   `_`; ours end in `_get`, `_put`, `_list`, `_add` and `_read`.
//!
//! Compared case-insensitively (some providers fold case) the argument is the same. The test
//! `no_server_tool_is_named_like_a_state_tool` builds names for hostile servers and tools and
//! fails if that ever stops being true. (`chat::cap`'s `switchboard__read_tool_output` has the
//! plain shape: a server named `switchboard` with a tool `read_tool_output` gets that name.)

use serde_json::{json, Map, Value};

use crate::agents::{check_key, StateEntry, StateKey, StateNote, STATE_LIMITS};
use crate::llm::ToolSpec;
use crate::store::iso_utc;

/// Read one entry.
pub const STATE_GET: &str = "switchboard_state_get";
/// Write one entry.
pub const STATE_PUT: &str = "switchboard_state_put";
/// List the keys.
pub const STATE_LIST: &str = "switchboard_state_list";
/// Add a note.
pub const NOTE_ADD: &str = "switchboard_note_add";
/// Read the notes.
pub const NOTES_READ: &str = "switchboard_notes_read";

/// Every state tool's name.
pub const STATE_TOOLS: [&str; 5] = [STATE_GET, STATE_PUT, STATE_LIST, NOTE_ADD, NOTES_READ];

/// Whether `llm_name` is one of the state tools.
pub fn is_state_tool(llm_name: &str) -> bool {
    STATE_TOOLS.contains(&llm_name)
}

fn spec(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}

/// The state tools as offered to a model.
pub fn state_tool_specs() -> Vec<ToolSpec> {
    let key = json!({
        "type": "string",
        "minLength": 1,
        "maxLength": STATE_LIMITS.key_chars,
        "pattern": "^[A-Za-z0-9._/-]+$",
        "description": "The entry's key, e.g. `findings/api-errors`."
    });
    vec![
        spec(
            STATE_GET,
            "Read the newest version of an entry of this run's shared state, which every agent \
             of the run (whatever its model) reads and writes. Returns its value, version and \
             author; version 0 when there is no such entry.",
            json!({ "key": key }),
            &["key"],
        ),
        spec(
            STATE_PUT,
            "Write an entry of this run's shared state so other agents can use it. Any JSON \
             value up to 64 KiB. Pass expected_version (the version you read, 0 for a new key) \
             to make sure you do not overwrite someone else's newer write.",
            json!({
                "key": key,
                "value": { "description": "Any JSON value." },
                "expected_version": { "type": "integer", "minimum": 0 },
            }),
            &["key", "value"],
        ),
        spec(
            STATE_LIST,
            "List the keys of this run's shared state with their newest version, author and \
             size (no values).",
            json!({}),
            &[],
        ),
        spec(
            NOTE_ADD,
            "Add a short note (up to 8 KiB) to this run's notes, which every agent of the run \
             can read.",
            json!({ "text": { "type": "string", "minLength": 1 } }),
            &["text"],
        ),
        spec(
            NOTES_READ,
            "Read this run's notes, oldest first; pass after (a note number) to read only \
             newer ones.",
            json!({ "after": { "type": "integer", "minimum": 0 } }),
            &[],
        ),
    ]
}

/// A state tool call with its arguments checked.
#[derive(Debug, PartialEq)]
pub(super) enum Call {
    Get {
        key: String,
    },
    Put {
        key: String,
        value: Value,
        expected_version: Option<u32>,
    },
    List,
    NoteAdd {
        text: String,
    },
    NotesRead {
        after: u32,
    },
}

/// `None` when `name` is not a state tool; else the call, or a sentence saying what is wrong
/// with its arguments.
pub(super) fn parse(name: &str, args: &Map<String, Value>) -> Option<Result<Call, String>> {
    let call = match name {
        STATE_GET => only(name, args, &["key"]).and_then(|()| {
            Ok(Call::Get {
                key: key(name, args)?,
            })
        }),
        STATE_PUT => only(name, args, &["key", "value", "expected_version"]).and_then(|()| {
            let value = args
                .get("value")
                .cloned()
                .ok_or_else(|| format!("{name} needs a value (any JSON)"))?;
            Ok(Call::Put {
                key: key(name, args)?,
                value,
                expected_version: number(name, args, "expected_version")?,
            })
        }),
        STATE_LIST => only(name, args, &[]).map(|()| Call::List),
        NOTE_ADD => only(name, args, &["text"]).and_then(|()| {
            Ok(Call::NoteAdd {
                text: string(name, args, "text")?,
            })
        }),
        NOTES_READ => only(name, args, &["after"]).and_then(|()| {
            Ok(Call::NotesRead {
                after: number(name, args, "after")?.unwrap_or(0),
            })
        }),
        _ => return None,
    };
    Some(call)
}

fn only(tool: &str, args: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) if allowed.is_empty() => Err(format!(
            "{tool} takes no arguments, but got {:?}",
            k.chars().take(64).collect::<String>()
        )),
        Some(k) => Err(format!(
            "{tool} has no argument {:?}; it takes {}",
            k.chars().take(64).collect::<String>(),
            allowed.join(", ")
        )),
    }
}

/// The `key` argument, checked like the store checks it (so a read of a key that could never
/// be written says why).
fn key(tool: &str, args: &Map<String, Value>) -> Result<String, String> {
    let key = string(tool, args, "key")?;
    check_key(&key).map_err(|e| e.to_string())?;
    Ok(key)
}

fn string(tool: &str, args: &Map<String, Value>, name: &str) -> Result<String, String> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(format!("{tool} needs {name} (a string)")),
        Some(other) => Err(format!("{name} must be a string, not {}", kind(other))),
    }
}

fn number(tool: &str, args: &Map<String, Value>, name: &str) -> Result<Option<u32>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("{tool}: {name} must be a whole number from 0 up, not {n}")),
        Some(other) => Err(format!(
            "{tool}: {name} must be a whole number, not {}",
            kind(other)
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The answer to a read of `key`.
pub(super) fn get_json(key: &str, entry: Option<&StateEntry>) -> String {
    let v = match entry {
        Some(e) => json!({
            "key": e.key,
            "found": true,
            "version": e.version,
            "author": e.author,
            "written_at": iso_utc(e.written_ms),
            "value": e.value,
        }),
        None => json!({ "key": key, "found": false, "version": 0 }),
    };
    v.to_string()
}

/// The answer to a listing.
pub(super) fn list_json(keys: &[StateKey]) -> String {
    let total: u64 = keys.iter().map(|k| k.bytes).sum();
    json!({
        "keys": keys.iter().map(|k| json!({
            "key": k.key,
            "version": k.version,
            "author": k.author,
            "bytes": k.bytes,
            "written_at": iso_utc(k.written_ms),
        })).collect::<Vec<_>>(),
        "total_bytes": total,
        "limits": {
            "value_bytes": STATE_LIMITS.value_bytes,
            "total_bytes": STATE_LIMITS.scope_bytes,
            "keys": STATE_LIMITS.keys,
        },
    })
    .to_string()
}

/// The answer to a read of the notes after `after`.
pub(super) fn notes_json(notes: &[StateNote], after: u32) -> String {
    json!({
        "notes": notes.iter().filter(|n| n.seq > after).map(|n| json!({
            "seq": n.seq,
            "author": n.author,
            "text": n.text,
            "written_at": iso_utc(n.written_ms),
        })).collect::<Vec<_>>(),
    })
    .to_string()
}

//! Importing peer configs: Claude Desktop, VS Code and Cursor `mcp.json` files (SP-08).
//!
//! [`import`] turns the text of a foreign file into validated [`ServerSpec`]s. It only parses:
//! it never starts a server, touches the keyring or reads another file. Literal values that look
//! like credentials leave the specs: the spec refers to a [`SecretName`] of the server's own
//! namespace and the value is handed back in [`ImportedServer::secrets`] for the host to store in
//! the keyring. A reference to any other secret (a provider key, another server's secret) is
//! never carried over as such (SE-04, see `values`). Everything that could not be carried over
//! is reported as an [`ImportNote`]; no note contains a value from the file, only names and
//! references.
//!
//! [`read_limited`] reads a file or stdin up to [`MAX_IMPORT_BYTES`] and stops there, so an
//! endless source (`/dev/zero`, a pipe) fails fast with the size error.
//!
//! The file is read leniently (comments and trailing commas, as VS Code allows) into the JSON
//! tree, then each server entry is lowered on its own: a broken entry is skipped with a note and
//! never fails the whole import.
//!
//! # Formats
//! - Claude Desktop: `{"mcpServers": {name: {command, args, env}}}`; remote `url` entries are
//!   accepted as HTTP servers.
//! - Cursor: the same `mcpServers` shape, plus `{url, headers}` remotes, `type`, `envFile` and
//!   `${env:NAME}` interpolation.
//! - VS Code (`.vscode/mcp.json`, or `settings.json` with an `mcp` object): `{"servers": {name:
//!   {type, command, args, env, envFile, cwd, url, headers}}, "inputs": [..]}` with
//!   `${input:ID}` references.
//!
//! Detection without an explicit format: a top-level `mcpServers` key means Claude or Cursor,
//! otherwise `servers` (top-level or under `mcp`) means VS Code. Claude and Cursor files share a
//! shape and are lowered the same way; a file is called Cursor when an entry uses something
//! Claude Desktop has no notion of (`type`, `headers`, `envFile`, or a `${..}` reference), and
//! Claude otherwise. The label only affects [`ImportReport::format`].

pub(crate) mod names;
mod sandbox;
mod transport;
mod urls;
mod values;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use self::names::{sanitize, strip_jsonc, Taken};
use self::transport::{local_transport, note_unknown_fields, remote_transport, transport_kind};
use self::urls::{bad_url, shown_url, url_of};
use self::values::{input_secret, vars, Field, Input, SecretNames, ServerCx, Var};
use super::{ServerSpec, SpecError, Timeouts, TransportSpec};
use crate::escape::escape_for_display as esc;
use crate::ids::{SecretName, ServerId};
use crate::redact::Secret;
use std::collections::HashSet;

/// The largest file accepted; real configs are a few kilobytes.
pub const MAX_IMPORT_BYTES: usize = 4 * 1024 * 1024;

/// A peer application's config format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForeignFormat {
    /// Claude Desktop's `claude_desktop_config.json` (`mcpServers`).
    Claude,
    /// VS Code's `.vscode/mcp.json` or the `mcp` section of `settings.json` (`servers`, `inputs`).
    Vscode,
    /// Cursor's `mcp.json` (`mcpServers`, with remote servers and `${env:..}`).
    Cursor,
}

impl fmt::Display for ForeignFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Claude => "claude",
            Self::Vscode => "vscode",
            Self::Cursor => "cursor",
        })
    }
}

/// A format name that is not one of `claude`, `vscode` (`vs-code`) or `cursor`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}; use claude, vscode or cursor")]
pub struct UnknownFormat(pub String);

impl FromStr for ForeignFormat {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "claude" | "claude-desktop" => Ok(Self::Claude),
            "vscode" | "vs-code" | "code" => Ok(Self::Vscode),
            "cursor" => Ok(Self::Cursor),
            _ => Err(UnknownFormat(esc(s))),
        }
    }
}

/// Why a file could not be imported at all. A single bad server entry is not an error: it is
/// skipped with an [`ImportNote`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The file is bigger than [`MAX_IMPORT_BYTES`].
    #[error("the file is {len} bytes long; at most {max} are accepted")]
    TooLarge {
        /// Its length in bytes (for a source read with [`read_limited`], the limit plus one:
        /// reading stopped there).
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The file could not be read.
    #[error("the file could not be read: {0}")]
    Read(String),
    /// The file is not UTF-8 text.
    #[error("the file is not UTF-8 text")]
    NotText,
    /// The text is not JSON (comments and trailing commas are accepted).
    #[error("the file is not valid JSON: {reason} (line {line}, column {column})")]
    Json {
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1.
        column: usize,
        /// What the parser expected.
        reason: String,
    },
    /// The top level is not a JSON object.
    #[error("the file's top level is not a JSON object")]
    NotAnObject,
    /// Neither `mcpServers` nor `servers` is present.
    #[error(
        "no MCP servers found: expected a \"mcpServers\" object (Claude Desktop, Cursor) or a \
         \"servers\" object (VS Code)"
    )]
    NoServers,
    /// The format was given but its key is missing.
    #[error("this is not a {format} file: it has no {key:?} object")]
    MissingServers {
        /// The format asked for.
        format: ForeignFormat,
        /// The key that format keeps its servers under.
        key: &'static str,
    },
    /// The format was given but the file is evidently another one.
    #[error("this looks like a {found} file, not {requested}; import it with --format {found}")]
    WrongFormat {
        /// The format asked for.
        requested: ForeignFormat,
        /// The format the file appears to be.
        found: ForeignFormat,
    },
    /// The servers key holds something other than an object.
    #[error("{key:?} must be an object mapping server names to servers")]
    ServersNotAnObject {
        /// The key (`mcpServers` or `servers`).
        key: &'static str,
    },
}

/// Options for [`import_with`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The file's format; `None` detects it.
    pub format: Option<ForeignFormat>,
    /// Servers the host has already: imported names avoid them (`github` becomes `github-2`),
    /// and a `${secret:<server>.<name>}` naming one of them is another server's secret.
    pub existing_servers: Vec<ServerId>,
}

/// The result of an import: servers ready to store, and what did not carry over.
#[derive(Clone, Debug)]
pub struct ImportReport {
    /// The format the file was read as.
    pub format: ForeignFormat,
    /// The imported servers, sorted by id. Each spec has passed [`ServerSpec::validate`].
    pub servers: Vec<ImportedServer>,
    /// Everything the user should know: dropped fields, skipped servers, moved secrets.
    pub notes: Vec<ImportNote>,
}

/// One imported server.
#[derive(Clone, Debug)]
pub struct ImportedServer {
    /// The validated spec. Credentials appear only as [`super::ValueSource::Secret`] references.
    pub spec: ServerSpec,
    /// Values to store in the keyring under these names before the spec is saved. References
    /// that have no value here (VS Code password inputs) come with a
    /// [`NoteKind::NeedsSecret`] note instead.
    pub secrets: Vec<(SecretName, Secret)>,
}

/// Something about the import the user should read. Never contains a secret value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportNote {
    /// The server concerned: its new id when it was imported, the name from the file (escaped
    /// for display) when it was skipped, `None` for the file as a whole.
    pub server: Option<String>,
    /// What happened.
    pub kind: NoteKind,
    /// A sentence for the user; names in it are escaped for display.
    pub message: String,
}

/// The kind of an [`ImportNote`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NoteKind {
    /// A field Switchboard does not support was left out (`envFile`, `autoApprove`, ...).
    DroppedField,
    /// A whole server entry could not be imported.
    SkippedServer,
    /// A server got a different id (invalid characters, or the name was taken).
    Renamed,
    /// A literal credential moved to the keyring; the spec refers to it by name.
    SecretMoved,
    /// The spec refers to a secret that has no value yet;
    /// `switchboard secret set --server SERVER NAME`.
    NeedsSecret,
    /// The file referred to a secret outside the server's own namespace (a provider's key,
    /// another server's secret); it was not bound (SE-04).
    RefusedReference,
    /// Something that looks like a credential had to stay in the config (an argument or a URL).
    SecretNotMovable,
    /// An `${env:NAME}` reference was kept as text; Switchboard does not expand it.
    EnvReference,
    /// Another `${..}` reference (`${workspaceFolder}`, an input without a default) was kept
    /// as text or dropped.
    UnresolvedVariable,
    /// A legacy SSE server was imported as Streamable HTTP.
    TransportChanged,
    /// A field was translated: `disabled`, `timeout`, the default answer of an input.
    Mapped,
    /// Something about the file as a whole (an ignored second server list).
    Detection,
}

/// Imports `text` as `format`, or detects the format when `None`.
pub fn import(text: &str, format: Option<ForeignFormat>) -> Result<ImportReport, ImportError> {
    import_with(
        text,
        &ImportOptions {
            format,
            ..ImportOptions::default()
        },
    )
}

/// Reads at most [`MAX_IMPORT_BYTES`] from `source` (a file, stdin): a bigger or endless
/// source fails with [`ImportError::TooLarge`] after reading one byte past the limit.
pub fn read_limited(source: impl std::io::Read) -> Result<String, ImportError> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    source
        .take(MAX_IMPORT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ImportError::Read(e.to_string()))?;
    if bytes.len() > MAX_IMPORT_BYTES {
        return Err(ImportError::TooLarge {
            len: bytes.len(),
            max: MAX_IMPORT_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| ImportError::NotText)
}

/// Imports `text` with [`ImportOptions`].
pub fn import_with(text: &str, opts: &ImportOptions) -> Result<ImportReport, ImportError> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(ImportError::TooLarge {
            len: text.len(),
            max: MAX_IMPORT_BYTES,
        });
    }
    let clean = strip_jsonc(text);
    let root: Value = serde_json::from_str(&clean).map_err(|e| {
        let full = e.to_string();
        let location = format!(" at line {} column {}", e.line(), e.column());
        ImportError::Json {
            line: e.line(),
            column: e.column(),
            reason: full.strip_suffix(&location).unwrap_or(&full).to_owned(),
        }
    })?;
    let Value::Object(root) = root else {
        return Err(ImportError::NotAnObject);
    };
    let raw = RawFile::locate(&root, opts.format)?;
    Ok(raw.lower(opts))
}

/// The file, located but not yet lowered: the server entries and the inputs.
struct RawFile<'a> {
    format: ForeignFormat,
    servers: &'a Map<String, Value>,
    /// VS Code's file-wide sandbox settings (`sandbox`), for its `sandboxEnabled` servers.
    sandbox: Option<&'a Value>,
    inputs: BTreeMap<String, Input>,
    notes: Vec<ImportNote>,
}

impl<'a> RawFile<'a> {
    fn locate(
        root: &'a Map<String, Value>,
        asked: Option<ForeignFormat>,
    ) -> Result<Self, ImportError> {
        let mcp = root.get("mcpServers");
        let vs_section = match root.get("servers") {
            Some(_) => Some(root),
            None => root
                .get("mcp")
                .and_then(Value::as_object)
                .filter(|m| m.contains_key("servers")),
        };
        let vs = vs_section.and_then(|s| s.get("servers"));
        let claude_like = |m: &Value| match m.as_object() {
            Some(servers) if looks_like_cursor(servers) => ForeignFormat::Cursor,
            _ => ForeignFormat::Claude,
        };
        let format = match (asked, mcp, vs) {
            (Some(ForeignFormat::Vscode), _, Some(_)) => ForeignFormat::Vscode,
            (Some(ForeignFormat::Vscode), Some(m), None) => {
                return Err(ImportError::WrongFormat {
                    requested: ForeignFormat::Vscode,
                    found: claude_like(m),
                })
            }
            (Some(f @ (ForeignFormat::Claude | ForeignFormat::Cursor)), Some(_), _) => f,
            (Some(f), None, Some(_)) => {
                return Err(ImportError::WrongFormat {
                    requested: f,
                    found: ForeignFormat::Vscode,
                })
            }
            (Some(f), None, None) => {
                let key = if f == ForeignFormat::Vscode {
                    "servers"
                } else {
                    "mcpServers"
                };
                return Err(ImportError::MissingServers { format: f, key });
            }
            (None, Some(m), _) => claude_like(m),
            (None, None, Some(_)) => ForeignFormat::Vscode,
            (None, None, None) => return Err(ImportError::NoServers),
        };
        let (key, servers) = if format == ForeignFormat::Vscode {
            ("servers", vs)
        } else {
            ("mcpServers", mcp)
        };
        let servers = servers
            .and_then(Value::as_object)
            .ok_or(ImportError::ServersNotAnObject { key })?;
        let mut notes = Vec::new();
        if format != ForeignFormat::Vscode && vs.is_some() {
            notes.push(ImportNote {
                server: None,
                kind: NoteKind::Detection,
                message: "the file also has a VS Code \"servers\" list; it was ignored, import \
                          it again with --format vscode"
                    .to_owned(),
            });
        }
        let inputs = match (format, vs_section) {
            (ForeignFormat::Vscode, Some(section)) => {
                read_inputs(section.get("inputs"), &mut notes)
            }
            _ => BTreeMap::new(),
        };
        let sandbox = vs_section
            .filter(|_| format == ForeignFormat::Vscode)
            .and_then(|s| s.get("sandbox"));
        Ok(Self {
            format,
            servers,
            sandbox,
            inputs,
            notes,
        })
    }

    fn lower(self, opts: &ImportOptions) -> ImportReport {
        let mut notes = self.notes;
        // Names that are another server to any entry: the host's and the file's.
        let all_names: HashSet<String> = opts
            .existing_servers
            .iter()
            .map(|s| s.as_str().to_ascii_lowercase())
            .chain(self.servers.keys().map(|k| k.to_ascii_lowercase()))
            .collect();

        // Valid names claim theirs first, so `a b` cannot take `a-b` from a real `a-b`.
        let mut taken = Taken::new(opts.existing_servers.iter().map(|s| s.as_str().to_owned()));
        let mut ids: BTreeMap<&str, Option<ServerId>> = BTreeMap::new();
        for sanitize_pass in [false, true] {
            for name in self.servers.keys() {
                if ServerId::new(name).is_err() != sanitize_pass {
                    continue;
                }
                let base = if sanitize_pass {
                    sanitize(name, ServerId::MAX_LEN, "server")
                } else {
                    name.clone()
                };
                let id = ServerId::new(taken.claim(&base, ServerId::MAX_LEN)).ok();
                ids.insert(name, id);
            }
        }

        let mut servers = Vec::new();
        for (raw_name, entry) in self.servers {
            let Some(Some(id)) = ids.get(raw_name.as_str()).cloned() else {
                notes.push(skipped(
                    raw_name,
                    "no valid server name could be made from it",
                ));
                continue;
            };
            let renamed = id.as_str() != raw_name;
            let mut others = all_names.clone();
            others.remove(&raw_name.to_ascii_lowercase());
            others.remove(&id.as_str().to_ascii_lowercase());
            // Names the entry itself refers to are off limits for derived names.
            let mut names = SecretNames::default();
            for_each_string(entry, &mut |s| {
                for (_, var) in vars(s) {
                    match var {
                        Var::Secret(name) => names.reserve(name),
                        Var::Input(input) => {
                            if let Some(n) = input_secret(input) {
                                names.reserve(n.as_str());
                            }
                        }
                        Var::Env(_) | Var::Other(_) => {}
                    }
                }
            });
            let mut cx = ServerCx {
                id,
                raw_name,
                inputs: &self.inputs,
                others: &others,
                names,
                notes: Vec::new(),
                secrets: Vec::new(),
            };
            if renamed {
                let why = if ServerId::new(raw_name).is_ok() {
                    "the name is already in use"
                } else {
                    "server names may only use letters, digits, '-', '_' and '.'"
                };
                let message = format!("renamed from \"{}\" to {}: {why}", esc(raw_name), cx.id);
                cx.note(NoteKind::Renamed, message);
            }
            match lower_server(&mut cx, entry) {
                Ok(mut spec) => {
                    if let (TransportSpec::Stdio(s), Some(obj)) =
                        (&mut spec.transport, entry.as_object())
                    {
                        s.sandbox = sandbox::lower(&mut cx, obj, self.sandbox);
                    }
                    notes.append(&mut cx.notes);
                    servers.push(ImportedServer {
                        spec,
                        secrets: cx.secrets,
                    });
                }
                Err(why) => notes.push(skipped(raw_name, &why)),
            }
        }
        servers.sort_by(|a, b| a.spec.id.cmp(&b.spec.id));
        ImportReport {
            format: self.format,
            servers,
            notes,
        }
    }
}

fn skipped(raw_name: &str, why: &str) -> ImportNote {
    ImportNote {
        server: Some(esc(raw_name)),
        kind: NoteKind::SkippedServer,
        message: format!("server \"{}\" was not imported: {why}", esc(raw_name)),
    }
}

/// Whether a `mcpServers` map uses something only Cursor (not Claude Desktop) understands.
fn looks_like_cursor(servers: &Map<String, Value>) -> bool {
    servers.values().filter_map(Value::as_object).any(|s| {
        let mut interpolated = false;
        s.values().for_each(|v| {
            for_each_string(v, &mut |t| interpolated |= !vars(t).is_empty());
        });
        interpolated
            || ["type", "headers", "envFile"]
                .iter()
                .any(|k| s.contains_key(*k))
    })
}

fn for_each_string(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| for_each_string(x, f)),
        Value::Object(o) => o.values().for_each(|x| for_each_string(x, f)),
        _ => {}
    }
}

fn read_inputs(v: Option<&Value>, notes: &mut Vec<ImportNote>) -> BTreeMap<String, Input> {
    let mut out = BTreeMap::new();
    for (i, item) in v
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            notes.push(ImportNote {
                server: None,
                kind: NoteKind::DroppedField,
                message: format!("input {} has no \"id\" and was ignored", i + 1),
            });
            continue;
        };
        out.insert(
            id.to_owned(),
            Input {
                password: item.get("password").and_then(Value::as_bool) == Some(true),
                default: item
                    .get("default")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
        );
    }
    out
}

/// Fields every format may carry that we read; anything else is reported as dropped.
const KNOWN: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "disabled",
    "timeout",
    "sandboxEnabled",
];

/// Lowers one server entry. `Err` is the reason it is skipped (no values in it).
fn lower_server(cx: &mut ServerCx<'_>, entry: &Value) -> Result<ServerSpec, String> {
    let obj = entry
        .as_object()
        .ok_or_else(|| "its entry is not an object".to_owned())?;
    note_unknown_fields(cx, obj);
    let (kind, remote) = transport_kind(cx, obj)?;
    let transport = if remote {
        remote_transport(cx, obj, kind.as_deref())?
    } else {
        local_transport(cx, obj)?
    };
    let enabled = match obj.get("disabled") {
        None | Some(Value::Bool(false)) => true,
        Some(Value::Bool(true)) => {
            cx.note(
                NoteKind::Mapped,
                "\"disabled\": true was kept: the server is imported disabled".to_owned(),
            );
            false
        }
        Some(_) => {
            cx.note(
                NoteKind::DroppedField,
                "field \"disabled\" was dropped: it is not true or false".to_owned(),
            );
            true
        }
    };
    let mut timeouts = Timeouts::default();
    if let Some(t) = obj.get("timeout") {
        match timeout_secs(t) {
            Some(secs) => {
                timeouts.request_secs = secs;
                cx.note(
                    NoteKind::Mapped,
                    format!("\"timeout\" became a request timeout of {secs} s"),
                );
            }
            None => cx.note(
                NoteKind::DroppedField,
                "field \"timeout\" was dropped: it is not a usable number of seconds or \
                 milliseconds"
                    .to_owned(),
            ),
        }
    }

    let spec = ServerSpec {
        id: cx.id.clone(),
        transport,
        enabled,
        timeouts,
    };
    spec.validate().map_err(|e| match &e {
        SpecError::BadUrl { url, .. } => bad_url(url, &e),
        // The error's own text quotes the whole URL, query and all.
        SpecError::CleartextSecret { header, .. } => format!(
            "its header `{}` carries a secret, and its URL {} is plain http to a host that is \
             not this machine; use https (plain http is allowed only to localhost)",
            esc(header),
            shown_url(url_of(&spec)).map_or_else(String::new, |u| esc(&u))
        ),
        other => format!("it is not valid: {other}"),
    })?;
    Ok(spec)
}

fn named_values(cx: &mut ServerCx<'_>, v: Option<&Value>, field: Field) -> Vec<super::NamedValue> {
    let key = if field == Field::Env {
        "env"
    } else {
        "headers"
    };
    let map = match v {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Object(m)) => m,
        Some(_) => {
            cx.note(
                NoteKind::DroppedField,
                format!("field \"{key}\" was dropped: it is not an object"),
            );
            return Vec::new();
        }
    };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (name, raw) in map {
        if !seen.insert(name.to_ascii_lowercase()) {
            cx.note(
                NoteKind::DroppedField,
                format!(
                    "\"{}\" in \"{key}\" was dropped: it repeats another name",
                    esc(name)
                ),
            );
            continue;
        }
        out.extend(cx.named(field, name, raw));
    }
    out
}

/// Reads a `timeout`: seconds, or milliseconds when 1000 or more (Gemini CLI writes
/// milliseconds, Cline seconds up to 3600). `None` when it is not a positive number that fits.
fn timeout_secs(v: &Value) -> Option<u64> {
    let n = v.as_f64().filter(|n| n.is_finite() && *n > 0.0)?;
    let secs = if n >= 1000.0 { n / 1000.0 } else { n };
    let secs = secs.ceil();
    (1.0..=86_400.0).contains(&secs).then_some(secs as u64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests;

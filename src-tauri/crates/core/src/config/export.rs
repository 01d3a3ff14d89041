//! Exporting servers to Claude Desktop, VS Code and Cursor files.
//!
//! [`export`] writes the servers in a peer's format as pretty JSON. It never writes a secret
//! value: a keyring reference becomes whatever the target can resolve by itself (a VS Code
//! password input, a Cursor `${env:..}` variable), or a visible `${secret:NAME}` placeholder for
//! Claude Desktop, which has no interpolation. Every such substitution, and everything the
//! target cannot express, is explained in [`ExportOutput::notes`].
//!
//! The output is deterministic: servers by id, `env`/`headers` keys sorted, VS Code inputs by id.
//! It is built from typed structs rather than a JSON tree, so field order does not depend on
//! serde_json's `preserve_order` feature. An export imported again with
//! [`super::import::import`] gives back the same specs, secret references included, except for
//! what a format cannot hold (Claude and Cursor: `cwd`; VS Code: `disabled`; all: timeouts; and
//! on Cursor, a secret behind a variable whose name does not look like a credential).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;

use super::import::ForeignFormat;
use super::{is_env_name, NamedValue, ServerSpec, Timeouts, TransportSpec, ValueSource};
use crate::config::credentials::{binding_words, looks_like_credential};
use crate::escape::escape_for_display;
use crate::ids::SecretName;

/// An exported file and what the user must know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportOutput {
    /// The file's content: pretty-printed JSON ending in a newline.
    pub text: String,
    /// One sentence per thing that did not carry over as is, in a stable order.
    pub notes: Vec<String>,
}

/// Writes `specs` in `format`. Secrets are only ever referenced, never written.
pub fn export(specs: &[ServerSpec], format: ForeignFormat) -> ExportOutput {
    let mut sorted: Vec<&ServerSpec> = specs.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut w = Writer {
        format,
        notes: Vec::new(),
        inputs: BTreeSet::new(),
        env_names: EnvNames::default(),
    };
    let servers: BTreeMap<String, Entry> = sorted
        .into_iter()
        .map(|s| (s.id.to_string(), w.entry(s)))
        .collect();
    let json = match format {
        ForeignFormat::Vscode => {
            let inputs = w
                .inputs
                .iter()
                .map(|name| VsInput {
                    kind: "promptString",
                    id: name.to_string(),
                    description: format!("Switchboard secret {name}"),
                    password: true,
                })
                .collect();
            serde_json::to_string_pretty(&VsFile { inputs, servers })
        }
        ForeignFormat::Claude | ForeignFormat::Cursor => {
            serde_json::to_string_pretty(&McpServersFile {
                mcp_servers: servers,
            })
        }
    };
    let text = match json {
        Ok(mut t) => {
            t.push('\n');
            t
        }
        // Unreachable with these types (string keys, no custom serializers); reported rather
        // than unwrapped so a future field cannot turn into a panic.
        Err(e) => {
            w.notes.push(format!("the file could not be written: {e}"));
            String::new()
        }
    };
    ExportOutput {
        text,
        notes: w.notes,
    }
}

#[derive(Serialize)]
struct McpServersFile {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, Entry>,
}

#[derive(Serialize)]
struct VsFile {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    inputs: Vec<VsInput>,
    servers: BTreeMap<String, Entry>,
}

#[derive(Serialize)]
struct VsInput {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    description: String,
    password: bool,
}

/// One server entry; the union of what the three formats use, empty parts left out.
#[derive(Serialize, Default)]
struct Entry {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Vec<String>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    disabled: bool,
}

struct Writer {
    format: ForeignFormat,
    notes: Vec<String>,
    /// Secrets that became VS Code inputs.
    inputs: BTreeSet<SecretName>,
    env_names: EnvNames,
}

impl Writer {
    fn entry(&mut self, spec: &ServerSpec) -> Entry {
        let id = &spec.id;
        let mut e = Entry::default();
        match &spec.transport {
            TransportSpec::Stdio(s) => {
                e.kind = (self.format == ForeignFormat::Vscode).then_some("stdio");
                e.command = Some(s.command.clone());
                e.args = Some(s.args.clone());
                e.env = self.values(spec, Kind::Env, &s.env);
                if s.sandbox.enabled {
                    // SP-07: say so rather than let the other app run it with full rights unnoticed.
                    self.notes.push(format!(
                        "{id}: it runs sandboxed here ({}); the sandbox was not written, so {} \
                         runs it unsandboxed unless you set that up there",
                        s.sandbox.summary(),
                        app(self.format)
                    ));
                }
                if let Some(cwd) = &s.cwd {
                    match (self.format, cwd.to_str()) {
                        (ForeignFormat::Vscode, Some(c)) => e.cwd = Some(c.to_owned()),
                        (ForeignFormat::Vscode, None) => self.notes.push(format!(
                            "{id}: the working directory is not valid UTF-8 and was left out"
                        )),
                        (f, _) => self.notes.push(format!(
                            "{id}: {} has no working-directory setting; the server will start \
                             in the app's directory (was {})",
                            app(f),
                            escape_for_display(&cwd.to_string_lossy())
                        )),
                    }
                }
            }
            TransportSpec::Http(h) => {
                e.kind = (self.format == ForeignFormat::Vscode).then_some("http");
                e.url = Some(h.url.clone());
                e.headers = self.values(spec, Kind::Header, &h.headers);
                if self.format == ForeignFormat::Claude {
                    self.notes.push(format!(
                        "{id}: Claude Desktop adds remote servers through Settings > Connectors \
                         and may ignore this \"url\" entry"
                    ));
                }
            }
        }
        if !spec.enabled {
            if self.format == ForeignFormat::Vscode {
                self.notes.push(format!(
                    "{id}: VS Code has no \"disabled\" setting; the server is written enabled, \
                     disable it in VS Code"
                ));
            } else {
                e.disabled = true;
                self.notes.push(format!(
                    "{id}: written with \"disabled\": true, which {} may ignore",
                    app(self.format)
                ));
            }
        }
        if spec.timeouts != Timeouts::default() {
            self.notes.push(format!(
                "{id}: {} has no per-server timeouts; the request timeout of {} s and start-up \
                 timeout of {} s were not written",
                app(self.format),
                spec.timeouts.request_secs,
                spec.timeouts.init_secs
            ));
        }
        e
    }

    /// Env vars or headers as the target writes them, secrets replaced by references.
    fn values(
        &mut self,
        spec: &ServerSpec,
        kind: Kind,
        values: &[NamedValue],
    ) -> BTreeMap<String, String> {
        let id = &spec.id;
        let mut out = BTreeMap::new();
        for v in values {
            let text = match &v.value {
                ValueSource::Plain(p) if looks_like_credential(&v.name, p) => {
                    self.notes.push(format!(
                        "{id}: the {} {} looks like a credential kept as plain text by an \
                         earlier Switchboard; it was left empty (edit the server so it moves to \
                         the keyring, then set it in {})",
                        kind.noun(),
                        v.name,
                        app(self.format)
                    ));
                    String::new()
                }
                ValueSource::Bound(b) => {
                    self.notes.push(format!(
                        "{id}: the {} {} uses {}; bindings exist only in Switchboard, so the \
                         file has the placeholder \"${{secret:{b}}}\": replace it with the value",
                        kind.noun(),
                        v.name,
                        binding_words(b)
                    ));
                    format!("${{secret:{b}}}")
                }
                ValueSource::Plain(p) => {
                    if self.format != ForeignFormat::Claude && p.contains("${") {
                        self.notes.push(format!(
                            "{id}: the {} {} contains \"${{\", which {} will try to expand",
                            kind.noun(),
                            v.name,
                            app(self.format)
                        ));
                    }
                    p.clone()
                }
                ValueSource::Secret(name) => self.secret(spec, kind, &v.name, name),
            };
            out.insert(v.name.clone(), text);
        }
        out
    }

    fn secret(&mut self, spec: &ServerSpec, kind: Kind, field: &str, name: &SecretName) -> String {
        let id = &spec.id;
        match self.format {
            ForeignFormat::Vscode => {
                if self.inputs.insert(name.clone()) {
                    self.notes.push(format!(
                        "VS Code will prompt for input \"{name}\" (the value of Switchboard \
                         secret {name}) when a server that uses it starts"
                    ));
                }
                format!("${{input:{name}}}")
            }
            ForeignFormat::Cursor => {
                let preferred = (kind == Kind::Env).then_some(field);
                let (var, fresh) = self.env_names.for_secret(name, preferred);
                if fresh {
                    self.notes.push(format!(
                        "environment variable {var} must hold the value of Switchboard secret \
                         {name} when Cursor starts (used by {id})"
                    ));
                }
                format!("${{env:{var}}}")
            }
            ForeignFormat::Claude => {
                self.notes.push(format!(
                    "{id}: Claude Desktop cannot reference secrets; replace \"${{secret:{name}}}\" \
                     in the {} {field} with the value of secret {name}",
                    kind.noun()
                ));
                format!("${{secret:{name}}}")
            }
        }
    }
}

/// Whether a value is an environment variable or a header.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Env,
    Header,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Env => "environment variable",
            Kind::Header => "header",
        }
    }
}

fn app(format: ForeignFormat) -> &'static str {
    match format {
        ForeignFormat::Claude => "Claude Desktop",
        ForeignFormat::Vscode => "VS Code",
        ForeignFormat::Cursor => "Cursor",
    }
}

/// Environment variable names standing for secrets in a Cursor file, one per secret.
#[derive(Default)]
struct EnvNames {
    by_secret: BTreeMap<SecretName, String>,
    taken: HashSet<String>,
}

impl EnvNames {
    /// The variable for `secret` and whether it is new. Prefers `preferred` (the env var the
    /// secret feeds, such as `GITHUB_TOKEN`, which Cursor users often have set already), else
    /// a name derived from the secret (`remote.Authorization` -> `REMOTE_AUTHORIZATION`).
    fn for_secret(&mut self, secret: &SecretName, preferred: Option<&str>) -> (String, bool) {
        if let Some(v) = self.by_secret.get(secret) {
            return (v.clone(), false);
        }
        let derived: String = secret
            .as_str()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        let derived = if is_env_name(&derived) {
            derived
        } else {
            format!("_{derived}")
        };
        let mut var = match preferred {
            Some(p) if is_env_name(p) && !self.taken.contains(p) => p.to_owned(),
            _ => derived.clone(),
        };
        let mut n = 2;
        while self.taken.contains(&var) {
            var = format!("{derived}_{n}");
            n += 1;
        }
        self.taken.insert(var.clone());
        self.by_secret.insert(secret.clone(), var.clone());
        (var, true)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::config::import::{import, NoteKind};
    use crate::config::{HttpSpec, StdioSpec};
    use crate::ids::ServerId;
    use serde_json::{json, Value};

    fn nv(name: &str, v: &str) -> NamedValue {
        NamedValue {
            name: name.into(),
            value: ValueSource::parse_cli(v).unwrap(),
        }
    }

    fn stdio_spec(id: &str, env: Vec<NamedValue>) -> ServerSpec {
        ServerSpec {
            id: ServerId::new(id).unwrap(),
            transport: TransportSpec::Stdio(StdioSpec {
                command: "npx".into(),
                args: vec!["-y".into(), "@modelcontextprotocol/server-github".into()],
                env,
                cwd: None,
                sandbox: Default::default(),
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        }
    }

    fn http_spec(id: &str, headers: Vec<NamedValue>) -> ServerSpec {
        ServerSpec {
            id: ServerId::new(id).unwrap(),
            transport: TransportSpec::Http(HttpSpec {
                url: "https://mcp.example.com/mcp".into(),
                headers,
                auth: None,
                allow_insecure: false,
            }),
            enabled: true,
            timeouts: Timeouts::default(),
        }
    }

    /// Servers whose secret names follow the importer's `<server>.<field>` convention.
    fn specs() -> Vec<ServerSpec> {
        let mut weather = stdio_spec("weather", vec![nv("LOG_LEVEL", "debug")]);
        weather.enabled = false;
        vec![
            stdio_spec(
                "github",
                vec![
                    nv("GITHUB_TOKEN", "secret:github.GITHUB_TOKEN"),
                    nv("LOG_LEVEL", "info"),
                ],
            ),
            http_spec(
                "remote",
                vec![nv("Authorization", "secret:remote.Authorization")],
            ),
            weather,
        ]
    }

    fn parse(out: &ExportOutput) -> Value {
        assert!(out.text.ends_with("}\n"));
        serde_json::from_str(&out.text).unwrap()
    }

    #[test]
    fn claude_writes_placeholders_and_explains_them() {
        let out = export(&specs(), ForeignFormat::Claude);
        let v = parse(&out);
        assert_eq!(
            v,
            json!({"mcpServers": {
                "github": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": {"GITHUB_TOKEN": "${secret:github.GITHUB_TOKEN}", "LOG_LEVEL": "info"}
                },
                "remote": {
                    "url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "${secret:remote.Authorization}"}
                },
                "weather": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": {"LOG_LEVEL": "debug"},
                    "disabled": true
                }
            }})
        );
        let notes = out.notes.join("\n");
        assert!(
            notes.contains("replace \"${secret:github.GITHUB_TOKEN}\""),
            "{notes}"
        );
        assert!(notes.contains("Connectors"), "{notes}");
        assert!(
            notes.contains("weather: written with \"disabled\": true"),
            "{notes}"
        );
    }

    #[test]
    fn vscode_turns_secrets_into_password_inputs() {
        let mut list = specs();
        list.push(stdio_spec(
            "other",
            vec![nv("TOKEN", "secret:github.GITHUB_TOKEN")],
        ));
        if let TransportSpec::Stdio(s) = &mut list[0].transport {
            s.cwd = Some("/work/project".into());
        }
        let out = export(&list, ForeignFormat::Vscode);
        let v = parse(&out);
        assert_eq!(
            v["inputs"],
            json!([
                {"type": "promptString", "id": "github.GITHUB_TOKEN",
                 "description": "Switchboard secret github.GITHUB_TOKEN", "password": true},
                {"type": "promptString", "id": "remote.Authorization",
                 "description": "Switchboard secret remote.Authorization", "password": true}
            ])
        );
        let gh = &v["servers"]["github"];
        assert_eq!(gh["type"], "stdio");
        assert_eq!(gh["cwd"], "/work/project");
        assert_eq!(gh["env"]["GITHUB_TOKEN"], "${input:github.GITHUB_TOKEN}");
        assert_eq!(
            v["servers"]["other"]["env"]["TOKEN"],
            "${input:github.GITHUB_TOKEN}"
        );
        assert_eq!(v["servers"]["remote"]["type"], "http");
        assert_eq!(
            v["servers"]["remote"]["headers"]["Authorization"],
            "${input:remote.Authorization}"
        );
        assert!(v["servers"]["weather"].get("disabled").is_none());
        assert!(out
            .notes
            .iter()
            .any(|n| n.starts_with("weather: VS Code has no \"disabled\"")));
        let keys: Vec<&String> = v["servers"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["github", "other", "remote", "weather"]);
    }

    #[test]
    fn cursor_uses_environment_variables() {
        let mut list = specs();
        // A second secret behind the same variable name needs its own variable.
        list.push(stdio_spec(
            "work",
            vec![nv("GITHUB_TOKEN", "secret:work.GITHUB_TOKEN")],
        ));
        if let TransportSpec::Stdio(s) = &mut list[0].transport {
            s.cwd = Some("/work/project".into());
        }
        list[1].timeouts.request_secs = 5;
        let out = export(&list, ForeignFormat::Cursor);
        let v = parse(&out);
        let s = &v["mcpServers"];
        assert_eq!(s["github"]["env"]["GITHUB_TOKEN"], "${env:GITHUB_TOKEN}");
        assert_eq!(s["work"]["env"]["GITHUB_TOKEN"], "${env:WORK_GITHUB_TOKEN}");
        assert_eq!(
            s["remote"]["headers"]["Authorization"],
            "${env:REMOTE_AUTHORIZATION}"
        );
        assert_eq!(s["remote"]["url"], "https://mcp.example.com/mcp");
        assert!(s["remote"].get("type").is_none());
        assert!(s["github"].get("cwd").is_none());
        let notes = out.notes.join("\n");
        assert!(
            notes.contains("environment variable REMOTE_AUTHORIZATION must hold"),
            "{notes}"
        );
        assert!(
            notes.contains("github: Cursor has no working-directory setting"),
            "{notes}"
        );
        assert!(
            notes.contains("remote: Cursor has no per-server timeouts"),
            "{notes}"
        );
    }

    #[test]
    fn output_is_stable() {
        let mut reversed = specs();
        reversed.reverse();
        for f in [
            ForeignFormat::Claude,
            ForeignFormat::Vscode,
            ForeignFormat::Cursor,
        ] {
            assert_eq!(export(&specs(), f), export(&reversed, f));
        }
        assert_eq!(
            export(&[], ForeignFormat::Vscode).text,
            "{\n  \"servers\": {}\n}\n"
        );
    }

    fn round_trip(format: ForeignFormat, expected: Vec<ServerSpec>) {
        let out = export(&specs(), format);
        let r = import(&out.text, Some(format)).unwrap();
        let got: Vec<ServerSpec> = r.servers.iter().map(|s| s.spec.clone()).collect();
        assert_eq!(got, expected, "{}\n{:#?}", out.text, r.notes);
        // Nothing was a literal value: no secret moved, so nothing would be written anew.
        assert!(r.servers.iter().all(|s| s.secrets.is_empty()));
        assert!(r.notes.iter().all(|n| n.kind != NoteKind::SecretMoved));
    }

    #[test]
    fn claude_round_trip_keeps_secret_refs() {
        round_trip(ForeignFormat::Claude, specs());
    }

    #[test]
    fn cursor_round_trip_keeps_secret_refs() {
        // Cursor files carry `${env:..}` references, which come back as secrets of the server's
        // own namespace named after the field.
        let mut expected = specs();
        expected[0].values_mut()[0] = nv("GITHUB_TOKEN", "secret:GITHUB_TOKEN");
        expected[1].values_mut()[0] = nv("Authorization", "secret:Authorization");
        round_trip(ForeignFormat::Cursor, expected);
    }

    #[test]
    fn vscode_round_trip_keeps_secret_refs() {
        let mut expected = specs();
        expected[2].enabled = true; // VS Code cannot say "disabled".
        round_trip(ForeignFormat::Vscode, expected);
    }
}

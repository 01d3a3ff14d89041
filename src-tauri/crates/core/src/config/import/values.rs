//! Values inside one foreign server entry: variable references (`${input:..}`, `${env:..}`,
//! `${workspaceFolder}`, our own `${secret:..}`), literal secrets that move to the keyring, and
//! credentials that cannot move (arguments, URLs) and are only reported.
//!
//! Every secret an imported server gets lives in its own namespace (SE-04). A `${secret:..}`
//! that names anything else (a provider's key, `provider.openai` in the old layout, or a secret
//! of another server) is never bound: the value becomes an unset secret of the server itself
//! and a note says why, and how the person can bind it on purpose when approving the server.
//!
//! Invariant: no note built here contains a value from the file, only names (escaped for
//! display) and references. That is what lets the host print and store notes freely.

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

use super::names::{sanitize, Taken};
use super::{ImportNote, NoteKind};
use crate::config::credentials::{
    contains_secret, credential_arg, credential_query, looks_secret, own_name,
};
use crate::config::{is_env_name, is_header_name, Binding, NamedValue, ValueSource};
use crate::escape::escape_for_display as esc;
use crate::ids::{SecretName, ServerId};
use crate::redact::{name_looks_secret, value_looks_secret, Secret};

/// A VS Code `inputs[]` entry, reduced to what import needs.
#[derive(Clone, Debug, Default)]
pub(super) struct Input {
    /// `"password": true`: VS Code prompts with a masked field and keeps the answer secret.
    pub password: bool,
    /// The default answer, if the input has one.
    pub default: Option<String>,
}

/// One `${...}` reference inside a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Var<'a> {
    /// `${input:ID}` (VS Code).
    Input(&'a str),
    /// `${env:NAME}` (VS Code, Cursor), or `${NAME}` / `${NAME:-default}` in upper case
    /// (Claude Code's `.mcp.json`).
    Env(&'a str),
    /// `${secret:NAME}`, the placeholder our Claude export writes.
    Secret(&'a str),
    /// Anything else (`${workspaceFolder}`, `${userHome}`, `${config:..}`).
    Other(&'a str),
}

/// Every `${...}` in `s`, with its byte range, in order.
pub(super) fn vars(s: &str) -> Vec<(Range<usize>, Var<'_>)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(start) = s[from..].find("${").map(|p| from + p) {
        let Some(len) = s[start + 2..].find('}') else {
            break;
        };
        let end = start + 2 + len + 1;
        let inner = &s[start + 2..end - 1];
        let var = if let Some(id) = inner.strip_prefix("input:") {
            Var::Input(id)
        } else if let Some(name) = inner.strip_prefix("env:") {
            Var::Env(name)
        } else if let Some(name) = inner.strip_prefix("secret:") {
            Var::Secret(name)
        } else {
            let name = inner.split_once(":-").map_or(inner, |(n, _)| n);
            if is_env_name(name) && !name.chars().any(|c| c.is_ascii_lowercase()) {
                Var::Env(name)
            } else {
                Var::Other(inner)
            }
        };
        out.push((start..end, var));
        from = end;
    }
    out
}

/// Hands out secret names within one server's namespace: derived names never reuse a name the
/// entry refers to, so two values of one server never share a secret.
#[derive(Debug, Default)]
pub(super) struct SecretNames {
    taken: Taken,
}

impl SecretNames {
    /// Keeps `name` (referenced by the entry itself) away from derived names.
    pub(super) fn reserve(&mut self, name: &str) {
        self.taken.reserve(name);
    }

    /// A new, unused name for `field` (the field name itself when it is free and valid).
    pub(super) fn fresh(&mut self, field: &str) -> Option<SecretName> {
        own_name(field, &mut self.taken)
    }
}

/// What a `${secret:X}` of an imported file names.
enum SecretRef {
    /// A secret of the server's own namespace.
    Own(SecretName),
    /// Something outside it, described for the note, with the binding that would use it.
    Foreign {
        what: String,
        binding: Option<Binding>,
    },
}

/// The secret that stands for VS Code input `id`. Shared by every use of the input on purpose:
/// one prompt in VS Code is one secret here, set once.
pub(super) fn input_secret(id: &str) -> Option<SecretName> {
    SecretName::new(id)
        .or_else(|_| SecretName::new(sanitize(id, SecretName::MAX_LEN, "input")))
        .ok()
}

/// Which kind of named value is being lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    /// An `env` entry of a stdio server.
    Env,
    /// A `headers` entry of a remote server.
    Header,
}

impl Field {
    fn describe(self, name: &str) -> String {
        match self {
            Field::Env => format!("environment variable `{}`", esc(name)),
            Field::Header => format!("header `{}`", esc(name)),
        }
    }
}

/// Lowering state for one server. Notes and secrets are collected here and only reach the
/// report if the whole server is imported, so a skipped server leaves no stray secret behind.
pub(super) struct ServerCx<'a> {
    /// The server's final id.
    pub id: ServerId,
    /// The server's name in the file.
    pub raw_name: &'a str,
    /// The file's inputs by id.
    pub inputs: &'a BTreeMap<String, Input>,
    /// Servers that exist (in the host or elsewhere in the file) besides this one, lower case:
    /// a `${secret:<server>.<name>}` naming one of them refers to another server's secret.
    pub others: &'a std::collections::HashSet<String>,
    /// Secret names of this server's namespace.
    pub names: SecretNames,
    /// Notes about this server.
    pub notes: Vec<ImportNote>,
    /// Values found for the keyring.
    pub secrets: Vec<(SecretName, Secret)>,
}

impl ServerCx<'_> {
    /// Adds a note about this server.
    pub(super) fn note(&mut self, kind: NoteKind, message: String) {
        self.notes.push(ImportNote {
            server: Some(self.id.to_string()),
            kind,
            message,
        });
    }

    /// Lowers one env var or header; `None` when it was dropped (a note says why).
    pub(super) fn named(&mut self, field: Field, name: &str, raw: &Value) -> Option<NamedValue> {
        let what = field.describe(name);
        let valid = match field {
            Field::Env => is_env_name(name),
            Field::Header => is_header_name(name),
        };
        if !valid {
            self.note(
                NoteKind::DroppedField,
                format!("{what} was dropped: the name is not valid"),
            );
            return None;
        }
        let text = match raw {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                self.note(
                    NoteKind::DroppedField,
                    format!("{what} was dropped: its value is not a string"),
                );
                return None;
            }
        };
        let value = self.value(name, &what, text)?;
        Some(NamedValue {
            name: name.to_owned(),
            value,
        })
    }

    fn value(&mut self, name: &str, what: &str, text: String) -> Option<ValueSource> {
        let refs = vars(&text);
        let whole = |r: &Range<usize>| r.start == 0 && r.end == text.len();

        // Our own placeholder, written by `export --format claude`.
        if let [(r, Var::Secret(s))] = refs.as_slice() {
            if whole(r) {
                match self.secret_ref(s) {
                    Some(SecretRef::Own(secret)) => {
                        let id = &self.id;
                        self.note(
                            NoteKind::NeedsSecret,
                            format!(
                                "{what} refers to this server's secret `{secret}`; if it is not \
                                 set yet, run `switchboard secret set --server {id} {secret}`"
                            ),
                        );
                        return Some(ValueSource::Secret(secret));
                    }
                    Some(SecretRef::Foreign {
                        what: other,
                        binding,
                    }) => {
                        return self.refused(name, what, &other, binding);
                    }
                    None => {}
                }
            }
        }

        // A reference whose value VS Code would prompt for as a password, or that feeds a
        // credential: it becomes a secret with no value yet. `${env:..}` of a credential lands
        // here too (rather than staying literal): servers never inherit Switchboard's own
        // environment, so the keyring is the only place such a value can come from.
        let credential = name_looks_secret(name) || looks_secret(&text);
        let needs_secret = refs.iter().any(|(_, v)| match v {
            Var::Input(id) => self.inputs.get(*id).map_or(credential, |i| {
                i.password || (credential && i.default.is_none())
            }),
            Var::Env(_) => credential,
            Var::Secret(_) | Var::Other(_) => false,
        });
        if needs_secret {
            let secret = match refs.as_slice() {
                [(r, Var::Input(id))] if whole(r) => input_secret(id),
                _ => self.names.fresh(name),
            };
            let Some(secret) = secret else {
                self.note(
                    NoteKind::DroppedField,
                    format!("{what} was dropped: no valid secret name could be made for it"),
                );
                return None;
            };
            let shown: Vec<String> = refs
                .iter()
                .map(|(r, _)| format!("`{}`", shown_ref(&text[r.clone()])))
                .collect();
            let enter = match template(&text, &refs) {
                Some(t) => format!("and enter `{}`", esc(&t)),
                None => "and enter the value".to_owned(),
            };
            let id = &self.id;
            self.note(
                NoteKind::NeedsSecret,
                format!(
                    "{what} needs secret `{secret}` (Switchboard does not expand {}): run \
                     `switchboard secret set --server {id} {secret}` {enter}",
                    shown.join(", ")
                ),
            );
            return Some(ValueSource::Secret(secret));
        }

        let text = self.expand(what, &text);
        let literal = vars(&text).is_empty();
        let flag_word = matches!(
            text.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off"
        );
        if literal && !text.is_empty() && !flag_word && (credential || looks_secret(&text)) {
            let secret = self.names.fresh(name)?;
            self.note(
                NoteKind::SecretMoved,
                format!("the value of {what} was moved to the keyring as secret `{secret}`"),
            );
            self.secrets.push((secret.clone(), Secret::new(text)));
            return Some(ValueSource::Secret(secret));
        }
        if text.contains(['\r', '\n', '\0']) {
            self.note(
                NoteKind::DroppedField,
                format!("{what} was dropped: its value contains a line break or NUL"),
            );
            return None;
        }
        Some(ValueSource::Plain(text))
    }

    /// What `${secret:X}` names. `None` when X is neither a secret name nor a binding.
    fn secret_ref(&self, x: &str) -> Option<SecretRef> {
        if let Ok(binding) = Binding::parse(x) {
            let what = match &binding {
                Binding::Provider(p) => format!("the API key of model provider {p}"),
                Binding::Server { server, name } => format!("secret {name} of server {server}"),
            };
            return Some(SecretRef::Foreign {
                what,
                binding: Some(binding),
            });
        }
        let name = SecretName::new(x).ok()?;
        // The layout before namespaces: `provider.<name>` held provider keys and
        // `<server>.<field>` the secrets the form and import made for a server.
        if let Some(p) = x.strip_prefix("provider.") {
            return Some(SecretRef::Foreign {
                what: format!("`{}`, a model provider's API key", esc(x)),
                binding: crate::ids::ProviderName::new(p).ok().map(Binding::Provider),
            });
        }
        if let Some((server, _)) = x.split_once('.') {
            let own = server.eq_ignore_ascii_case(self.id.as_str())
                || server.eq_ignore_ascii_case(self.raw_name);
            if !own && self.others.contains(&server.to_ascii_lowercase()) {
                return Some(SecretRef::Foreign {
                    what: format!("`{}`, a secret of server {}", esc(x), esc(server)),
                    binding: None,
                });
            }
        }
        Some(SecretRef::Own(name))
    }

    /// A reference to a secret outside this server's namespace: not bound; the value becomes
    /// an unset secret of the server itself, and the note says how to bind it on purpose.
    fn refused(
        &mut self,
        field: &str,
        what: &str,
        other: &str,
        binding: Option<Binding>,
    ) -> Option<ValueSource> {
        let Some(own) = self.names.fresh(field) else {
            self.note(
                NoteKind::RefusedReference,
                format!("{what} refers to {other}, which is not this server's own secret; it was dropped"),
            );
            return None;
        };
        let id = &self.id;
        let bind = match binding {
            Some(b) => format!(
                ", or bind it on purpose when you approve the server: `switchboard server trust \
                 {id} --bind {}={b}`",
                esc(field)
            ),
            None => String::new(),
        };
        self.note(
            NoteKind::RefusedReference,
            format!(
                "{what} refers to {other}; a server may only use its own secrets, so it was not \
                 bound. It uses this server's secret `{own}` instead, which is not set: run \
                 `switchboard secret set --server {id} {own}`{bind}"
            ),
        );
        Some(ValueSource::Secret(own))
    }

    /// Replaces `${input:ID}` of inputs that have a default and are not passwords, and notes
    /// every reference left in place. `what` names the place (`argument 2`, `the URL`).
    pub(super) fn expand(&mut self, what: &str, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for (r, var) in vars(s) {
            out.push_str(&s[last..r.start]);
            last = r.end;
            let shown = shown_ref(&s[r.clone()]);
            let input = match var {
                Var::Input(id) => self.inputs.get(id).cloned(),
                _ => None,
            };
            match (var, input) {
                (
                    Var::Input(id),
                    Some(Input {
                        password: false,
                        default: Some(d),
                    }),
                ) => {
                    out.push_str(&d);
                    self.note(
                        NoteKind::Mapped,
                        format!(
                            "{what}: used the default answer of VS Code input `{}`",
                            esc(id)
                        ),
                    );
                    continue;
                }
                (Var::Input(id), Some(Input { password: true, .. })) => self.note(
                    NoteKind::SecretNotMovable,
                    format!(
                        "{what} uses the password input `{}`, but only environment variables \
                         and headers can refer to keyring secrets; `{shown}` was kept as text, \
                         edit the server",
                        esc(id)
                    ),
                ),
                (Var::Input(_), _) | (Var::Secret(_), _) | (Var::Other(_), _) => self.note(
                    NoteKind::UnresolvedVariable,
                    format!(
                        "{what} uses `{shown}`, which Switchboard does not expand; the server \
                         will receive it as text, edit the server"
                    ),
                ),
                (Var::Env(_), _) => self.note(
                    NoteKind::EnvReference,
                    format!(
                        "{what} uses `{shown}`; Switchboard does not expand environment \
                         references, so the server will receive it as text"
                    ),
                ),
            }
            out.push_str(&s[r]);
        }
        out.push_str(&s[last..]);
        out
    }

    /// Reports arguments that look like credentials. They stay: a spec's arguments cannot
    /// refer to the keyring, and rewriting them would break the server.
    pub(super) fn check_args(&mut self, args: &[String]) {
        for (i, a) in args.iter().enumerate() {
            if vars(a).is_empty() && credential_arg(args, i).is_some() {
                self.note(
                    NoteKind::SecretNotMovable,
                    format!(
                        "argument {} looks like a credential; arguments are stored in \
                         Switchboard's config, not the keyring. If the server can read it from \
                         an environment variable, move it there",
                        i + 1
                    ),
                );
            }
        }
    }

    /// Reports URL query parameters and path parts that look like credentials.
    pub(super) fn check_url(&mut self, url: &url::Url) {
        for found in credential_query(url.as_str()) {
            self.note(
                NoteKind::SecretNotMovable,
                format!(
                    "the URL's query parameter `{}` looks like a credential; it stays in \
                     the config (only headers can refer to keyring secrets)",
                    esc(&found.name)
                ),
            );
        }
        if url
            .path_segments()
            .is_some_and(|mut s| s.any(value_looks_secret))
        {
            self.note(
                NoteKind::SecretNotMovable,
                "a part of the URL's path looks like a credential; it stays in the config \
                 (only headers can refer to keyring secrets)"
                    .to_owned(),
            );
        }
    }
}

/// A `${..}` reference for a note, escaped; `${…}` when it has a credential inside (an
/// unclosed `${` runs on to the next `}` and takes whatever lies between).
fn shown_ref(r: &str) -> String {
    if contains_secret(r) {
        "${…}".to_owned()
    } else {
        esc(r)
    }
}

/// What the user should enter for a secret that was a template such as
/// `Bearer ${input:token}`: `Bearer <token>`. `None` when the value is a bare reference, or when
/// the literal part is long or looks secret itself (it must not end up in a note).
fn template(text: &str, refs: &[(Range<usize>, Var<'_>)]) -> Option<String> {
    let mut out = String::new();
    let mut literal = String::new();
    let mut last = 0;
    for (r, var) in refs {
        let chunk = &text[last..r.start];
        out.push_str(chunk);
        literal.push_str(chunk);
        last = r.end;
        let label = match var {
            Var::Input(id) => format!("<{id}>"),
            Var::Env(name) => format!("<value of {name}>"),
            Var::Secret(name) => format!("<secret {name}>"),
            Var::Other(inner) => format!("<{inner}>"),
        };
        out.push_str(&label);
    }
    out.push_str(&text[last..]);
    literal.push_str(&text[last..]);
    let usable = !literal.trim().is_empty() && literal.len() <= 24 && !contains_secret(&literal);
    usable.then_some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn finds_references() {
        let v =
            vars("a ${input:tok} ${env:HOME} ${workspaceFolder}/x ${secret:s.t} ${API_KEY:-d} ${x");
        let kinds: Vec<Var<'_>> = v.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            kinds,
            [
                Var::Input("tok"),
                Var::Env("HOME"),
                Var::Other("workspaceFolder"),
                Var::Secret("s.t"),
                Var::Env("API_KEY"),
            ]
        );
        assert_eq!(v[0].0, 2..14);
        assert!(vars("no refs $HOME {x}").is_empty());
    }

    #[test]
    fn templates_hide_long_or_secret_literals() {
        let t = "Bearer ${input:tok}";
        assert_eq!(template(t, &vars(t)).as_deref(), Some("Bearer <tok>"));
        let bare = "${input:tok}";
        assert_eq!(template(bare, &vars(bare)), None);
        let leaky = "ghp_0123456789abcdefABCDEF${env:X}";
        assert_eq!(template(leaky, &vars(leaky)), None);
        let inside = "${env:USER}:ghp_0123456789";
        assert_eq!(template(inside, &vars(inside)), None);
    }

    #[test]
    fn input_secret_names_are_valid() {
        assert_eq!(input_secret("github_pat").unwrap().as_str(), "github_pat");
        assert_eq!(input_secret("my key").unwrap().as_str(), "my-key");
        assert_eq!(input_secret("%%").unwrap().as_str(), "input");
    }

    #[test]
    fn credential_arguments_are_reported_without_values() {
        let inputs = BTreeMap::new();
        let others = std::collections::HashSet::new();
        let mut cx = ServerCx {
            id: ServerId::new("s").unwrap(),
            raw_name: "s",
            inputs: &inputs,
            others: &others,
            names: SecretNames::default(),
            notes: Vec::new(),
            secrets: Vec::new(),
        };
        let args: Vec<String> = [
            "--token",
            "tok-CANARY-1",
            "--api-key=CANARY-2",
            "postgresql://u:CANARY3@db/x",
            "--verbose",
            "/tmp/plain",
        ]
        .map(String::from)
        .to_vec();
        cx.check_args(&args);
        let text = serde_json::to_string(&cx.notes).unwrap();
        assert_eq!(cx.notes.len(), 3, "{text}");
        assert!(!text.contains("CANARY"), "{text}");
        assert!(cx
            .notes
            .iter()
            .all(|n| n.kind == NoteKind::SecretNotMovable));
    }
}

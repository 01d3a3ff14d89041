//! The add/edit server form. Values marked secret, and plain values that look like
//! credentials, go to the OS keyring in the server's own namespace and the stored spec refers to
//! them by name; no response ever carries a secret value back (SE-05): the edit form shows a
//! secret as "set" or "not set", and an empty secret field on save keeps the stored value. The
//! core checks everything before it writes anything, so a refused form stores nothing.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::{
    HttpSpec, NamedValue, ServerSpec, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use switchboard_core::escape::short_for_display;
use switchboard_core::host::{AddOptions, Host};
use switchboard_core::ids::ServerId;
use switchboard_core::redact::Secret;
use tauri::State;

use super::{logged, IpcError};

/// One environment variable or header as typed in the form.
#[derive(Clone, Debug, Deserialize, Type)]
pub struct ValueEntry {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// Store the value in the keyring instead of the config.
    pub secret: bool,
}

/// The add-server form.
#[derive(Clone, Debug, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AddServerRequest {
    /// A local server.
    Stdio {
        /// Its name.
        name: String,
        /// The command (a bare name such as `npx`, or an absolute path).
        command: String,
        /// Arguments, one per entry.
        args: Vec<String>,
        /// The working directory; empty for the default.
        cwd: String,
        /// Environment variables.
        env: Vec<ValueEntry>,
    },
    /// A remote Streamable HTTP server.
    Http {
        /// Its name.
        name: String,
        /// The endpoint.
        url: String,
        /// Headers.
        headers: Vec<ValueEntry>,
    },
}

/// A user-typed name as an error quotes it: escaped and cut short.
fn shown(name: &str) -> String {
    format!("\"{}\"", short_for_display(name, 64))
}

/// Turns form entries into values and the secrets typed for them. A secret entry left empty
/// keeps the value it had in `before` (the edit form never receives the value, so it cannot
/// send it back); a typed secret replaces it.
/// Values for the spec, and the secrets typed for them by field.
type Entries = (Vec<NamedValue>, Vec<(String, Secret)>);

fn entries(items: Vec<ValueEntry>, before: &[NamedValue]) -> Result<Entries, IpcError> {
    let mut out = Vec::with_capacity(items.len());
    let mut typed = Vec::new();
    for e in items {
        let kept = before.iter().find_map(|b| match &b.value {
            ValueSource::Secret(_) | ValueSource::Bound(_) if b.name == e.name => {
                Some(b.value.clone())
            }
            _ => None,
        });
        let value = match (e.secret, e.value.is_empty(), kept) {
            (true, true, Some(kept)) => kept,
            (true, true, None) => {
                return Err(IpcError::invalid(format!(
                    "enter a value for the secret {}",
                    shown(&e.name)
                )));
            }
            (true, false, kept) => {
                typed.push((e.name.clone(), Secret::new(e.value)));
                // A typed value replaces the field's own secret under its name.
                match kept {
                    Some(own @ ValueSource::Secret(_)) => own,
                    _ => ValueSource::Plain(String::new()),
                }
            }
            (false, _, _) => ValueSource::Plain(e.value),
        };
        out.push(NamedValue {
            name: e.name,
            value,
        });
    }
    Ok((out, typed))
}

/// Adds a server. It does not start: it waits for approval of what it runs or where it
/// connects. `replace_secrets` is the person's confirmation after a `secret_exists` error.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(request.name())))]
pub async fn add_server(
    host: State<'_, Host>,
    request: AddServerRequest,
    replace_secrets: bool,
) -> Result<(), IpcError> {
    let (spec, secrets) = build_spec(request, None)?;
    host.add_server_with(
        spec,
        AddOptions {
            secrets,
            replace_secrets,
        },
    )
    .await?;
    Ok(())
}

/// Saves an edited server. The name cannot change. A changed launch voids its approval, so the
/// server waits for the trust dialog again.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(request.name())))]
pub async fn update_server(
    host: State<'_, Host>,
    request: AddServerRequest,
    replace_secrets: bool,
) -> Result<(), IpcError> {
    let id = Host::server_id(request.name())?;
    let before = host.server(&id).await?;
    let (mut spec, secrets) = build_spec(request, Some(&before))?;
    spec.enabled = before.enabled;
    spec.timeouts = before.timeouts;
    host.update_server_with(
        spec,
        AddOptions {
            secrets,
            replace_secrets,
        },
    )
    .await?;
    Ok(())
}

impl AddServerRequest {
    fn name(&self) -> &str {
        match self {
            Self::Stdio { name, .. } | Self::Http { name, .. } => name,
        }
    }
}

/// The spec the form describes and the secrets typed into it. The core validates it all
/// before anything is stored.
fn build_spec(
    request: AddServerRequest,
    before: Option<&ServerSpec>,
) -> Result<(ServerSpec, Vec<(String, Secret)>), IpcError> {
    let name = request.name();
    let id = ServerId::new(name)
        .map_err(|e| IpcError::invalid(format!("the name {}: {e}", shown(name))))?;
    let before_values: &[NamedValue] = before.map(|b| b.values()).unwrap_or(&[]);
    let (transport, typed) = match request {
        AddServerRequest::Stdio {
            command,
            args,
            cwd,
            env,
            ..
        } => {
            let (env, typed) = entries(env, before_values)?;
            (stdio(command, args, &cwd, env), typed)
        }
        AddServerRequest::Http { url, headers, .. } => {
            let (headers, typed) = entries(headers, before_values)?;
            (http(url, headers), typed)
        }
    };
    Ok((spec(&id, transport), typed))
}

/// One environment variable or header as the edit form shows it.
#[derive(Clone, Debug, Serialize, Type)]
pub struct FormEntryDto {
    /// Its name.
    pub name: String,
    /// Its value; always empty for a secret.
    pub value: String,
    /// Whether the value lives in the keyring.
    pub secret: bool,
    /// For a secret: whether the keyring holds a value (SE-05 "set / not set").
    pub secret_set: bool,
}

/// A server as the edit form shows it.
#[derive(Clone, Debug, Serialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerFormDto {
    /// A local server.
    Stdio {
        /// Its name.
        name: String,
        /// The command as written.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// The working directory, or empty.
        cwd: String,
        /// Environment variables.
        env: Vec<FormEntryDto>,
    },
    /// A remote server.
    Http {
        /// Its name.
        name: String,
        /// The endpoint.
        url: String,
        /// Headers.
        headers: Vec<FormEntryDto>,
    },
}

async fn form_entries(
    host: &Host,
    server: &ServerId,
    values: &[NamedValue],
) -> Result<Vec<FormEntryDto>, IpcError> {
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        out.push(match &v.value {
            ValueSource::Plain(p) => FormEntryDto {
                name: v.name.clone(),
                value: p.clone(),
                secret: false,
                secret_set: false,
            },
            ValueSource::Secret(s) => FormEntryDto {
                name: v.name.clone(),
                value: String::new(),
                secret: true,
                secret_set: host.server_secret_is_set(server, s).await?,
            },
            // A binding is made in the trust dialog; the form keeps it as it is.
            ValueSource::Bound(_) => FormEntryDto {
                name: v.name.clone(),
                value: String::new(),
                secret: true,
                secret_set: true,
            },
        });
    }
    Ok(out)
}

/// A server's configuration for the edit form. Secret values are never included.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn server_form(host: State<'_, Host>, name: String) -> Result<ServerFormDto, IpcError> {
    let id = Host::server_id(&name)?;
    let spec = host.server(&id).await?;
    Ok(match spec.transport {
        TransportSpec::Stdio(s) => ServerFormDto::Stdio {
            name,
            command: s.command,
            args: s.args,
            cwd: s.cwd.map(|c| c.display().to_string()).unwrap_or_default(),
            env: form_entries(&host, &id, &s.env).await?,
        },
        TransportSpec::Http(h) => ServerFormDto::Http {
            name,
            url: h.url,
            headers: form_entries(&host, &id, &h.headers).await?,
        },
    })
}

fn stdio(command: String, args: Vec<String>, cwd: &str, env: Vec<NamedValue>) -> TransportSpec {
    TransportSpec::Stdio(StdioSpec {
        command,
        args,
        env,
        cwd: (!cwd.trim().is_empty()).then(|| cwd.trim().into()),
        sandbox: Default::default(),
    })
}

fn http(url: String, headers: Vec<NamedValue>) -> TransportSpec {
    TransportSpec::Http(HttpSpec {
        url,
        headers,
        auth: None,
        allow_insecure: false,
    })
}

fn spec(id: &ServerId, transport: TransportSpec) -> ServerSpec {
    ServerSpec {
        id: id.clone(),
        transport,
        enabled: true,
        timeouts: Timeouts::default(),
    }
}

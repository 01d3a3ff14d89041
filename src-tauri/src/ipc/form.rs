//! The add/edit server form. Values marked secret go to the OS keyring under `<server>.<NAME>`
//! and the stored spec refers to them by name; no response ever carries a secret value back
//! (SE-05): the edit form shows a secret as "set" or "not set", and an empty secret field on
//! save keeps the stored value.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::escape::short_for_display;
use switchboard_core::config::{
    HttpSpec, NamedValue, ServerSpec, StdioSpec, Timeouts, TransportSpec, ValueSource,
};
use switchboard_core::host::Host;
use switchboard_core::ids::{SecretName, ServerId};
use switchboard_core::redact::Secret;
use tauri::State;

use super::{ErrorCode, IpcError};

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

fn invalid(message: impl Into<String>) -> IpcError {
    IpcError {
        code: ErrorCode::Invalid,
        message: message.into(),
    }
}

/// Turns form entries into references, storing the secret ones in the keyring. A secret
/// entry left empty keeps the reference it had in `before` (the edit form never receives the
/// value, so it cannot send it back).
async fn entries(
    host: &Host,
    server: &ServerId,
    items: Vec<ValueEntry>,
    before: &[NamedValue],
) -> Result<Vec<NamedValue>, IpcError> {
    let mut out = Vec::with_capacity(items.len());
    for e in items {
        let kept = before.iter().find_map(|b| match &b.value {
            ValueSource::Secret(s) if b.name == e.name => Some(s.clone()),
            _ => None,
        });
        let value = if e.secret && e.value.is_empty() {
            match kept {
                Some(secret) => ValueSource::Secret(secret),
                None => {
                    return Err(invalid(format!(
                        "enter a value for the secret {}",
                        shown(&e.name)
                    )))
                }
            }
        } else if e.secret {
            let secret = SecretName::new(format!("{server}.{}", e.name)).map_err(|err| {
                invalid(format!("{} cannot name a secret: {err}", shown(&e.name)))
            })?;
            host.set_secret(&secret, Secret::new(e.value)).await?;
            ValueSource::Secret(secret)
        } else {
            ValueSource::Plain(e.value)
        };
        out.push(NamedValue {
            name: e.name,
            value,
        });
    }
    Ok(out)
}

/// Adds a server. It does not start: a local server waits for approval of what it runs.
#[tauri::command]
#[specta::specta]
pub async fn add_server(host: State<'_, Host>, request: AddServerRequest) -> Result<(), IpcError> {
    let spec = build_spec(&host, request, None).await?;
    host.add_server(spec).await?;
    Ok(())
}

/// Saves an edited server. The name cannot change. A changed launch voids its approval, so a
/// local server waits for the trust dialog again.
#[tauri::command]
#[specta::specta]
pub async fn update_server(
    host: State<'_, Host>,
    request: AddServerRequest,
) -> Result<(), IpcError> {
    let id = Host::server_id(request.name())?;
    let before = host.server(&id).await?;
    let mut spec = build_spec(&host, request, Some(&before)).await?;
    spec.enabled = before.enabled;
    spec.timeouts = before.timeouts;
    host.update_server(spec).await?;
    Ok(())
}

impl AddServerRequest {
    fn name(&self) -> &str {
        match self {
            Self::Stdio { name, .. } | Self::Http { name, .. } => name,
        }
    }
}

/// Validates the form (everything but the secrets first, so a bad form stores nothing), then
/// stores the secrets and returns the spec.
async fn build_spec(
    host: &Host,
    request: AddServerRequest,
    before: Option<&ServerSpec>,
) -> Result<ServerSpec, IpcError> {
    let name = request.name();
    let id = ServerId::new(name).map_err(|e| invalid(format!("the name {}: {e}", shown(name))))?;
    let before_values: &[NamedValue] = match before.map(|b| &b.transport) {
        Some(TransportSpec::Stdio(s)) => &s.env,
        Some(TransportSpec::Http(h)) => &h.headers,
        None => &[],
    };
    let transport = match request {
        AddServerRequest::Stdio {
            command,
            args,
            cwd,
            env,
            ..
        } => {
            let probe = plain(&env);
            spec(&id, stdio(command.clone(), args.clone(), &cwd, probe))
                .validate()
                .map_err(|e| invalid(e.to_string()))?;
            stdio(
                command,
                args,
                &cwd,
                entries(host, &id, env, before_values).await?,
            )
        }
        AddServerRequest::Http { url, headers, .. } => {
            let probe = plain(&headers);
            spec(&id, http(url.clone(), probe))
                .validate()
                .map_err(|e| invalid(e.to_string()))?;
            http(url, entries(host, &id, headers, before_values).await?)
        }
    };
    Ok(spec(&id, transport))
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

async fn form_entries(host: &Host, values: &[NamedValue]) -> Result<Vec<FormEntryDto>, IpcError> {
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
                secret_set: host.secret_is_set(s).await?,
            },
        });
    }
    Ok(out)
}

/// A server's configuration for the edit form. Secret values are never included.
#[tauri::command]
#[specta::specta]
pub async fn server_form(host: State<'_, Host>, name: String) -> Result<ServerFormDto, IpcError> {
    let spec = host.server(&Host::server_id(&name)?).await?;
    Ok(match spec.transport {
        TransportSpec::Stdio(s) => ServerFormDto::Stdio {
            name,
            command: s.command,
            args: s.args,
            cwd: s.cwd.map(|c| c.display().to_string()).unwrap_or_default(),
            env: form_entries(&host, &s.env).await?,
        },
        TransportSpec::Http(h) => ServerFormDto::Http {
            name,
            url: h.url,
            headers: form_entries(&host, &h.headers).await?,
        },
    })
}

fn plain(items: &[ValueEntry]) -> Vec<NamedValue> {
    items
        .iter()
        .map(|e| NamedValue {
            name: e.name.clone(),
            value: ValueSource::Plain(if e.secret {
                String::new()
            } else {
                e.value.clone()
            }),
        })
        .collect()
}

fn stdio(command: String, args: Vec<String>, cwd: &str, env: Vec<NamedValue>) -> TransportSpec {
    TransportSpec::Stdio(StdioSpec {
        command,
        args,
        env,
        cwd: (!cwd.trim().is_empty()).then(|| cwd.trim().into()),
    })
}

fn http(url: String, headers: Vec<NamedValue>) -> TransportSpec {
    TransportSpec::Http(HttpSpec { url, headers })
}

fn spec(id: &ServerId, transport: TransportSpec) -> ServerSpec {
    ServerSpec {
        id: id.clone(),
        transport,
        enabled: true,
        timeouts: Timeouts::default(),
    }
}

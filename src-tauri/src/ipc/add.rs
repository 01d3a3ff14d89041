//! Adding a server from the form. Values marked secret go to the OS keyring under
//! `<server>.<NAME>` and the stored spec refers to them by name; no response ever carries a
//! secret value back (SE-05).

use serde::Deserialize;
use specta::Type;
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

fn invalid(message: impl Into<String>) -> IpcError {
    IpcError {
        code: ErrorCode::Invalid,
        message: message.into(),
    }
}

/// Turns form entries into references, storing the secret ones in the keyring.
async fn entries(
    host: &Host,
    server: &ServerId,
    items: Vec<ValueEntry>,
) -> Result<Vec<NamedValue>, IpcError> {
    let mut out = Vec::with_capacity(items.len());
    for e in items {
        let value = if e.secret {
            let secret = SecretName::new(format!("{server}.{}", e.name))
                .map_err(|err| invalid(format!("{:?} cannot name a secret: {err}", e.name)))?;
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
    let name = match &request {
        AddServerRequest::Stdio { name, .. } | AddServerRequest::Http { name, .. } => name,
    };
    let id = ServerId::new(name).map_err(|e| invalid(format!("the name {name:?}: {e}")))?;
    // Validate everything except the secrets first, so a bad form stores nothing.
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
            stdio(command, args, &cwd, entries(&host, &id, env).await?)
        }
        AddServerRequest::Http { url, headers, .. } => {
            let probe = plain(&headers);
            spec(&id, http(url.clone(), probe))
                .validate()
                .map_err(|e| invalid(e.to_string()))?;
            http(url, entries(&host, &id, headers).await?)
        }
    };
    host.add_server(spec(&id, transport)).await?;
    Ok(())
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

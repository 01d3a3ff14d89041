//! Signing in to remote servers (OAuth, issue 12) and the Credentials page: `sign_in` streams
//! the core's timeline to the window, `sign_in_continue` answers the one question asked on the
//! way, `sign_out` revokes, `credentials` lists every secret and token without a value, and
//! `set_client_secret` stores a pre-registered client's secret, which never comes back (SE-05).
//! `set_allow_insecure` turns a remote server's "allow insecure (development)" on or off
//! (AU-10); turning it on changes what was approved, so the server needs approval again.
//!
//! # The browser hand-off (AU-05, RN-02)
//! The core calls [`Handoff::open`] with the checked authorization URL. The shell sends the
//! window a [`SignInEventDto::Confirm`] carrying the authorization server's registrable domain,
//! host and the checker's warnings, and waits (at most [`CONFIRM_WAIT`]) for the person to press
//! Continue or Cancel, which arrives as `sign_in_continue(ticket, yes)`. Only on Continue does
//! the host's one URL opener start the browser. The URL itself never crosses the IPC: it carries
//! the `state` and the PKCE challenge, and the domain is what a person can judge. (The CLI
//! prints the URL when no browser opens; the window instead says to fix the browser or use the
//! CLI, so the web view, which renders server-sent text, never holds a live authorization URL.)
//!
//! # Tickets
//! Each sign-in gets a ticket minted here ([`RunId::random`]: 128 random bits, never made by the
//! web view), announced first on the channel. Answers wait in a `watch` per ticket: `Some(true)`
//! continue, `Some(false)` cancel (at any step: the sign-in future is dropped, which closes the
//! loopback listener). The tickets live in a process-wide table because one app runs per process
//! and the table must exist before any command runs, also under the test runtime; a ticket's
//! entry is removed when its `sign_in` command ends, whatever happened.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::Duration;

use switchboard_core::host::credentials::{Handoff, StepEvent};
use switchboard_core::host::{Host, HostError};
use switchboard_core::ids::RunId;
use switchboard_core::redact::Secret;
use switchboard_core::url_check::CheckedUrl;
use tauri::ipc::Channel;
use tauri::State;
use tokio::sync::watch;

use super::{logged, ErrorCode, IpcError};

/// How long the question before the browser waits for an answer.
pub const CONFIRM_WAIT: Duration = Duration::from_secs(5 * 60);

/// The longest client secret accepted.
const SECRET_MAX: usize = 8 * 1024;

/// What a cancelled sign-in says, on its failed step and as the command's error.
pub(super) const CANCELLED: &str =
    "sign-in cancelled: you stopped it before it finished. Press Sign in to \
                         start again";

pub use super::signin_dto::*;

type Answers = HashMap<RunId, watch::Sender<Option<bool>>>;

/// The sign-ins waiting for or open to an answer (see the module docs). A `std` mutex: each
/// critical section is one map operation, never across an `.await`.
static WAITING: LazyLock<Mutex<Answers>> = LazyLock::new(Mutex::default);

fn waiting() -> std::sync::MutexGuard<'static, Answers> {
    WAITING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One sign-in's ticket; its entry leaves the table when this drops.
struct Ticket(RunId);

impl Ticket {
    fn open() -> (Self, watch::Receiver<Option<bool>>) {
        let id = RunId::random();
        let (tx, rx) = watch::channel(None);
        waiting().insert(id.clone(), tx);
        (Self(id), rx)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        waiting().remove(&self.0);
    }
}

/// The window's side of one sign-in: the timeline goes to the channel, the browser opens only
/// after Continue.
struct Window {
    host: Host,
    events: Channel<SignInEventDto>,
    ticket: String,
    answers: watch::Receiver<Option<bool>>,
    cancelled: AtomicBool,
}

impl Window {
    fn new(host: Host, events: Channel<SignInEventDto>) -> (Self, Ticket) {
        let (ticket, answers) = Ticket::open();
        let window = Self {
            host,
            ticket: ticket.0.to_string(),
            events,
            answers,
            cancelled: AtomicBool::new(false),
        };
        let _ = window.events.send(SignInEventDto::Started {
            ticket: window.ticket.clone(),
        });
        (window, ticket)
    }

    fn cancel(&self) -> String {
        self.cancelled.store(true, Ordering::Relaxed);
        CANCELLED.to_owned()
    }

    /// Resolves when the person cancels; never when the sign-in goes on.
    async fn cancelled_by_person(&self) {
        let mut answers = self.answers.clone();
        if answers.wait_for(|a| *a == Some(false)).await.is_err() {
            std::future::pending::<()>().await;
        }
        self.cancel();
    }

    /// Shows the domain, waits for Continue, then opens the browser.
    async fn confirm_then_open(&self, url: &CheckedUrl) -> Result<(), String> {
        let ask = SignInEventDto::Confirm {
            ticket: self.ticket.clone(),
            domain: url.domain.clone(),
            host: url.host_unicode.clone(),
            warnings: url.warnings.clone(),
        };
        if self.events.send(ask).is_err() {
            return Err(self.cancel());
        }
        let mut answers = self.answers.clone();
        let answer = tokio::time::timeout(CONFIRM_WAIT, async move {
            answers
                .wait_for(Option::is_some)
                .await
                .map(|a| *a == Some(true))
        })
        .await;
        match answer {
            Ok(Ok(true)) => {}
            Ok(_) => return Err(self.cancel()),
            Err(_) => {
                return Err(format!(
                    "no answer within {} minutes, so the browser was not opened; press Sign in \
                     to start again",
                    CONFIRM_WAIT.as_secs() / 60
                ));
            }
        }
        self.host.open_in_browser(url).map_err(|e| {
            format!(
                "could not open the browser ({e}); set a default browser (or SWITCHBOARD_BROWSER), \
                 or sign in from a terminal with `switchboard auth login`"
            )
        })
    }

    /// The command's error: a cancelled sign-in says so; a failed one keeps the core's words.
    fn error(&self, e: HostError) -> IpcError {
        match e {
            _ if self.cancelled.load(Ordering::Relaxed) => {
                IpcError::new(ErrorCode::Cancelled, CANCELLED)
            }
            HostError::SignIn(e) => IpcError::new(ErrorCode::AuthRequired, e.to_string()),
            other => other.into(),
        }
    }
}

impl Handoff for Window {
    fn step(&self, event: StepEvent) {
        let cancelled = self.cancelled.load(Ordering::Relaxed);
        let _ = self.events.send(SignInEventDto::step(event, cancelled));
    }

    // `Handoff` is an `async_trait`; this is the signature its macro writes, spelled out so the
    // shell does not take the macro crate on for one method.
    fn open<'life0, 'life1, 'async_trait>(
        &'life0 self,
        url: &'life1 CheckedUrl,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(self.confirm_then_open(url))
    }
}

/// Signs in to a remote server. The timeline (and the question before the browser) arrives on
/// `on_event`; `client_id` is a client the person registered with the server themselves.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn sign_in(
    host: State<'_, Host>,
    server: String,
    client_id: Option<String>,
    on_event: Channel<SignInEventDto>,
) -> Result<SignedInDto, IpcError> {
    let id = Host::server_id(&server)?;
    let client_id = super::providers::optional("client id", client_id)?;
    let (window, _ticket) = Window::new(host.inner().clone(), on_event);
    let outcome = tokio::select! {
        r = host.sign_in(&id, client_id, &window) => r.map_err(|e| window.error(e)),
        () = window.cancelled_by_person() => Err(IpcError::new(ErrorCode::Cancelled, CANCELLED)),
    };
    Ok(outcome?.into())
}

/// Answers a sign-in's question: `yes` opens the browser, no (at any step) cancels it. Returns
/// whether such a sign-in was running.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn sign_in_continue(ticket: String, yes: bool) -> Result<bool, IpcError> {
    let id = RunId::parse(&ticket).map_err(|_| IpcError::invalid("not a sign-in ticket"))?;
    Ok(waiting().get(&id).is_some_and(|tx| {
        tx.send_replace(Some(yes));
        true
    }))
}

/// Signs out of a remote server: revokes where offered and deletes the tokens.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn sign_out(host: State<'_, Host>, server: String) -> Result<SignedOutDto, IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host.sign_out(&id).await?.into())
}

/// Every secret and token the app holds: set or not, expiry, scopes, issuer; never a value.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn credentials(host: State<'_, Host>) -> Result<CredentialsDto, IpcError> {
    Ok(host.credentials().await?.into())
}

/// Stores the client secret of a client the person registered with a server's authorization
/// server. It goes to the keyring and is never returned by any command.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server)))]
pub async fn set_client_secret(
    host: State<'_, Host>,
    server: String,
    value: String,
) -> Result<(), IpcError> {
    let id = Host::server_id(&server)?;
    let value = value.trim();
    if value.is_empty() || value.len() > SECRET_MAX {
        return Err(IpcError::invalid(
            "a client secret must be 1 to 8192 characters",
        ));
    }
    Ok(host.set_client_secret(&id, Secret::new(value)).await?)
}

/// Turns "allow insecure (development)" on or off for a remote server (AU-10): with it on, its
/// sign-in and tokens may use plain http to another machine. Turning it on changes what the
/// person approved, so the server asks for approval again before it starts.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&server), allow = allow))]
pub async fn set_allow_insecure(
    host: State<'_, Host>,
    server: String,
    allow: bool,
) -> Result<(), IpcError> {
    let id = Host::server_id(&server)?;
    Ok(host.set_allow_insecure(&id, allow).await?)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::tests::audit::{app, call};

    fn listed(app: &super::super::tests::audit::App, cmd: &str, key: &str, name: &str) -> Value {
        let out: Value = serde_json::from_str(&call(app, cmd, json!({})).unwrap()).unwrap();
        let rows = if cmd == "credentials" {
            out["servers"].clone()
        } else {
            out
        };
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r[key] == name)
            .unwrap_or_else(|| panic!("{cmd} lists no {name}: {rows}"))
            .clone()
    }

    fn fingerprint(app: &super::super::tests::audit::App) -> String {
        let v: Value = serde_json::from_str(
            &call(app, "trust_view", json!({"name": "remote", "bindings": []})).unwrap(),
        )
        .unwrap();
        v["fingerprint"].as_str().unwrap().to_owned()
    }

    /// AU-10: the toggle flips the stored spec, both listings show it, the approval fingerprint
    /// changes with it (so the server needs approval again), and only a remote server has it.
    #[test]
    fn set_allow_insecure_flips_the_spec() {
        let app = app();
        let before = fingerprint(&app);
        assert_eq!(
            listed(&app, "credentials", "server", "remote")["allow_insecure"],
            json!(false)
        );
        assert_eq!(
            listed(&app, "list_servers", "name", "remote")["allow_insecure"],
            json!(false)
        );

        let on = json!({"server": "remote", "allow": true});
        assert_eq!(call(&app, "set_allow_insecure", on).unwrap(), "null");
        assert_eq!(
            listed(&app, "credentials", "server", "remote")["allow_insecure"],
            json!(true)
        );
        assert_eq!(
            listed(&app, "list_servers", "name", "remote")["allow_insecure"],
            json!(true)
        );
        assert_eq!(
            listed(&app, "list_servers", "name", "local")["allow_insecure"],
            json!(false)
        );
        let insecure = fingerprint(&app);
        assert_ne!(
            insecure, before,
            "turning it on must ask for approval again"
        );
        let view = call(
            &app,
            "trust_view",
            json!({"name": "remote", "bindings": []}),
        )
        .unwrap();
        assert!(view.contains("insecure"), "{view}");

        let off = json!({"server": "remote", "allow": false});
        assert_eq!(call(&app, "set_allow_insecure", off).unwrap(), "null");
        assert_eq!(
            listed(&app, "credentials", "server", "remote")["allow_insecure"],
            json!(false)
        );
        assert_eq!(fingerprint(&app), before);

        // A local server has no such setting; unknown and malformed names are not found.
        for (server, code) in [
            ("local", "invalid"),
            ("nope", "not_found"),
            ("../remote", "not_found"),
            ("re\u{202e}mote", "not_found"),
        ] {
            let e = call(
                &app,
                "set_allow_insecure",
                json!({"server": server, "allow": true}),
            )
            .unwrap_err();
            assert!(e.contains(&format!("\"code\":\"{code}\"")), "{server}: {e}");
        }
        let wrong = json!({"server": "remote", "allow": "yes"});
        assert!(call(&app, "set_allow_insecure", wrong).is_err());
        assert_eq!(
            listed(&app, "credentials", "server", "local")["allow_insecure"],
            json!(false)
        );
    }
}

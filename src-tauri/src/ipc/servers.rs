//! Server commands: list, review and approve the launch plan, start, stop, enable, remove.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::launch::LaunchPlan;
use switchboard_core::config::{Binding, TransportSpec, ValueSource};
use switchboard_core::host::{Check, CheckLevel, DoctorReport, ServerView};
use switchboard_core::host::{FieldBinding, Host, TrustState};
use switchboard_core::ids::ServerId;
use switchboard_core::server_logs::{Direction, ServerLogs, TraceEntry};
use switchboard_core::status::Reason;
use switchboard_core::supervisor::ServerStatus;
use tauri::State;

use super::{logged, IpcError};

/// How a server is reached.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A local child process.
    Stdio,
    /// A remote Streamable HTTP endpoint.
    Http,
}

/// A server's lifecycle state, for badges.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum StatusKind {
    /// Not running.
    Stopped,
    /// Waiting for the user to approve its launch plan.
    NeedsTrust,
    /// Connecting.
    Starting,
    /// Connected.
    Running,
    /// Waiting before a restart.
    Backoff,
    /// Given up until the user acts.
    Failed,
}

/// Why a server is down, as far as the UI acts on it (the root of a crash loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    /// It wants credentials: the card offers "Sign in" (sign in, or its header settings).
    AuthRequired,
    /// A message was over the cap (`cap_bytes`): the card names it.
    MessageTooLarge,
    /// A message was nested too deep.
    TooDeep,
    /// Its launch plan needs approval.
    NeedsApproval,
    /// The handshake did not finish in time.
    HandshakeTimeout,
    /// The process ended.
    ProcessExited,
    /// Anything else; `detail` says what.
    Other,
}

/// A server's status as the UI shows it.
#[derive(Clone, Debug, Serialize, Type)]
pub struct StatusDto {
    /// The state.
    pub kind: StatusKind,
    /// One sentence describing it (reason, countdown target, protocol).
    pub detail: String,
    /// Tools offered, when running.
    pub tools: Option<u32>,
    /// When the next restart happens (ms since the Unix epoch), in backoff.
    pub retry_at_ms: Option<f64>,
    /// The newest stderr lines, when failed.
    pub stderr_tail: Vec<String>,
    /// Why it is down, when it says (failed, backoff, needs trust).
    pub reason: Option<ReasonKind>,
    /// The cap a message broke, in bytes, for `message_too_large`.
    pub cap_bytes: Option<f64>,
    /// The protocol revision negotiated with the server, when running ("2026-07-28").
    pub protocol: Option<String>,
}

fn reason_kind(r: &Reason) -> (ReasonKind, Option<f64>) {
    match r.root() {
        Reason::AuthRequired(_) => (ReasonKind::AuthRequired, None),
        Reason::MessageTooLarge { cap } => (ReasonKind::MessageTooLarge, Some(*cap as f64)),
        Reason::TooDeep { .. } => (ReasonKind::TooDeep, None),
        Reason::NeedsApproval { .. } => (ReasonKind::NeedsApproval, None),
        Reason::HandshakeTimeout { .. } => (ReasonKind::HandshakeTimeout, None),
        Reason::ProcessExited { .. } => (ReasonKind::ProcessExited, None),
        _ => (ReasonKind::Other, None),
    }
}

impl From<&ServerStatus> for StatusDto {
    fn from(s: &ServerStatus) -> Self {
        let (kind, tools, retry_at_ms, stderr_tail) = match s {
            ServerStatus::Stopped => (StatusKind::Stopped, None, None, vec![]),
            ServerStatus::NeedsTrust { .. } => (StatusKind::NeedsTrust, None, None, vec![]),
            ServerStatus::Starting { .. } => (StatusKind::Starting, None, None, vec![]),
            ServerStatus::Running { tools, .. } => {
                (StatusKind::Running, Some(*tools as u32), None, vec![])
            }
            ServerStatus::Backoff { retry_at_ms, .. } => {
                (StatusKind::Backoff, None, Some(*retry_at_ms as f64), vec![])
            }
            ServerStatus::Failed { stderr_tail, .. } => {
                (StatusKind::Failed, None, None, stderr_tail.clone())
            }
        };
        let (reason, cap_bytes) = match s.reason().map(reason_kind) {
            Some((k, cap)) => (Some(k), cap),
            None => (None, None),
        };
        let protocol = match s {
            ServerStatus::Running { peer, .. } => Some(peer.protocol_version.clone()),
            _ => None,
        };
        Self {
            kind,
            detail: s.to_string(),
            protocol,
            tools,
            retry_at_ms,
            stderr_tail,
            reason,
            cap_bytes,
        }
    }
}

/// One row of the servers page.
#[derive(Clone, Debug, Serialize, Type)]
pub struct ServerRow {
    /// The server's name.
    pub name: String,
    /// How it is reached.
    pub transport: TransportKind,
    /// The command line or URL, escaped for display.
    pub summary: String,
    /// Whether it should run.
    pub enabled: bool,
    /// Its approval state.
    pub trust: TrustStateDto,
    /// Its status.
    pub status: StatusDto,
    /// Secrets it refers to that the keyring does not hold: its own by name, bound ones as
    /// `provider:NAME` / `server:SERVER/NAME` (names only; SE-05).
    pub missing_secrets: Vec<String>,
    /// Tools, instructions, prompts or templates new or changed since approved, waiting for
    /// review (TD-02; see `pin_review`).
    pub review: u32,
    /// Whether a local server runs sandboxed (SP-07); `None` for a remote one.
    pub sandboxed: Option<bool>,
    /// Whether a remote server has "allow insecure (development)" on (AU-10): its sign-in and
    /// tokens may use plain http to another machine. Always false for a local server.
    pub allow_insecure: bool,
    /// Kept running whenever the app runs; otherwise it starts when its tools are needed and
    /// stops when idle.
    pub always_on: bool,
}

/// Approval state of a launch plan.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TrustStateDto {
    /// Approved and unchanged.
    Trusted,
    /// Never approved.
    NotApproved,
    /// Changed since approval.
    Changed,
    /// The command cannot be resolved (see doctor).
    Unresolvable,
}

impl From<TrustState> for TrustStateDto {
    fn from(t: TrustState) -> Self {
        match t {
            TrustState::Trusted => Self::Trusted,
            TrustState::NotApproved => Self::NotApproved,
            TrustState::Changed => Self::Changed,
        }
    }
}

/// What the trust dialog shows (SP-01, SP-10): labelled, escaped, untruncated lines, env
/// values or headers with their secret bindings (never secret values).
#[derive(Clone, Debug, Serialize, Type)]
pub struct TrustViewDto {
    /// The server.
    pub name: String,
    /// Whether it is a remote server (the lines show a URL and headers, not a command).
    pub remote: bool,
    /// (label, value) pairs.
    pub lines: Vec<(String, String)>,
    /// Dangerous patterns found (SP-02).
    pub warnings: Vec<String>,
    /// The fingerprint to send back with the approval.
    pub fingerprint: String,
    /// The current state.
    pub state: TrustStateDto,
    /// The env vars or headers that take a secret, and where each takes it from.
    pub fields: Vec<TrustFieldDto>,
    /// Secrets outside the server's own namespace a field could be bound to: `provider:NAME`
    /// and `server:SERVER/NAME` (names only).
    pub bind_options: Vec<String>,
}

/// One env var or header of the trust dialog that takes a secret.
#[derive(Clone, Debug, Serialize, Type)]
pub struct TrustFieldDto {
    /// The env var or header.
    pub field: String,
    /// `None` for the server's own secret, else the binding (`provider:NAME`,
    /// `server:SERVER/NAME`).
    pub bound: Option<String>,
}

/// A binding the person makes in the trust dialog (SE-04).
#[derive(Clone, Debug, Deserialize, Type)]
pub struct BindingRequest {
    /// The env var or header.
    pub field: String,
    /// `provider:NAME` or `server:SERVER/NAME`; `None` for the server's own secret.
    pub to: Option<String>,
}

fn bindings(requests: Vec<BindingRequest>) -> Result<Vec<FieldBinding>, IpcError> {
    requests
        .into_iter()
        .map(|b| {
            let to = match b.to {
                None => None,
                Some(t) => Some(Binding::parse(&t).map_err(|e| IpcError::invalid(e.to_string()))?),
            };
            Ok(FieldBinding { field: b.field, to })
        })
        .collect()
}

/// One row of the servers page: the view plus what the host knows about its trust, secrets
/// and held tools.
async fn row(host: &Host, v: ServerView) -> Result<ServerRow, IpcError> {
    let trust = match host.trust_view(&v.spec.id).await {
        Ok(t) => t.state.into(),
        Err(_) => TrustStateDto::Unresolvable,
    };
    // An unreadable keyring counts as missing: the server cannot start either way.
    let missing_secrets = host.missing_secrets(&v.spec).await;
    Ok(ServerRow {
        name: v.spec.id.to_string(),
        transport: match v.spec.transport {
            TransportSpec::Stdio(_) => TransportKind::Stdio,
            TransportSpec::Http(_) => TransportKind::Http,
        },
        summary: v.spec.summary(),
        sandboxed: match &v.spec.transport {
            TransportSpec::Stdio(s) => Some(s.sandbox.enabled),
            TransportSpec::Http(_) => None,
        },
        allow_insecure: matches!(&v.spec.transport, TransportSpec::Http(h) if h.allow_insecure),
        enabled: v.spec.enabled,
        always_on: v.always_on,
        trust,
        status: (&v.status).into(),
        missing_secrets,
        review: u32::try_from(host.held_tools(&v.spec.id).await?.len()).unwrap_or(u32::MAX),
    })
}

/// Every configured server with its live status.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn list_servers(host: State<'_, Host>) -> Result<Vec<ServerRow>, IpcError> {
    let mut rows = Vec::new();
    for v in host.list_servers().await? {
        rows.push(row(&host, v).await?);
    }
    Ok(rows)
}

/// The env vars or headers of a plan that take a secret, and where each takes it from.
fn secret_fields(plan: &LaunchPlan) -> Vec<TrustFieldDto> {
    plan.values()
        .iter()
        .filter_map(|nv| {
            let bound = match &nv.value {
                ValueSource::Plain(_) => return None,
                ValueSource::Secret(_) => None,
                ValueSource::Bound(b) => Some(b.to_string()),
            };
            Some(TrustFieldDto {
                field: nv.name.clone(),
                bound,
            })
        })
        .collect()
}

/// The secrets outside `id`'s own namespace a field could be bound to: every provider's key,
/// then every other server's secrets (names only).
async fn bind_options(host: &Host, id: &ServerId) -> Result<Vec<String>, IpcError> {
    let mut options: Vec<String> = host
        .models()
        .list_providers()
        .await?
        .iter()
        .map(|p| Binding::Provider(p.name.clone()).to_string())
        .collect();
    for other in host
        .list_servers()
        .await?
        .iter()
        .filter(|o| o.spec.id != *id)
    {
        for secret in other.spec.secret_refs() {
            options.push(
                Binding::Server {
                    server: other.spec.id.clone(),
                    name: secret.clone(),
                }
                .to_string(),
            );
        }
    }
    Ok(options)
}

/// The launch plan (or URL and headers) to review before approving, with `bindings` made.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn trust_view(
    host: State<'_, Host>,
    name: String,
    bindings: Vec<BindingRequest>,
) -> Result<TrustViewDto, IpcError> {
    let id = Host::server_id(&name)?;
    let made = self::bindings(bindings)?;
    let v = host.trust_view_with(&id, &made).await?;
    let bind_options = bind_options(&host, &id).await?;
    Ok(TrustViewDto {
        name,
        remote: matches!(v.plan, LaunchPlan::Http { .. }),
        fields: secret_fields(&v.plan),
        lines: v.lines,
        warnings: v.warnings,
        fingerprint: v.fingerprint.0,
        state: v.state.into(),
        bind_options,
    })
}

/// Makes `bindings`, approves exactly the plan with `fingerprint` (the one shown with the same
/// bindings) and starts the server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn approve_server(
    host: State<'_, Host>,
    name: String,
    fingerprint: String,
    bindings: Vec<BindingRequest>,
) -> Result<(), IpcError> {
    let id = Host::server_id(&name)?;
    let made = self::bindings(bindings)?;
    let fp = switchboard_core::config::launch::Fingerprint(fingerprint);
    host.trust_server_with(&id, &made, &fp).await?;
    host.start_server(&id).await?;
    Ok(())
}

/// Keeps a server running whenever the app runs, or lets it start when needed.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn set_always_on(host: State<'_, Host>, name: String, on: bool) -> Result<(), IpcError> {
    host.set_always_on(&Host::server_id(&name)?, on).await?;
    Ok(())
}

/// Starts a server that starts when needed, because the person opened its tools; a running
/// one is left as it is.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn open_server(host: State<'_, Host>, name: String) -> Result<(), IpcError> {
    host.ensure_started(&Host::server_id(&name)?).await?;
    Ok(())
}

/// Starts (or restarts) a server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn start_server(host: State<'_, Host>, name: String) -> Result<(), IpcError> {
    host.start_server(&Host::server_id(&name)?).await?;
    Ok(())
}

/// Stops a server and its process tree.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn stop_server(host: State<'_, Host>, name: String) -> Result<(), IpcError> {
    host.stop_server(&Host::server_id(&name)?).await?;
    Ok(())
}

/// Enables or disables a server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name), enabled = enabled))]
pub async fn set_server_enabled(
    host: State<'_, Host>,
    name: String,
    enabled: bool,
) -> Result<(), IpcError> {
    host.set_enabled(&Host::server_id(&name)?, enabled).await?;
    Ok(())
}

/// Removes a server, its approval and its saved logs.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn remove_server(host: State<'_, Host>, name: String) -> Result<(), IpcError> {
    host.remove_server(&Host::server_id(&name)?).await?;
    Ok(())
}

/// How a doctor check came out.
#[derive(Clone, Copy, Debug, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CheckLevelDto {
    /// Fine.
    Ok,
    /// Worth knowing.
    Warn,
    /// The cause of a failure.
    Fail,
    /// Not checked.
    Skipped,
}

/// One doctor check.
#[derive(Clone, Debug, Serialize, Type)]
pub struct CheckDto {
    /// What was checked.
    pub name: String,
    /// The outcome.
    pub level: CheckLevelDto,
    /// The explanation, with what to do.
    pub detail: String,
}

/// Why a server fails, and what would run.
#[derive(Clone, Debug, Serialize, Type)]
pub struct DoctorDto {
    /// The server.
    pub name: String,
    /// What would run, when it resolves.
    pub plan: Vec<(String, String)>,
    /// The checks in order.
    pub checks: Vec<CheckDto>,
    /// Stderr of the trial start.
    pub stderr_tail: Vec<String>,
}

impl From<CheckLevel> for CheckLevelDto {
    fn from(l: CheckLevel) -> Self {
        match l {
            CheckLevel::Ok => Self::Ok,
            CheckLevel::Warn => Self::Warn,
            CheckLevel::Fail => Self::Fail,
            CheckLevel::Skipped => Self::Skipped,
        }
    }
}

impl From<Check> for CheckDto {
    fn from(c: Check) -> Self {
        Self {
            name: c.name,
            level: c.level.into(),
            detail: c.detail,
        }
    }
}

impl DoctorDto {
    /// The report on the server the window calls `name`.
    fn new(name: String, r: DoctorReport) -> Self {
        Self {
            name,
            plan: r.plan.unwrap_or_default(),
            checks: r.checks.into_iter().map(Into::into).collect(),
            stderr_tail: r.stderr_tail,
        }
    }
}

/// How long the doctor's trial start may take.
const DOCTOR_TRIAL: std::time::Duration = std::time::Duration::from_secs(30);

/// Diagnoses a server: config, executable, secrets, approval, then a trial start (approved
/// servers only).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn doctor(host: State<'_, Host>, name: String) -> Result<DoctorDto, IpcError> {
    let r = host.doctor(&Host::server_id(&name)?, DOCTOR_TRIAL).await?;
    Ok(DoctorDto::new(name, r))
}

/// One protocol trace entry.
#[derive(Clone, Debug, Serialize, Type)]
pub struct TraceDto {
    /// Milliseconds since the Unix epoch.
    pub at_ms: f64,
    /// `out`, `in` or `note`.
    pub direction: String,
    /// The JSON-RPC method, if a request or notification.
    pub method: Option<String>,
    /// Round-trip time of a response, in milliseconds.
    pub duration_ms: Option<f64>,
    /// Whether it is an error response.
    pub is_error: bool,
    /// The message (redacted, possibly cut; shown as text).
    pub body: String,
}

/// A server's stderr tail and protocol trace: live when it runs here, else its last run's.
#[derive(Clone, Debug, Serialize, Type)]
pub struct LogsDto {
    /// Stderr lines, oldest first.
    pub stderr: Vec<String>,
    /// Trace entries, oldest first.
    pub trace: Vec<TraceDto>,
}

impl From<TraceEntry> for TraceDto {
    fn from(e: TraceEntry) -> Self {
        Self {
            at_ms: e.at_ms as f64,
            direction: match e.direction {
                Direction::Out => "out",
                Direction::In => "in",
                Direction::Note => "note",
            }
            .into(),
            method: e.method,
            duration_ms: e.duration_ms,
            is_error: e.is_error,
            body: e.body,
        }
    }
}

/// Stderr and trace of a server: live from its handle when it runs here, else as its last run
/// saved them.
fn logs(host: &Host, id: &ServerId) -> (Vec<String>, Vec<TraceEntry>) {
    match host.handle(id) {
        Some(h) => (h.logs().stderr_tail(usize::MAX), h.logs().trace()),
        None => ServerLogs::load_persisted(&host.data_dir().join("logs").join(id.as_str())),
    }
}

/// The logs of a server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(server = %logged(&name)))]
pub async fn server_logs(host: State<'_, Host>, name: String) -> Result<LogsDto, IpcError> {
    let id = Host::server_id(&name)?;
    host.server(&id).await?;
    let (stderr, trace) = logs(&host, &id);
    Ok(LogsDto {
        stderr,
        trace: trace.into_iter().map(Into::into).collect(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use switchboard_core::host::HostError;
    use switchboard_core::mcp::McpError;
    use switchboard_core::status::AuthChallenge;

    use super::*;
    use crate::ipc::ErrorCode;

    #[test]
    fn the_card_and_errors_branch_on_the_typed_reason() {
        let failed = |reason| ServerStatus::Failed {
            reason,
            stderr_tail: vec![],
        };
        let dto = StatusDto::from(&failed(Reason::CrashLoop {
            ends: 5,
            window_secs: 120,
            last: Box::new(Reason::AuthRequired(AuthChallenge::default())),
        }));
        assert_eq!(dto.reason, Some(ReasonKind::AuthRequired));
        let dto = StatusDto::from(&failed(Reason::MessageTooLarge { cap: 4096 }));
        assert_eq!(dto.reason, Some(ReasonKind::MessageTooLarge));
        assert_eq!(dto.cap_bytes, Some(4096.0));
        assert_eq!(StatusDto::from(&ServerStatus::Stopped).reason, None);

        let e = IpcError::from(HostError::Mcp(McpError::AuthRequired(
            AuthChallenge::default(),
        )));
        assert_eq!(e.code, ErrorCode::AuthRequired);
        let e = IpcError::from(HostError::Mcp(McpError::Disconnected(
            Reason::MessageTooLarge { cap: 1 },
        )));
        assert_eq!(e.code, ErrorCode::MessageTooLarge);
        let e = IpcError::from(HostError::Mcp(McpError::Protocol("x".into())));
        assert_eq!(e.code, ErrorCode::Server);
    }
}

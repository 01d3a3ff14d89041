//! How a command that failed ends: a sentence on stderr for people, with `--json` an error
//! object on stdout for scripts, and an exit code from a short documented list.
//!
//! The object is `{"error": {"code": "...", "message": "..."}}`. The code is stable and comes
//! from the error's type (a [`HostError`] or [`McpError`] variant, or the CLI's own
//! [`CliError`]), never from its wording, so scripts can branch on it while the sentences keep
//! improving. Server text quoted in a message is escaped and cut to [`output::QUOTE_MAX`].

use std::fmt;
use std::process::ExitCode;

use switchboard_core::host::{HostError, SkillHostError};
use switchboard_core::ids::ServerId;
use switchboard_core::mcp::McpError;
use switchboard_core::status::Reason;
use switchboard_core::store::StoreError;
use switchboard_core::supervisor::ServerStatus;

use crate::output;

/// The exit codes, as `--help` lists them ([`EXIT_CODES_HELP`]).
pub mod exit {
    /// The command did what was asked.
    pub const OK: u8 = 0;
    /// The command failed; the error's code says why. Also: `doctor` or `audit verify` found a
    /// problem.
    pub const FAILED: u8 = 1;
    /// `call`: the tool ran and reported an error (its result is printed).
    pub const TOOL_ERROR: u8 = 2;
    /// The policy or you refused the request.
    pub const DENIED: u8 = 3;
    /// The command line is wrong (an unknown flag, a malformed value).
    pub const USAGE: u8 = 64;
    /// Stopped with Ctrl-C.
    pub const CANCELLED: u8 = 130;
}

/// The exit codes for `switchboard --help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    success (also when a reader closes the output early, as `| head` does)
  1    the command failed; with --json, stdout has {\"error\": {\"code\", \"message\"}}
       (doctor and audit verify: a problem was found)
  2    call: the tool ran and reported an error (its result is printed)
  3    denied: the policy or you refused the request
  64   usage: the command line is wrong
  130  cancelled with Ctrl-C";

/// Failures the CLI itself finds, before or around the host's work.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// A flag's value cannot be used (`--args` is not a JSON object, `--env` lacks `=`, ...).
    Usage(String),
    /// A server the command needs did not come up.
    Unavailable {
        /// The server.
        server: ServerId,
        /// Where it stopped.
        status: ServerStatus,
    },
    /// The command needs a yes typed on a terminal, and there is none (`--yes` gives it).
    NeedsConfirmation(String),
    /// The person answered no.
    Declined(String),
    /// A chat turn ended without an answer.
    Turn {
        /// The model call failed (rather than the step limit being reached).
        model_failed: bool,
        /// What happened.
        message: String,
    },
}

/// How many of a failed server's last stderr lines an error quotes.
const STDERR_LINES: usize = 10;

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(m) | Self::NeedsConfirmation(m) | Self::Declined(m) => f.write_str(m),
            Self::Unavailable { server, status } => {
                write!(
                    f,
                    "{server} is not available: {}",
                    output::inert(&output::bounded(&status.to_string(), output::QUOTE_MAX))
                )?;
                if let ServerStatus::Failed { stderr_tail, .. } = status {
                    // The traceback that says why, not just "it did not start".
                    let last: Vec<&str> = stderr_tail
                        .iter()
                        .rev()
                        .take(STDERR_LINES)
                        .rev()
                        .map(String::as_str)
                        .collect();
                    if !last.is_empty() {
                        write!(f, "\nthe last lines it wrote to stderr:")?;
                        for line in last {
                            let line = output::bounded(line, output::QUOTE_MAX / 4);
                            write!(f, "\n  {}", output::inert(&line))?;
                        }
                    }
                    write!(
                        f,
                        "\nmore: `switchboard doctor {server}` and `switchboard server logs {server}`"
                    )?;
                }
                if let Some(hint) = status.reason().and_then(|r| hint(server, r)) {
                    write!(f, "\n{hint}")?;
                }
                Ok(())
            }
            Self::Turn { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for CliError {}

/// What the person can do about a reason, when there is something (the CLI's "Sign in").
pub fn hint(server: &ServerId, reason: &Reason) -> Option<String> {
    match reason.root() {
        Reason::AuthRequired(_) => Some(format!(
            "sign in: `switchboard auth login {server}` (it opens the browser); a server that \
             takes a static token instead: `switchboard secret set --server {server} TOKEN` and \
             `--header Authorization=secret:TOKEN`"
        )),
        Reason::MessageTooLarge { cap } => Some(format!(
            "its message was over the {} cap, which protects Switchboard's memory; if its answers \
             are really this large, raise it: `switchboard server limits {server} --max-message-mb N`",
            switchboard_core::status::bytes(*cap)
        )),
        _ => None,
    }
}

/// The stable code of a reason the shells act on, if it has one of its own.
fn reason_code(reason: &Reason) -> Option<&'static str> {
    match reason.root() {
        Reason::AuthRequired(_) => Some("auth_required"),
        Reason::MessageTooLarge { .. } => Some("message_too_large"),
        Reason::TooDeep { .. } => Some("too_deep"),
        Reason::NeedsApproval { .. } => Some("needs_approval"),
        _ => None,
    }
}

/// A usage error as an `anyhow::Error`, for `.map_err(usage)` and `.ok_or_else(..)`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    CliError::Usage(message.into()).into()
}

/// The stable code and the exit code of a failure: from the first typed error in its chain.
pub fn classify(e: &anyhow::Error) -> (&'static str, u8) {
    for cause in e.chain() {
        if let Some(c) = cause.downcast_ref::<CliError>() {
            return cli_code(c);
        }
        if let Some(h) = cause.downcast_ref::<HostError>() {
            return host_code(h);
        }
        if let Some(m) = cause.downcast_ref::<McpError>() {
            return mcp_code(m);
        }
        if let Some(s) = cause.downcast_ref::<StoreError>() {
            return (store_code(s), exit::FAILED);
        }
        if let Some(s) = cause.downcast_ref::<SkillHostError>() {
            return (skill_code(s), exit::FAILED);
        }
    }
    ("failed", exit::FAILED)
}

/// A skill that is held, or that did not pass its checks, says so to a script.
fn skill_code(e: &SkillHostError) -> &'static str {
    use switchboard_core::skill_data::SkillError;
    match e {
        SkillHostError::Held { .. } | SkillHostError::Stale { .. } => "held_for_review",
        SkillHostError::Skill(SkillError::Unknown { .. }) => "not_found",
        SkillHostError::Skill(_) => "skill_unverified",
        _ => "failed",
    }
}

fn cli_code(e: &CliError) -> (&'static str, u8) {
    match e {
        CliError::Usage(_) => ("usage", exit::USAGE),
        CliError::Unavailable { status, .. } => match status {
            ServerStatus::NeedsTrust { .. } => ("needs_approval", exit::FAILED),
            _ => (
                status
                    .reason()
                    .and_then(reason_code)
                    .unwrap_or("not_available"),
                exit::FAILED,
            ),
        },
        CliError::NeedsConfirmation(_) => ("needs_confirmation", exit::FAILED),
        CliError::Declined(_) => ("declined", exit::DENIED),
        CliError::Turn {
            model_failed: true, ..
        } => ("model_failed", exit::FAILED),
        CliError::Turn { .. } => ("step_limit", exit::FAILED),
    }
}

fn host_code(e: &HostError) -> (&'static str, u8) {
    let code = match e {
        HostError::Mcp(m) => return mcp_code(m),
        HostError::Denied { .. } => return ("denied", exit::DENIED),
        HostError::Store(s) => store_code(s),
        HostError::Secret(_) => "keyring",
        HostError::Spec(_) => "invalid_config",
        HostError::UnknownServer(_) => "unknown_server",
        HostError::ServerExists(_) => "server_exists",
        HostError::Disabled(_) => "server_disabled",
        HostError::Launch { .. } => "launch_failed",
        HostError::TrustRace(_) => "approval_changed",
        HostError::NotApproved { .. } => "needs_approval",
        HostError::Held { .. } | HostError::HeldPrompt { .. } => "held_for_review",
        HostError::PinRace(_) => "review_changed",
        HostError::Import(_) => "import_failed",
        HostError::SecretExists(_) => "secret_exists",
        HostError::CrossReference { .. } => "secret_not_bound",
        HostError::Approval(_) => "approval_gone",
        HostError::Provider { .. } => "provider",
        HostError::Invalid(_) => "invalid_request",
        HostError::Io { .. } => "io",
        HostError::SignIn(e) => e.code(),
        _ => "failed",
    };
    (code, exit::FAILED)
}

fn mcp_code(e: &McpError) -> (&'static str, u8) {
    let code = match e {
        McpError::Cancelled => return ("cancelled", exit::CANCELLED),
        McpError::Config(_) => "invalid_config",
        McpError::Spawn { .. } => "spawn_failed",
        McpError::Handshake(_) => "handshake_failed",
        McpError::AuthRequired(_) => "auth_required",
        McpError::HandshakeTimeout(_) | McpError::Timeout(_) => "timeout",
        McpError::Disconnected(r) => reason_code(r).unwrap_or("disconnected"),
        McpError::Refused { reason } => reason_code(reason).unwrap_or("refused"),
        McpError::Server { .. } => "server_error",
        McpError::Protocol(_) => "protocol_error",
        McpError::NotRunning { .. } => "not_running",
        McpError::UnknownTool { .. } => "unknown_tool",
        McpError::InvalidArguments { .. } => "invalid_arguments",
        McpError::ToolDisabled { .. } => "tool_disabled",
        _ => "failed",
    };
    (code, exit::FAILED)
}

fn store_code(e: &StoreError) -> &'static str {
    match e {
        StoreError::NotFound(_) => "not_found",
        StoreError::Exists(_) => "exists",
        StoreError::TooNew { .. } => "database_too_new",
        StoreError::Full { .. } => "disk_full",
        StoreError::Busy { .. } => "database_busy",
        _ => "store",
    }
}

/// The error and its causes, each escaped and cut to [`output::QUOTE_MAX`] bytes, without
/// repeats (a context that already quotes its cause).
fn parts(e: &anyhow::Error) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if parts.iter().any(|p| p.contains(&text)) {
            continue;
        }
        parts.push(output::bounded(
            &output::escape_multiline(&text),
            output::QUOTE_MAX,
        ));
    }
    parts
}

/// Reports a failure (stderr always; with `json` also the error object on stdout) and returns
/// the exit code.
pub fn report(e: &anyhow::Error, json: bool) -> ExitCode {
    let (code, exit) = classify(e);
    let parts = parts(e);
    let mut text = String::from("error: ");
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            text.push_str("\n  caused by: ");
        }
        text.push_str(p);
    }
    errln!("{text}");
    if json {
        print_json_error(code, &parts.join(": "));
    }
    ExitCode::from(exit)
}

/// `{"error": {"code": CODE, "message": MESSAGE}}`.
pub fn error_object(code: &str, message: &str) -> serde_json::Value {
    serde_json::json!({"error": {"code": code, "message": message}})
}

/// Prints [`error_object`] on stdout.
pub fn print_json_error(code: &str, message: &str) {
    // A `json!` value always serializes, so there is no error to report.
    let _ = output::json(&error_object(code, message));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sid(s: &str) -> ServerId {
        ServerId::new(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn codes_come_from_the_error_type_through_any_context() {
        let table: Vec<(anyhow::Error, &str, u8)> = vec![
            (
                HostError::UnknownServer("ghost".into()).into(),
                "unknown_server",
                1,
            ),
            (
                anyhow::Error::new(HostError::Denied {
                    server: sid("fs"),
                    tool: "write".into(),
                    by: switchboard_core::host::DeniedBy::Policy,
                    reason: "a rule".into(),
                })
                .context("calling write on fs failed"),
                "denied",
                3,
            ),
            (HostError::Mcp(McpError::Cancelled).into(), "cancelled", 130),
            (
                anyhow::Error::new(HostError::Mcp(McpError::Timeout(Duration::from_secs(1))))
                    .context("x"),
                "timeout",
                1,
            ),
            (
                McpError::InvalidArguments {
                    tool: "t".into(),
                    errors: vec![],
                }
                .into(),
                "invalid_arguments",
                1,
            ),
            (usage("--args must be a JSON object"), "usage", 64),
            (
                CliError::Declined("not approved".into()).into(),
                "declined",
                3,
            ),
            (
                CliError::Unavailable {
                    server: sid("fs"),
                    status: ServerStatus::NeedsTrust {
                        reason: Reason::NeedsApproval { detail: "x".into() },
                    },
                }
                .into(),
                "needs_approval",
                1,
            ),
            (
                CliError::Unavailable {
                    server: sid("remote"),
                    status: ServerStatus::Failed {
                        reason: Reason::AuthRequired(Default::default()),
                        stderr_tail: vec![],
                    },
                }
                .into(),
                "auth_required",
                1,
            ),
            (
                HostError::Mcp(McpError::Disconnected(Reason::MessageTooLarge {
                    cap: 1024,
                }))
                .into(),
                "message_too_large",
                1,
            ),
            (anyhow::anyhow!("something else"), "failed", 1),
        ];
        for (e, code, exit) in table {
            assert_eq!(classify(&e), (code, exit), "{e:#}");
        }
    }

    #[test]
    fn a_long_server_message_is_quoted_only_in_part() {
        let e: anyhow::Error = anyhow::Error::new(HostError::Mcp(McpError::Server {
            code: -32000,
            message: "E".repeat(64 * 1024),
        }))
        .context("calling big on srv failed");
        let p = parts(&e);
        assert_eq!(p[0], "calling big on srv failed");
        assert!(p[1].len() < output::QUOTE_MAX + 40, "{}", p[1].len());
        assert!(
            p[1].ends_with("bytes more)"),
            "{}",
            &p[1][p[1].len() - 40..]
        );
    }

    #[test]
    fn the_error_object_has_a_pinned_shape() {
        assert_eq!(
            error_object("unknown_server", "m").to_string(),
            r#"{"error":{"code":"unknown_server","message":"m"}}"#
        );
    }
}

//! `doctor`: what would run for a server and why it fails.
//!
//! Checks are ordered the way failures happen: the config, the executable (on the app's PATH
//! and on the login shell's), the working directory, the secrets, the approval, then a trial
//! start with the real handshake. The trial only runs for an approved server: explaining a
//! server never runs code the user has not approved.

use std::ops::ControlFlow;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;

use super::servers::endpoint_for;
use super::trust::TrustState;
use super::{Host, HostError};
use crate::config::launch::LaunchPlan;
use crate::config::{ServerSpec, TransportSpec};
use crate::ids::ServerId;
use crate::mcp::connection::{ConnectOptions, Connection};
use crate::server_logs::ServerLogs;
use crate::supervisor::LaunchError;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckLevel {
    /// Fine.
    Ok,
    /// Works, but worth knowing.
    Warn,
    /// The cause of a failure.
    Fail,
    /// Not checked because an earlier check failed.
    Skipped,
}

/// One diagnostic.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// The outcome.
    pub level: CheckLevel,
    /// The explanation, with what to do.
    pub detail: String,
}

/// A server's diagnosis.
#[derive(Clone, Debug, Serialize)]
pub struct DoctorReport {
    /// The server.
    pub server: ServerId,
    /// What would run, when it resolves.
    pub plan: Option<Vec<(String, String)>>,
    /// The checks, in order.
    pub checks: Vec<Check>,
    /// Stderr of the trial start.
    pub stderr_tail: Vec<String>,
}

impl DoctorReport {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.level == CheckLevel::Fail)
    }
}

fn check(name: &str, level: CheckLevel, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        level,
        detail: detail.into(),
    }
}

impl DoctorReport {
    /// Adds a check.
    fn push(&mut self, name: &str, level: CheckLevel, detail: impl Into<String>) {
        self.checks.push(check(name, level, detail));
    }
}

/// Whether the diagnosis goes on after a check, or the report is whole as it is (what
/// follows would only fail the same way, or run something it must not).
type Next = ControlFlow<()>;

impl Host {
    /// Diagnoses a server. `trial_timeout` bounds the trial start's handshake.
    pub async fn doctor(
        &self,
        id: &ServerId,
        trial_timeout: Duration,
    ) -> Result<DoctorReport, HostError> {
        let spec = self.server(id).await?;
        let mut report = DoctorReport {
            server: id.clone(),
            plan: None,
            checks: Vec::new(),
            stderr_tail: Vec::new(),
        };
        match spec.validate() {
            Ok(()) => report.push("config", CheckLevel::Ok, "valid"),
            Err(e) => {
                report.push("config", CheckLevel::Fail, e.to_string());
                return Ok(report);
            }
        }
        if !spec.enabled {
            report.push(
                "enabled",
                CheckLevel::Warn,
                format!("disabled; `switchboard server enable {id}` turns it on"),
            );
        }
        if self.check_launch(&spec, &mut report).await.is_break()
            || self.check_secrets(id, &spec, &mut report).await.is_break()
            || self.check_approval(id, &mut report).await?.is_break()
        {
            return Ok(report);
        }
        if let Some(c) = self.sandbox_check(&spec).await {
            let stop = c.level == CheckLevel::Fail;
            report.checks.push(c);
            if stop {
                return Ok(report);
            }
        }
        let Some(logs) = self
            .trial_start(id, &spec, trial_timeout, &mut report)
            .await
        else {
            return Ok(report);
        };
        // Give the stderr drain a moment to catch the last lines of a dying process.
        tokio::time::sleep(Duration::from_millis(50)).await;
        report.stderr_tail = logs.stderr_tail(30);
        // SP-13: the domains its proxy refused (in this run or an earlier one), with the
        // command that allows each.
        for f in self.refused_domains(&spec) {
            report.push("sandbox", CheckLevel::Warn, f.describe(id));
        }
        if report.failed() {
            // SP-07: say what the sandbox blocked, and the command that allows it.
            for f in self.explain_sandbox(&spec, &report.stderr_tail).await {
                report.push("sandbox", CheckLevel::Fail, f.describe(id));
            }
        }
        Ok(report)
    }

    /// What would run: a stdio server's executable found on the search path (or where it was
    /// looked for, and how to install it), the launch spec's warnings, the plan's lines.
    async fn check_launch(&self, spec: &ServerSpec, report: &mut DoctorReport) -> Next {
        let search = self.inner.search_path().await.clone();
        let TransportSpec::Stdio(s) = &spec.transport else {
            if let Ok(plan) = LaunchPlan::resolve(spec, self.data_dir(), &search) {
                report.plan = Some(plan.consent_lines());
            }
            return Next::Continue(());
        };
        let detail = format!(
            "looked on the app's PATH ({} dirs) and your login shell's PATH ({} dirs{})",
            search.host.len(),
            search.login_shell.len(),
            if search.login_shell.is_empty() {
                ", probe found none"
            } else {
                ""
            }
        );
        match LaunchPlan::resolve(spec, self.data_dir(), &search) {
            Ok(plan) => {
                if let LaunchPlan::Stdio {
                    program,
                    resolved_via,
                    ..
                } = &plan
                {
                    report.push(
                        "executable",
                        CheckLevel::Ok,
                        format!("{} ({resolved_via:?})", program.display()),
                    );
                }
                for w in plan.warnings() {
                    report.push("launch spec", CheckLevel::Warn, w);
                }
                report.plan = Some(plan.consent_lines());
                Next::Continue(())
            }
            Err(e) => {
                let mut text = e.to_string();
                if s.command == "npx" || s.command == "uvx" || s.command == "node" {
                    text.push_str(&format!(
                        "; install it (Node.js provides npx, uv provides uvx) or give its absolute path; {detail}"
                    ));
                } else {
                    text.push_str(&format!("; {detail}"));
                }
                report.push("executable", CheckLevel::Fail, text);
                Next::Break(())
            }
        }
    }

    /// Every secret the server's values name is set in the keyring.
    async fn check_secrets(
        &self,
        id: &ServerId,
        spec: &ServerSpec,
        report: &mut DoctorReport,
    ) -> Next {
        for v in spec.values() {
            let Some(key) = super::servers::key_of(id, &v.value) else {
                continue;
            };
            let name = format!("secret {}", v.name);
            match self.inner.secrets.is_set(key.clone()).await {
                Ok(true) => report.push(&name, CheckLevel::Ok, format!("{key}: set")),
                Ok(false) => {
                    report.push(
                        &name,
                        CheckLevel::Fail,
                        format!("{key} is not set; run `{}`", key.how_to_set()),
                    );
                    return Next::Break(());
                }
                Err(e) => {
                    report.push(&name, CheckLevel::Fail, e.to_string());
                    return Next::Break(());
                }
            }
        }
        Next::Continue(())
    }

    /// The server is approved as it is: nothing unapproved runs, so the trial start waits
    /// for it.
    async fn check_approval(
        &self,
        id: &ServerId,
        report: &mut DoctorReport,
    ) -> Result<Next, HostError> {
        let view = self.trust_view(id).await?;
        match view.state {
            TrustState::Trusted => {
                report.push("approval", CheckLevel::Ok, "approved");
                Ok(Next::Continue(()))
            }
            TrustState::NotApproved | TrustState::Changed => {
                let why = if view.state == TrustState::Changed {
                    "what it would run changed since it was approved"
                } else {
                    "not approved yet"
                };
                report.push(
                    "approval",
                    CheckLevel::Fail,
                    format!("{why}; run `switchboard server trust {id}`. The trial start is skipped: nothing unapproved runs"),
                );
                Ok(Next::Break(()))
            }
        }
    }

    /// The trial start, with its own logs so it does not clobber the last real run's: the
    /// handshake and the tools it lists. `None` when it could not even be launched (the
    /// report says why).
    async fn trial_start(
        &self,
        id: &ServerId,
        spec: &ServerSpec,
        trial_timeout: Duration,
        report: &mut DoctorReport,
    ) -> Option<ServerLogs> {
        let logs = ServerLogs::new(None);
        let endpoint = match endpoint_for(&self.inner, id, &logs).await {
            Ok(e) => e,
            Err(LaunchError::NeedsTrust(r) | LaunchError::Fatal(r) | LaunchError::Transient(r)) => {
                report.push("start", CheckLevel::Fail, r);
                return None;
            }
        };
        let (tx, _rx) = mpsc::channel(16);
        let started = std::time::Instant::now();
        let opts = ConnectOptions {
            init_timeout: trial_timeout,
            request_timeout: spec.timeouts.request(),
            signals: tx,
            // The capabilities a real session declares (sampling, elicitation, roots): servers
            // offer tools by what the client can do, and the doctor must see what a session
            // would (server-everything lists more tools to a client that can sample).
            requests: Some(super::requests::HostRequests::for_server(
                std::sync::Arc::downgrade(&self.inner),
                id.clone(),
            )),
            lifecycle: Default::default(),
        };
        match Connection::connect(endpoint, logs.clone(), opts).await {
            Ok(conn) => {
                report.push(
                    "handshake",
                    CheckLevel::Ok,
                    format!(
                        "{} {} speaks protocol {} ({} ms)",
                        conn.info().server_name,
                        conn.info().server_version,
                        conn.info().protocol_version,
                        started.elapsed().as_millis()
                    ),
                );
                match conn.list_tools().await {
                    Ok(t) => report.push(
                        "tools",
                        CheckLevel::Ok,
                        match t.len() {
                            1 => "1 tool".to_owned(),
                            n => format!("{n} tools"),
                        },
                    ),
                    Err(e) => report.push("tools", CheckLevel::Fail, e.to_string()),
                }
                conn.shutdown().await;
            }
            Err(e) => {
                let hint = match &e {
                    crate::mcp::McpError::HandshakeTimeout(_) => " (it started but never answered initialize: is it an MCP stdio server, or is it waiting for input or a download?)",
                    crate::mcp::McpError::Disconnected(_) => " (it exited early; its stderr below usually says why)",
                    _ => "",
                };
                report.push("handshake", CheckLevel::Fail, format!("{e}{hint}"));
            }
        }
        Some(logs)
    }
}

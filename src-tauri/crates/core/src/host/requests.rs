//! What servers ask of the person, and what the person lets servers see: elicitation (AP-07),
//! sampling (AP-08), roots, and the review of tool results before a model reads them (AP-05).
//!
//! Each started server gets a [`HostRequests`] that its connection calls when the server sends
//! `elicitation/create`, `sampling/createMessage` or `roots/list`. Elicitation and sampling become
//! [`Question`]s in the host's inbox; the server waits until a shell answers by nonce (nothing
//! times out into a yes). Every answer goes to the audit log, with credential-looking form fields
//! redacted. Sampling runs only after a person approved the (editable) prompt and picked the
//! provider and model, and returns only the response the person let through; at most one
//! sampling request per server waits at a time, and at most [`SAMPLING_PER_HOUR`] run per hour.
//! Elicitation is bounded the same way (RL-12): at most [`ELICITATIONS_WAITING`] of a server's
//! questions wait at once and [`ELICITATIONS_PER_HOUR`] are asked per hour; past that a request
//! is declined at once, unseen, with a note in the server's log, so a server cannot bury the
//! person in forms.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod asking;

use super::{Host, HostError, Inner};
use crate::approval::audit::{Actor, AuditContext, AuditEvent, Verdict};
use crate::approval::elicit;
use crate::approval::questions::{Question, QuestionError, QuestionRequest, Reply, ResultReview};
use crate::approval::sampling;
use crate::approval::Origin;
use crate::ids::{ServerId, ToolRef};
use crate::mcp::catalog::{Content, ToolInfo, ToolResult};
use crate::mcp::requests::{ClientFeatures, ElicitationAnswer, Root, ServerRequests};
use crate::store::{ResultReview as ReviewSetting, ServerTag};

/// Sampling requests one server may have run per hour.
pub const SAMPLING_PER_HOUR: usize = 30;
/// Elicitations (forms and URLs) of one server that may wait for the person at once.
pub const ELICITATIONS_WAITING: usize = 3;
/// Elicitations one server may put to the person per hour.
pub const ELICITATIONS_PER_HOUR: usize = 30;
/// The longest a sampling completion may take.
const SAMPLING_TIMEOUT: Duration = Duration::from_secs(300);
/// Characters of a sampling response kept in the audit log.
const AUDIT_RESPONSE_MAX: usize = 2_000;

/// Per server: requests started in the last hour, and how many are in flight.
#[derive(Debug, Default)]
struct GateState {
    started: VecDeque<Instant>,
    in_flight: usize,
}

/// Why a request was turned away before reaching the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// As many as allowed already wait.
    Busy,
    /// The hourly allowance is used up.
    Hourly,
}

/// Counts one kind of server request per server (RL-12, the spec's "SHOULD rate limit"): at
/// most `in_flight` waiting at once and `per_hour` started per hour, so a server cannot bury
/// the person in questions. A refused request is answered at once and never shown.
#[derive(Debug)]
pub(super) struct RequestGate {
    in_flight: usize,
    per_hour: usize,
    state: Arc<Mutex<HashMap<ServerId, GateState>>>,
}

/// A server's place in a [`RequestGate`], given back when dropped.
pub(super) struct GateSlot {
    state: Arc<Mutex<HashMap<ServerId, GateState>>>,
    server: ServerId,
}

impl Drop for GateSlot {
    fn drop(&mut self) {
        let mut map = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = map.get_mut(&self.server) {
            state.in_flight = state.in_flight.saturating_sub(1);
        }
    }
}

impl RequestGate {
    fn new(in_flight: usize, per_hour: usize) -> Self {
        Self {
            in_flight,
            per_hour,
            state: Arc::default(),
        }
    }

    /// Sampling (AP-08): one at a time, [`SAMPLING_PER_HOUR`] an hour.
    pub(super) fn sampling() -> Self {
        Self::new(1, SAMPLING_PER_HOUR)
    }

    /// Elicitation (AP-07): [`ELICITATIONS_WAITING`] at a time, [`ELICITATIONS_PER_HOUR`] an
    /// hour.
    pub(super) fn elicitation() -> Self {
        Self::new(ELICITATIONS_WAITING, ELICITATIONS_PER_HOUR)
    }

    /// Takes a slot for `server` (checking and claiming in one step), or says why not.
    fn take(&self, server: &ServerId) -> Result<GateSlot, Refused> {
        let mut map = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = map.entry(server.clone()).or_default();
        if state.in_flight >= self.in_flight {
            return Err(Refused::Busy);
        }
        let hour = Duration::from_secs(3600);
        while state.started.front().is_some_and(|t| t.elapsed() > hour) {
            state.started.pop_front();
        }
        if state.started.len() >= self.per_hour {
            return Err(Refused::Hourly);
        }
        state.started.push_back(Instant::now());
        state.in_flight += 1;
        Ok(GateSlot {
            state: Arc::clone(&self.state),
            server: server.clone(),
        })
    }
}

/// Answers one server's requests on behalf of the person.
pub(super) struct HostRequests {
    host: Weak<Inner>,
    server: ServerId,
}

impl HostRequests {
    pub(super) fn for_server(host: Weak<Inner>, server: ServerId) -> Arc<dyn ServerRequests> {
        Arc::new(Self { host, server })
    }

    fn host(&self) -> Option<Host> {
        self.host.upgrade().map(|inner| Host { inner })
    }
}

impl ServerRequests for HostRequests {
    fn features(&self) -> ClientFeatures {
        ClientFeatures {
            apps: self.host.upgrade().is_some_and(|inner| inner.env.apps),
            ..ClientFeatures::ALL
        }
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, ElicitationAnswer> {
        let (host, server) = (self.host(), self.server.clone());
        Box::pin(async move {
            match host {
                Some(h) => h.elicit(server, params).await,
                None => ElicitationAnswer::Cancel,
            }
        })
    }

    fn sample(&self, params: Value) -> BoxFuture<'static, Result<Value, String>> {
        let (host, server) = (self.host(), self.server.clone());
        Box::pin(async move {
            match host {
                Some(h) => h.sample(server, params).await,
                None => Err("Switchboard is shutting down".into()),
            }
        })
    }

    fn roots(&self) -> BoxFuture<'static, Vec<Root>> {
        let (host, server) = (self.host(), self.server.clone());
        Box::pin(async move {
            match host {
                Some(h) => h
                    .inner
                    .store
                    .server_roots(&server)
                    .await
                    .unwrap_or_default(),
                None => Vec::new(),
            }
        })
    }
}

fn server_ctx(server: &ServerId) -> AuditContext {
    AuditContext {
        server: Some(server.clone()),
        ..AuditContext::default()
    }
}

impl Host {
    /// Questions waiting for the person, oldest first.
    pub fn pending_questions(&self) -> Vec<QuestionRequest> {
        self.inner.seam.questions.list()
    }

    /// Answers a waiting question by its nonce (AP-03); an answer that does not fit is refused
    /// and the question stays open.
    pub fn answer_question(&self, nonce: &str, reply: Reply) -> Result<(), QuestionError> {
        self.inner.seam.questions.answer(nonce, reply)
    }

    /// Notes something about a server in its log, when it runs.
    fn note(&self, server: &ServerId, text: &str) {
        if let Some(h) = self.handle(server) {
            h.logs().note(text);
        }
    }

    /// What a person typed into credential-looking fields never reaches the server's
    /// protocol trace or the process log, in any form (JSON-escaped in the answer's message,
    /// percent-encoded, ...): added to both redaction sets before the answer is sent (and
    /// recorded).
    fn treat_as_secrets(
        &self,
        server: &ServerId,
        form: &elicit::FormQuestion,
        content: &Map<String, Value>,
    ) {
        let logs = self.handle(server).map(|h| h.logs().clone());
        for name in &form.sensitive {
            let value = match content.get(name) {
                Some(Value::String(v)) => v.clone(),
                // A PIN typed into a number field is as secret as one typed as text.
                Some(Value::Number(n)) => n.to_string(),
                _ => continue,
            };
            let secret = crate::redact::Secret::new(value);
            crate::redact::register_for_logs(&secret);
            if let Some(logs) = &logs {
                logs.add_secret(&secret);
            }
        }
    }

    /// Runs an approved sampling prompt: the model's id and its text. A cloud model gets the
    /// prompt redacted like a conversation's (issue 16, point 5); placeholders in its answer
    /// are put back before the person and the server see it, both on this machine.
    async fn complete(
        &self,
        server: &ServerId,
        prompt: &sampling::SamplingPrompt,
        provider: &str,
        model: Option<String>,
    ) -> Result<(String, String), HostError> {
        let name = Host::provider_name(provider)?;
        let (client, view) = self.inner.features.models.provider(&name).await?;
        let (client, redaction) = self
            .inner
            .features
            .redaction
            .redacting_sampling(client, &view);
        let model = model.or(view.model).ok_or_else(|| HostError::Provider {
            name: provider.to_owned(),
            reason: "it has no default model; choose one".into(),
        })?;
        let failed = |e: crate::llm::LlmError| HostError::Provider {
            name: provider.to_owned(),
            reason: e.to_string(),
        };
        // The person cannot stop a completion once they pressed Run, so it gets a deadline; the
        // server cancelling its request drops this future, and the stream with it.
        let run = async {
            let stream = client
                .stream(sampling::request(prompt, &model), CancellationToken::new())
                .await
                .map_err(failed)?;
            crate::llm::collect(stream).await.map_err(failed)
        };
        let answer = tokio::time::timeout(SAMPLING_TIMEOUT, run)
            .await
            .map_err(|_| HostError::Provider {
                name: provider.to_owned(),
                reason: format!("no complete answer within {} s", SAMPLING_TIMEOUT.as_secs()),
            });
        // Whatever the answer, the request went out (redacted): that is recorded.
        self.inner
            .features
            .redaction
            .audit_sampling_redaction(redaction.as_ref(), server, client.profile_id())
            .await;
        // Its placeholders were put back as it streamed (outbound::unmask).
        Ok((model, answer??.message.text()))
    }

    /// A server's roots (the folders it may see).
    pub async fn server_roots(&self, server: &ServerId) -> Result<Vec<Root>, HostError> {
        self.server(server).await?;
        Ok(self.inner.store.server_roots(server).await?)
    }

    /// Sets the folders a server may see; each must be an existing directory. A running
    /// server is told at once.
    pub async fn set_server_roots(
        &self,
        server: &ServerId,
        folders: &[PathBuf],
    ) -> Result<Vec<Root>, HostError> {
        self.server(server).await?;
        let mut roots = Vec::with_capacity(folders.len());
        for folder in folders {
            // A relative path would be resolved against wherever the app happens to run.
            if !folder.is_absolute() {
                return Err(HostError::Invalid(format!(
                    "{} is not an absolute path",
                    folder.display()
                )));
            }
            let path = std::fs::canonicalize(folder)
                .ok()
                .filter(|p| p.is_dir())
                .ok_or_else(|| {
                    HostError::Invalid(format!("{} is not an existing folder", folder.display()))
                })?;
            let uri = url::Url::from_directory_path(&path)
                .map_err(|()| HostError::Invalid(format!("{} is not absolute", path.display())))?
                .to_string();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if !roots.iter().any(|r: &Root| r.uri == uri) {
                roots.push(Root { uri, name });
            }
        }
        self.inner.store.set_server_roots(server, &roots).await?;
        self.audit_config(
            crate::approval::audit::ConfigChange::Roots,
            Some(server),
            serde_json::json!({ "roots": roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>() }),
        )
        .await;
        if let Some(conn) = self.handle(server).and_then(|h| h.connection().ok()) {
            if let Err(e) = conn.roots_changed().await {
                self.note(server, &format!("could not announce the new roots: {e}"));
            }
        }
        Ok(roots)
    }

    /// Whether a server's tool results are held for review before a model reads them.
    pub async fn result_review(&self, server: &ServerId) -> Result<ReviewSetting, HostError> {
        self.server(server).await?;
        Ok(self.inner.store.result_review(server).await?)
    }

    /// Sets whether a server's tool results are held for review.
    pub async fn set_result_review(
        &self,
        server: &ServerId,
        review: ReviewSetting,
    ) -> Result<(), HostError> {
        self.server(server).await?;
        self.inner.store.set_result_review(server, review).await?;
        self.audit_config(
            crate::approval::audit::ConfigChange::ResultReview,
            Some(server),
            serde_json::json!({ "results": review }),
        )
        .await;
        Ok(())
    }

    /// Holds a tool result for the person before a model reads it, when the server's setting
    /// says so (AP-05). Withheld, the model gets a short note instead of the result.
    pub(super) async fn review_result(
        &self,
        tool: &ToolRef,
        info: Option<&ToolInfo>,
        origin: &Origin,
        result: ToolResult,
        audit: &AuditContext,
        cancel: Option<CancellationToken>,
    ) -> Result<ToolResult, HostError> {
        let Origin::Model { conversation, .. } = origin else {
            return Ok(result);
        };
        let reason = match self.inner.store.result_review(&tool.server).await? {
            ReviewSetting::Never => return Ok(result),
            ReviewSetting::Always => "you asked to review every result of this server".to_owned(),
            ReviewSetting::Default => {
                let tags = self.inner.store.server_tags(&tool.server).await?;
                if tags.contains(&ServerTag::UntrustedContent) {
                    "the server is tagged as bringing in untrusted content".to_owned()
                } else if info
                    .and_then(|t| t.annotations.as_ref())
                    .and_then(|a| a.open_world_hint)
                    == Some(true)
                {
                    "the tool says it reaches the open world".to_owned()
                } else {
                    return Ok(result);
                }
            }
        };
        let ticket = self.inner.seam.questions.ask(
            tool.server.clone(),
            Question::ToolResult(ResultReview {
                tool: tool.tool.to_string(),
                conversation: Some(conversation.clone()),
                reason,
                result: result.clone(),
            }),
        );
        let cancel = cancel.unwrap_or_default();
        let reply = tokio::select! {
            r = ticket.reply() => r,
            () = cancel.cancelled() => None,
        };
        let (verdict, note, out) = match reply {
            Some(Reply::SendResult) => (
                Verdict::Allow,
                "result review: sent to the model".to_owned(),
                result,
            ),
            Some(Reply::Deny { reason }) => (
                Verdict::Deny,
                format!(
                    "result review: withheld from the model{}",
                    reason_text(&reason)
                ),
                withheld(&reason),
            ),
            _ => (
                Verdict::Deny,
                "result review: withheld from the model (dismissed)".to_owned(),
                withheld(&None),
            ),
        };
        self.audit(
            AuditEvent::Decided {
                decision: verdict,
                by: Actor::User,
                reason: Some(note),
            },
            audit.clone(),
        )
        .await;
        Ok(out)
    }
}

fn reason_text(reason: &Option<String>) -> String {
    match reason {
        Some(r) => format!(": {r}"),
        None => String::new(),
    }
}

/// What the model reads instead of a withheld result.
fn withheld(reason: &Option<String>) -> ToolResult {
    ToolResult {
        content: vec![Content::Text {
            text: format!(
                "The user reviewed this tool result and did not pass it on{}.",
                reason_text(reason)
            ),
        }],
        structured_content: None,
        is_error: true,
    }
}

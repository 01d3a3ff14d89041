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

use super::{Host, HostError, Inner};
use crate::approval::audit::{
    arguments_digest, Actor, AuditContext, AuditEvent, ElicitationMode, Reply as AuditReply,
    Verdict,
};
use crate::approval::elicit::{self, Elicitation};
use crate::approval::questions::{
    ElicitReply, Question, QuestionError, QuestionRequest, Reply, ResultReview, SamplingResponse,
};
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

    async fn elicit(&self, server: ServerId, params: Value) -> ElicitationAnswer {
        // Held until the person answered: it counts this question as waiting (RL-12).
        let _slot = match self.inner.seam.elicitations.take(&server) {
            Ok(slot) => slot,
            Err(why) => {
                // Declined unseen, and only noted in the server's (bounded) log: an audit row
                // or a warning per refusal would let a flood grow the database or fill the
                // person's terminal, the very thing the limit prevents.
                self.note(&server, &match why {
                    Refused::Busy => format!(
                        "declined an elicitation request unseen: {ELICITATIONS_WAITING} of this server's questions already wait for the user"
                    ),
                    Refused::Hourly => format!(
                        "declined an elicitation request unseen: rate limited to {ELICITATIONS_PER_HOUR} questions an hour"
                    ),
                });
                return ElicitationAnswer::Decline;
            }
        };
        let ctx = server_ctx(&server);
        // Redacted before it is cut: half a secret would no longer be recognised.
        let message = |p: &Value| {
            crate::redact::redact_for_logs(
                p.get("message").and_then(Value::as_str).unwrap_or_default(),
            )
            .chars()
            .take(elicit::MESSAGE_MAX)
            .collect::<String>()
        };
        let audit = |mode, message, url, reply, content| AuditEvent::Elicitation {
            mode,
            message,
            url,
            reply,
            content,
        };
        match elicit::read(&params) {
            Err(e) => {
                self.note(&server, &format!("declined an elicitation request: {e}"));
                let url_mode = params.get("mode").and_then(Value::as_str) == Some("url");
                let url = params.get("url").and_then(Value::as_str).map(|u| {
                    crate::redact::redact_for_logs(u)
                        .chars()
                        .take(300)
                        .collect()
                });
                let mode = if url_mode {
                    ElicitationMode::Url
                } else {
                    ElicitationMode::Form
                };
                self.audit(
                    audit(mode, message(&params), url, AuditReply::Decline, None),
                    ctx,
                )
                .await;
                ElicitationAnswer::Decline
            }
            Ok(Elicitation::Form(form)) => {
                let reply = self
                    .inner
                    .seam
                    .questions
                    .ask(server.clone(), Question::Form(form.clone()))
                    .reply()
                    .await;
                let (answer, reply, content) = match reply {
                    Some(Reply::Elicit(ElicitReply::Accept { content })) => {
                        self.treat_as_secrets(&server, &form, &content);
                        let logged = elicit::redacted(&form, &content);
                        (
                            ElicitationAnswer::Accept(content),
                            AuditReply::Accept,
                            Some(logged),
                        )
                    }
                    Some(Reply::Elicit(ElicitReply::Decline)) => {
                        (ElicitationAnswer::Decline, AuditReply::Decline, None)
                    }
                    _ => (ElicitationAnswer::Cancel, AuditReply::Cancel, None),
                };
                self.audit(
                    audit(ElicitationMode::Form, form.message, None, reply, content),
                    ctx,
                )
                .await;
                answer
            }
            Ok(Elicitation::Url(asked)) => {
                let reply = self
                    .inner
                    .seam
                    .questions
                    .ask(server.clone(), Question::Url(asked.clone()))
                    .reply()
                    .await;
                let (answer, reply) = match reply {
                    Some(Reply::Elicit(ElicitReply::Accept { .. })) => {
                        match crate::opener::open(&asked.url, self.inner.env.browser.as_deref()) {
                            Ok(()) => (ElicitationAnswer::Accept(Map::new()), AuditReply::Accept),
                            Err(e) => {
                                self.note(&server, &format!("could not open the browser: {e}"));
                                (ElicitationAnswer::Cancel, AuditReply::Cancel)
                            }
                        }
                    }
                    Some(Reply::Elicit(ElicitReply::Decline)) => {
                        (ElicitationAnswer::Decline, AuditReply::Decline)
                    }
                    _ => (ElicitationAnswer::Cancel, AuditReply::Cancel),
                };
                self.audit(
                    audit(
                        ElicitationMode::Url,
                        asked.message,
                        Some(asked.url.url),
                        reply,
                        None,
                    ),
                    ctx,
                )
                .await;
                answer
            }
        }
    }

    async fn sample(&self, server: ServerId, params: Value) -> Result<Value, String> {
        let request_digest = arguments_digest(&params);
        let ctx = server_ctx(&server);
        let record =
            |reply, model: Option<String>, edited, response: Option<&str>| AuditEvent::Sampling {
                reply,
                model,
                request_digest: request_digest.clone(),
                edited,
                response: response.map(|r| {
                    crate::redact::redact_for_logs(r)
                        .chars()
                        .take(AUDIT_RESPONSE_MAX)
                        .collect()
                }),
            };
        let refuse = |why: String| {
            let (server, ctx, entry) = (
                &server,
                ctx.clone(),
                record(AuditReply::Decline, None, false, None),
            );
            async move {
                self.note(server, &format!("refused a sampling request: {why}"));
                self.audit(entry, ctx).await;
                Err::<Value, String>(why)
            }
        };
        let prompt = match sampling::read(&params) {
            Ok(p) => p,
            Err(why) => return refuse(why).await,
        };
        let busy = self.inner.seam.questions.list().iter().any(|q| {
            q.server == server
                && matches!(
                    q.question,
                    Question::Sampling(_) | Question::SamplingResponse(_)
                )
        });
        if busy {
            return refuse(
                "a sampling request of this server is already waiting for the user".into(),
            )
            .await;
        }
        let _slot = match self.inner.seam.sampling.take(&server) {
            Ok(slot) => slot,
            Err(Refused::Busy) => {
                return refuse(
                    "a sampling request of this server is already waiting for the user".into(),
                )
                .await
            }
            Err(Refused::Hourly) => return refuse(format!(
                "rate limited: Switchboard lets a server sample a model at most {SAMPLING_PER_HOUR} times an hour"
            ))
            .await,
        };
        let reply = self
            .inner
            .seam
            .questions
            .ask(server.clone(), Question::Sampling(prompt.clone()))
            .reply()
            .await;
        let (edited_prompt, provider, model) = match reply {
            Some(Reply::RunSampling {
                prompt,
                provider,
                model,
            }) => (prompt, provider, model),
            Some(Reply::Deny { reason }) => {
                self.audit(record(AuditReply::Decline, None, false, None), ctx.clone())
                    .await;
                return Err(match reason {
                    Some(r) => format!("the user declined the sampling request: {r}"),
                    None => "the user declined the sampling request".into(),
                });
            }
            _ => {
                self.audit(record(AuditReply::Cancel, None, false, None), ctx.clone())
                    .await;
                return Err("the sampling request was dismissed".into());
            }
        };
        let edited = edited_prompt != prompt;
        let (model, text) = match self
            .complete(&server, &edited_prompt, &provider, model)
            .await
        {
            Ok(done) => done,
            Err(e) => {
                self.audit(record(AuditReply::Cancel, None, edited, None), ctx.clone())
                    .await;
                return Err(format!("the model could not answer: {e}"));
            }
        };
        let reply = self
            .inner
            .seam
            .questions
            .ask(
                server.clone(),
                Question::SamplingResponse(SamplingResponse {
                    provider,
                    model: model.clone(),
                    text,
                }),
            )
            .reply()
            .await;
        match reply {
            Some(Reply::SendResponse { text }) => {
                self.audit(
                    record(AuditReply::Accept, Some(model.clone()), edited, Some(&text)),
                    ctx,
                )
                .await;
                Ok(sampling::result(&model, &text))
            }
            Some(Reply::Deny { reason }) => {
                self.audit(record(AuditReply::Decline, Some(model), edited, None), ctx)
                    .await;
                Err(match reason {
                    Some(r) => format!("the user withheld the model's response: {r}"),
                    None => "the user withheld the model's response".into(),
                })
            }
            _ => {
                self.audit(record(AuditReply::Cancel, Some(model), edited, None), ctx)
                    .await;
                Err("the sampling request was dismissed".into())
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
        let (client, view) = self.inner.models.provider(&name).await?;
        let (client, redaction) = self.inner.redaction.redacting_sampling(client, &view);
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

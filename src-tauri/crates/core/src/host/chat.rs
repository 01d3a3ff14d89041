//! The conversation service: one user message in, a turn of the agent loop, everything
//! written to SQLite as it happens (ST-02).
//!
//! Order of writes: the user's message is committed before the provider is called; the
//! streaming answer is a row marked incomplete, checkpointed at most once a second and
//! finished when the answer is whole (or marked cancelled/failed with what arrived); tool calls
//! are recorded against the answer that asked for them, with the full result; the tool-result
//! message is appended like any other. The loop itself ([`crate::chat`]) knows nothing of
//! storage: this file turns its events into rows and passes them on to the caller.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Host, HostError};
use crate::chat::{run_turn, ChatEvent, HostTools, TurnConfig, TurnEnd};
use crate::ids::{ConversationId, MessageId, ProviderName, ToolCallRecordId};
use crate::llm::{Message, Part, Role, StopReason, Usage};
use crate::store::{
    ApprovalDecision, DecidedBy, MessageEnd, MessageStatus, NewToolCall, StoreError, ToolCallEnd,
};

/// What the model is told before the conversation.
const SYSTEM: &str = "You are a helpful assistant inside Switchboard, a desktop app that \
connects you to tools served by MCP servers. Use a tool when it helps; the user approves each \
call. When a call is denied or fails, say so plainly and continue without it.";

/// The longest instructions taken from one server.
const INSTRUCTIONS_MAX: usize = 4_000;

/// One message to send.
#[derive(Clone, Debug)]
pub struct SendRequest {
    /// The conversation; `None` starts a new one.
    pub conversation: Option<ConversationId>,
    /// The provider to answer with.
    pub provider: ProviderName,
    /// The model; the provider's default when `None`.
    pub model: Option<String>,
    /// The user's text.
    pub text: String,
    /// Model calls per turn at most.
    pub max_steps: Option<usize>,
}

/// How a send ended.
#[derive(Clone, Debug, PartialEq)]
pub struct SendOutcome {
    /// The conversation (new or given).
    pub conversation: ConversationId,
    /// How the turn ended.
    pub end: TurnEnd,
}

impl Host {
    /// Flags answers that were streaming when a previous run died (ST-02). Call once at start,
    /// in the process that runs chats.
    pub async fn recover_interrupted(&self) -> Result<u64, HostError> {
        Ok(self
            .inner
            .store
            .mark_interrupted_on_startup()
            .await?
            .messages)
    }

    /// Sends a message and runs the turn; events reach `events` after they are stored.
    pub async fn send_message(
        &self,
        req: SendRequest,
        events: mpsc::UnboundedSender<ChatEvent>,
        cancel: CancellationToken,
    ) -> Result<SendOutcome, HostError> {
        let (provider, view) = self.provider(&req.provider).await?;
        let model =
            req.model
                .clone()
                .or(view.model.clone())
                .ok_or_else(|| HostError::Provider {
                    name: req.provider.to_string(),
                    reason: "no model given and the provider has no default; pass --model".into(),
                })?;
        let store = &self.inner.store;
        let conversation = match req.conversation {
            Some(id) => {
                store.get_conversation(&id).await?.ok_or_else(|| {
                    HostError::Store(StoreError::NotFound(format!("conversation {id}")))
                })?;
                id
            }
            None => {
                let title: String = req.text.chars().take(60).collect();
                store.create_conversation(title.trim()).await?.id
            }
        };
        let mut transcript: Vec<Message> = store
            .load_messages(&conversation)
            .await?
            .into_iter()
            .filter(|m| m.status == MessageStatus::Complete)
            .map(|m| m.message)
            .collect();
        let user = Message::user_text(req.text);
        // Committed before the provider is called: a crash from here on loses no input.
        store.append_message(&conversation, &user).await?;
        transcript.push(user);

        let tools = HostTools::load(self, conversation.as_str()).await?;
        let mut cfg = TurnConfig::new(model.clone());
        cfg.system = Some(self.system_prompt().await?);
        if let Some(n) = req.max_steps {
            cfg.max_steps = n;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let mut outputs = crate::chat::cap::Outputs::default();
        let writer = Writer {
            host: self,
            conversation: &conversation,
            provider: req.provider.as_str(),
            model: &model,
        };
        let (end, written) = tokio::join!(
            run_turn(
                provider.as_ref(),
                tools.as_ref(),
                &mut outputs,
                &cfg,
                &mut transcript,
                cancel,
                tx,
            ),
            writer.run(rx, events),
        );
        written?;
        Ok(SendOutcome { conversation, end })
    }

    async fn system_prompt(&self) -> Result<String, HostError> {
        let mut system = SYSTEM.to_owned();
        for c in self.catalogs().await? {
            if let Some(i) = &c.catalog.instructions {
                let i: String = i.chars().take(INSTRUCTIONS_MAX).collect();
                system.push_str(&format!(
                    "\n\n# Instructions from the MCP server \"{}\"\n{i}",
                    c.server
                ));
            }
        }
        Ok(system)
    }
}

/// Writes a turn's events to the store, then passes them on.
struct Writer<'a> {
    host: &'a Host,
    conversation: &'a ConversationId,
    provider: &'a str,
    model: &'a str,
}

impl Writer<'_> {
    async fn run(
        self,
        mut rx: mpsc::UnboundedReceiver<ChatEvent>,
        out: mpsc::UnboundedSender<ChatEvent>,
    ) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        let mut answer: Option<(MessageId, String, Instant)> = None;
        let mut last_answer: Option<MessageId> = None;
        let mut usage: Option<Usage> = None;
        let mut partial: Option<Message> = None;
        let mut calls: HashMap<String, (ToolCallRecordId, bool)> = HashMap::new();
        while let Some(ev) = rx.recv().await {
            match &ev {
                ChatEvent::TextDelta { text } => {
                    if answer.is_none() {
                        let id = store
                            .begin_assistant_message(self.conversation, self.provider, self.model)
                            .await?;
                        answer = Some((id, String::new(), Instant::now()));
                    }
                    if let Some((id, so_far, last)) = answer.as_mut() {
                        so_far.push_str(text);
                        if last.elapsed() >= Duration::from_secs(1) {
                            store
                                .checkpoint_assistant_message(
                                    *id,
                                    &[Part::Text {
                                        text: so_far.clone(),
                                    }],
                                )
                                .await?;
                            *last = Instant::now();
                        }
                    }
                }
                ChatEvent::Usage { usage: u } => usage = Some(*u),
                ChatEvent::MessageDone { message } if message.role == Role::Assistant => {
                    let id = match answer.take() {
                        Some((id, ..)) => id,
                        None => {
                            store
                                .begin_assistant_message(
                                    self.conversation,
                                    self.provider,
                                    self.model,
                                )
                                .await?
                        }
                    };
                    let stop = if message.tool_calls().next().is_some() {
                        StopReason::ToolUse
                    } else {
                        StopReason::EndTurn
                    };
                    store
                        .finish_assistant_message(
                            id,
                            &message.parts,
                            MessageEnd::Complete { stop },
                            usage.take(),
                        )
                        .await?;
                    last_answer = Some(id);
                }
                ChatEvent::MessageDone { message } => {
                    store.append_message(self.conversation, message).await?;
                }
                ChatEvent::ToolCallProposed {
                    call_id,
                    server: Some(server),
                    tool: Some(tool),
                    arguments,
                    ..
                } => {
                    if let (Some(msg), Ok(server)) = (last_answer, Host::server_id(server)) {
                        let rec = store
                            .record_tool_call(
                                msg,
                                &NewToolCall {
                                    call_id,
                                    server: &server,
                                    tool,
                                    arguments,
                                },
                            )
                            .await?;
                        calls.insert(call_id.clone(), (rec, false));
                    }
                }
                ChatEvent::ToolRunning { call_id } => {
                    if let Some((rec, ran)) = calls.get_mut(call_id) {
                        store
                            .record_approval(*rec, ApprovalDecision::Allow, &DecidedBy::User, None)
                            .await?;
                        store.start_tool_call(*rec).await?;
                        *ran = true;
                    }
                }
                ChatEvent::ToolResult {
                    call_id,
                    is_error,
                    full,
                    content,
                    ..
                } => {
                    if let Some((rec, ran)) = calls.remove(call_id) {
                        let end = if ran {
                            ToolCallEnd::Done
                        } else {
                            // Refused before it ran: denied by the user, or invalid.
                            let why = content.iter().find_map(|c| match c {
                                crate::llm::ResultPart::Text { text } => Some(text.as_str()),
                                _ => None,
                            });
                            if why.is_some_and(|w| w.starts_with("The user did not allow")) {
                                store
                                    .record_approval(
                                        rec,
                                        ApprovalDecision::Deny,
                                        &DecidedBy::User,
                                        why,
                                    )
                                    .await?;
                            }
                            ToolCallEnd::Denied
                        };
                        store
                            .finish_tool_call(rec, end, full.as_ref(), *is_error)
                            .await?;
                    }
                }
                ChatEvent::Partial { message } => partial = Some(message.clone()),
                ChatEvent::Cancelled | ChatEvent::Failed { .. } => {
                    if let Some((id, so_far, _)) = answer.take() {
                        let parts = partial
                            .take()
                            .map(|m| m.parts)
                            .unwrap_or_else(|| vec![Part::Text { text: so_far }]);
                        let end = match &ev {
                            ChatEvent::Failed { error } => MessageEnd::Failed {
                                error: error.clone(),
                            },
                            _ => MessageEnd::Cancelled,
                        };
                        store
                            .finish_assistant_message(id, &parts, end, usage.take())
                            .await?;
                    }
                }
                _ => {}
            }
            let _ = out.send(ev);
        }
        Ok(())
    }
}

//! The conversation store's side of a turn: [`Writer`] turns a turn's events into rows as they
//! arrive (the answer checkpointed, tool calls recorded against the answer that asked for
//! them, results appended) and passes each on to the caller once it is stored (ST-02). Kept
//! apart from `chat.rs`, which decides what a turn is.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::approval::AllowedBy;
use crate::chat::ChatEvent;
use crate::host::{Host, HostError};
use crate::ids::{ConversationId, MessageId, ToolCallRecordId};
use crate::llm::{Message, Part, Role, StopReason, Usage};
use crate::store::{ApprovalDecision, DecidedBy, MessageEnd, NewToolCall, ToolCallEnd};

/// Writes a turn's events to the store, then passes them on.
pub(super) struct Writer<'a> {
    pub(super) host: &'a Host,
    pub(super) conversation: &'a ConversationId,
    pub(super) provider: &'a str,
    pub(super) model: &'a str,
}

/// What the writer keeps between events of one turn.
#[derive(Default)]
struct Rows {
    /// The answer being streamed: its row, its text so far, when it was last checkpointed.
    answer: Option<(MessageId, String, Instant)>,
    /// The last finished answer: the tool calls proposed next are recorded against it.
    last_answer: Option<MessageId>,
    /// The usage of the model call the next finished answer is.
    usage: Option<Usage>,
    /// What arrived of an answer cut off, with its tool calls.
    partial: Option<Message>,
    /// The recorded tool calls by call id, and whether each was started.
    calls: HashMap<String, (ToolCallRecordId, bool)>,
}

impl Writer<'_> {
    /// `begun` is an answer row already opened (regenerate opens it with the supersession).
    pub(super) async fn run(
        self,
        mut rx: mpsc::UnboundedReceiver<ChatEvent>,
        out: mpsc::UnboundedSender<ChatEvent>,
        begun: Option<MessageId>,
    ) -> Result<(), HostError> {
        let mut rows = Rows {
            answer: begun.map(|id| (id, String::new(), Instant::now())),
            ..Rows::default()
        };
        while let Some(ev) = rx.recv().await {
            self.write(&mut rows, &ev).await?;
            let _ = out.send(ev);
        }
        Ok(())
    }

    /// Stores what `ev` changes.
    async fn write(&self, rows: &mut Rows, ev: &ChatEvent) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        match ev {
            ChatEvent::TextDelta { text } => self.delta(rows, text).await?,
            ChatEvent::Usage { usage: u } => rows.usage = Some(*u),
            ChatEvent::MessageDone { message } if message.role == Role::Assistant => {
                self.answered(rows, message).await?;
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
                if let (Some(msg), Ok(server)) = (rows.last_answer, Host::server_id(server)) {
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
                    rows.calls.insert(call_id.clone(), (rec, false));
                }
            }
            ChatEvent::ToolRunning {
                call_id,
                edited_arguments,
                allowed_by,
            } => {
                if let Some((rec, ran)) = rows.calls.get_mut(call_id) {
                    self.running(*rec, edited_arguments.as_ref(), allowed_by.as_ref())
                        .await?;
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
                if let Some((rec, ran)) = rows.calls.remove(call_id) {
                    self.finished(rec, ran, *is_error, full.as_ref(), content)
                        .await?;
                }
            }
            ChatEvent::Partial { message } => rows.partial = Some(message.clone()),
            ChatEvent::Cancelled | ChatEvent::Failed { .. } => self.cut_off(rows, ev).await?,
            _ => {}
        }
        Ok(())
    }

    /// More of the answer: its row opened on the first text, checkpointed at most once a
    /// second.
    async fn delta(&self, rows: &mut Rows, text: &str) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        if rows.answer.is_none() {
            let id = store
                .begin_assistant_message(self.conversation, self.provider, self.model)
                .await?;
            rows.answer = Some((id, String::new(), Instant::now()));
        }
        if let Some((id, so_far, last)) = rows.answer.as_mut() {
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
        Ok(())
    }

    /// The answer is whole: its row finished with its usage.
    async fn answered(&self, rows: &mut Rows, message: &Message) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        let id = match rows.answer.take() {
            Some((id, ..)) => id,
            None => {
                store
                    .begin_assistant_message(self.conversation, self.provider, self.model)
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
                rows.usage.take(),
            )
            .await?;
        rows.last_answer = Some(id);
        Ok(())
    }

    /// A recorded call was approved and sent: its approval (who allowed it, and why) and its
    /// start.
    async fn running(
        &self,
        rec: ToolCallRecordId,
        edited_arguments: Option<&serde_json::Value>,
        allowed_by: Option<&AllowedBy>,
    ) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        // The proposed arguments stay on the call; what really ran is kept with the approval
        // that changed it.
        let edited = edited_arguments.map(|a| format!("approved with edited arguments: {a}"));
        let by = match allowed_by {
            Some(AllowedBy::Grant(id)) => DecidedBy::Grant {
                grant_id: id.clone(),
            },
            Some(_) => DecidedBy::Policy,
            None => DecidedBy::User,
        };
        let reason = match (allowed_by, edited) {
            (Some(AllowedBy::Grant(id)), _) => Some(format!("allowed by the grant {id}")),
            (Some(AllowedBy::Rule(id)), _) => Some(format!("allowed by the policy rule {id}")),
            (Some(AllowedBy::Default), _) => Some("allowed by the policy's default".into()),
            (None, edited) => edited,
        };
        store
            .record_approval(rec, ApprovalDecision::Allow, &by, reason.as_deref())
            .await?;
        store.start_tool_call(rec).await?;
        Ok(())
    }

    /// A recorded call's result: done when it ran, else denied (with who refused it, read
    /// from the sentence the model got).
    async fn finished(
        &self,
        rec: ToolCallRecordId,
        ran: bool,
        is_error: bool,
        full: Option<&serde_json::Value>,
        content: &[crate::llm::ResultPart],
    ) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        let end = if ran {
            ToolCallEnd::Done
        } else {
            // Refused before it ran: denied by the user, or invalid.
            let why = content.iter().find_map(|c| match c {
                crate::llm::ResultPart::Text { text } => Some(text.as_str()),
                _ => None,
            });
            let by = match why {
                Some(w) if w.starts_with("The user did not allow") => Some(DecidedBy::User),
                Some(w) if w.starts_with("The approval policy did not allow") => {
                    Some(DecidedBy::Policy)
                }
                _ => None,
            };
            if let Some(by) = by {
                store
                    .record_approval(rec, ApprovalDecision::Deny, &by, why)
                    .await?;
            }
            ToolCallEnd::Denied
        };
        store.finish_tool_call(rec, end, full, is_error).await?;
        Ok(())
    }

    /// The turn was cancelled or failed: the answer being streamed keeps what arrived.
    async fn cut_off(&self, rows: &mut Rows, ev: &ChatEvent) -> Result<(), HostError> {
        let Some((id, so_far, _)) = rows.answer.take() else {
            return Ok(());
        };
        let parts = rows
            .partial
            .take()
            .map(|m| m.parts)
            .unwrap_or_else(|| vec![Part::Text { text: so_far }]);
        let end = match ev {
            ChatEvent::Failed { error } => MessageEnd::Failed {
                error: error.clone(),
            },
            _ => MessageEnd::Cancelled,
        };
        self.host
            .inner
            .store
            .finish_assistant_message(id, &parts, end, rows.usage.take())
            .await?;
        Ok(())
    }
}

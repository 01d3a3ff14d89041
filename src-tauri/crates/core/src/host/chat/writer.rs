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

impl Writer<'_> {
    /// `begun` is an answer row already opened (regenerate opens it with the supersession).
    pub(super) async fn run(
        self,
        mut rx: mpsc::UnboundedReceiver<ChatEvent>,
        out: mpsc::UnboundedSender<ChatEvent>,
        begun: Option<MessageId>,
    ) -> Result<(), HostError> {
        let store = &self.host.inner.store;
        let mut answer: Option<(MessageId, String, Instant)> =
            begun.map(|id| (id, String::new(), Instant::now()));
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
                ChatEvent::ToolRunning {
                    call_id,
                    edited_arguments,
                    allowed_by,
                } => {
                    if let Some((rec, ran)) = calls.get_mut(call_id) {
                        // The proposed arguments stay on the call; what really ran is kept
                        // with the approval that changed it.
                        let edited = edited_arguments
                            .as_ref()
                            .map(|a| format!("approved with edited arguments: {a}"));
                        let by = match allowed_by {
                            Some(AllowedBy::Grant(id)) => DecidedBy::Grant {
                                grant_id: id.clone(),
                            },
                            Some(_) => DecidedBy::Policy,
                            None => DecidedBy::User,
                        };
                        let reason = match (allowed_by, edited) {
                            (Some(AllowedBy::Grant(id)), _) => {
                                Some(format!("allowed by the grant {id}"))
                            }
                            (Some(AllowedBy::Rule(id)), _) => {
                                Some(format!("allowed by the policy rule {id}"))
                            }
                            (Some(AllowedBy::Default), _) => {
                                Some("allowed by the policy's default".into())
                            }
                            (None, edited) => edited,
                        };
                        store
                            .record_approval(*rec, ApprovalDecision::Allow, &by, reason.as_deref())
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
                            let by = match why {
                                Some(w) if w.starts_with("The user did not allow") => {
                                    Some(DecidedBy::User)
                                }
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

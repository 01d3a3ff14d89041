//! Chat turns: one user message in, the turn's events out on a Channel, stopped through the
//! run the host minted (`open_run` / `cancel_run`, as for tool runs). Tool calls the model asks
//! for go through the same approval dialog as manual runs (Origin "model" with the
//! conversation id); nothing here decides anything.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::agent_data::AgentName;
use switchboard_core::chat::ChatEvent;
use switchboard_core::host::{Host, SendRequest, TurnInput};
use switchboard_core::ids::ServerId;
use switchboard_core::llm::{Part, StopReason, Usage};
use tauri::ipc::Channel;
use tauri::State;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::apps::AppViews;
use super::content::ProgressDto;
use super::conversations::{conversation_id, message_id, result_text};
use super::providers::optional;
use super::run::parse_run;
use super::{logged, IpcError};

/// The longest message accepted.
const TEXT_MAX: usize = 512 * 1024;
/// Tool result text sent to the window at most (the store keeps the whole result).
const RESULT_TEXT_MAX: usize = 64 * 1024;

/// How many distinct values of one kind were redacted before sending (issue 16).
#[derive(Clone, Debug, Serialize, Type)]
pub struct RedactedCountDto {
    /// The kind's stable id: `email`, `api_key`, `jwt`, `private_key`, `url_password`,
    /// `card`, `phone` or `custom`.
    pub kind: String,
    /// How many distinct values.
    pub count: u32,
    /// For a person: "2 e-mail addresses".
    pub label: String,
}

/// One step of a turn, as the chat view shows it. All text is untrusted.
#[derive(Clone, Debug, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ChatEventDto {
    /// More answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model asked for a tool call; approval comes next.
    ToolCallProposed {
        /// The vendor's call id.
        call_id: String,
        /// The LLM-facing name.
        name: String,
        /// The server, when the name resolves.
        server: Option<String>,
        /// The tool, when the name resolves.
        tool: Option<String>,
        /// The arguments, pretty-printed JSON.
        arguments: String,
    },
    /// The call was approved and runs.
    ToolRunning {
        /// The call.
        call_id: String,
        /// The arguments the person edited before approving (pretty JSON), when they did.
        edited_arguments: Option<String>,
    },
    /// The running call reported progress.
    ToolProgress {
        /// The call.
        call_id: String,
        /// The progress.
        progress: ProgressDto,
    },
    /// The call ended (or was refused).
    ToolResult {
        /// The call.
        call_id: String,
        /// Whether it failed, was denied or was invalid.
        is_error: bool,
        /// Its text, joined (capped).
        text: String,
        /// How long it took.
        duration_ms: f64,
        /// The MCP App to show under it: the `ui://` view the result links to, or else the
        /// view its tool declares; `None` when the call did not run or has no view.
        app_view: Option<String>,
    },
    /// Tokens used by one model call.
    Usage {
        /// Input tokens.
        input_tokens: f64,
        /// Output tokens.
        output_tokens: f64,
    },
    /// A message joined the transcript.
    MessageDone,
    /// The turn is over.
    Done {
        /// Why the model stopped.
        stop: String,
        /// Input tokens of the whole turn.
        input_tokens: f64,
        /// Output tokens of the whole turn.
        output_tokens: f64,
    },
    /// The turn failed.
    Failed {
        /// What happened, for a person.
        error: String,
    },
    /// The user stopped the turn.
    Cancelled,
    /// Older messages were summarized to fit the model's context window.
    Compacted {
        /// The summary the model reads instead of them.
        summary: String,
        /// How many messages it stands in for.
        messages: u32,
    },
    /// Before a model request: secrets and personal data were replaced by placeholders in
    /// what was sent (issue 16); counts by kind, never the values.
    Redacted {
        /// What was replaced, by kind.
        counts: Vec<RedactedCountDto>,
    },
    /// The answer so far, when the turn ended early.
    Partial {
        /// Its text.
        text: String,
    },
    /// Before a model request: what its tool definitions cost (issue 16).
    ToolsCost {
        /// How many tools are offered.
        tools: u32,
        /// Their tokens, with the vendor's per-request overhead.
        tokens: f64,
        /// Whether `tokens` is an estimate (not the vendor's own tokenizer).
        estimate: bool,
        /// The model's context window, in tokens.
        context_window: u32,
        /// `tokens` as a share of the window, in percent.
        share_percent: f64,
    },
    /// The tool definitions take more than the set share of the window; the turn still runs.
    ToolsOverBudget {
        /// Their tokens.
        tokens: f64,
        /// The model's context window, in tokens.
        context_window: u32,
        /// Their share, in percent.
        share_percent: f64,
        /// The share past which this warns, in percent.
        limit_percent: u32,
    },
    /// The conversation's agent handed it over; what follows is `to`'s answer.
    HandedOver {
        /// The agent that handed over.
        from: String,
        /// The agent taking over.
        to: String,
        /// Its note (a model's words, untrusted text).
        note: String,
    },
}

fn cap(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("\n… (cut)");
    }
    s
}

fn stop_text(s: &StopReason) -> String {
    match s {
        StopReason::EndTurn => "end_turn".into(),
        StopReason::ToolUse => "tool_use".into(),
        StopReason::MaxTokens => "max_tokens".into(),
        StopReason::ContentFilter => "content_filter".into(),
        StopReason::Other(o) => cap(o.clone(), 200),
    }
}

fn tokens(u: &Usage) -> (f64, f64) {
    (u.input_tokens as f64, u.output_tokens as f64)
}

impl From<ChatEvent> for ChatEventDto {
    #[allow(clippy::too_many_lines)] // one arm per chat event: the wire shape of each, side by side
    fn from(e: ChatEvent) -> Self {
        match e {
            ChatEvent::TextDelta { text } => Self::TextDelta { text },
            ChatEvent::ToolCallProposed {
                call_id,
                name,
                server,
                tool,
                arguments,
            } => Self::ToolCallProposed {
                call_id,
                name,
                server,
                tool,
                arguments: serde_json::to_string_pretty(&arguments).unwrap_or_default(),
            },
            ChatEvent::ToolRunning {
                call_id,
                edited_arguments,
                ..
            } => Self::ToolRunning {
                call_id,
                edited_arguments: edited_arguments
                    .map(|a| serde_json::to_string_pretty(&a).unwrap_or_default()),
            },
            ChatEvent::ToolProgress { call_id, progress } => Self::ToolProgress {
                call_id,
                progress: progress.into(),
            },
            ChatEvent::ToolResult {
                call_id,
                content,
                is_error,
                duration_ms,
                ..
            } => Self::ToolResult {
                call_id,
                is_error,
                text: cap(result_text(&content), RESULT_TEXT_MAX),
                duration_ms: duration_ms as f64,
                app_view: None,
            },
            ChatEvent::Usage { usage } => {
                let (input_tokens, output_tokens) = tokens(&usage);
                Self::Usage {
                    input_tokens,
                    output_tokens,
                }
            }
            ChatEvent::MessageDone { .. } => Self::MessageDone,
            ChatEvent::Done { stop, usage } => {
                let (input_tokens, output_tokens) = tokens(&usage);
                Self::Done {
                    stop: stop_text(&stop),
                    input_tokens,
                    output_tokens,
                }
            }
            ChatEvent::Failed { error } => Self::Failed { error },
            ChatEvent::Cancelled => Self::Cancelled,
            ChatEvent::Compacted { summary, messages } => Self::Compacted { summary, messages },
            ChatEvent::Partial { message } => Self::Partial {
                text: message.text(),
            },
            ChatEvent::ToolsCost {
                tools,
                tokens,
                estimate,
                context_window,
                share_percent,
            } => Self::ToolsCost {
                tools,
                tokens: tokens as f64,
                estimate,
                context_window,
                share_percent,
            },
            ChatEvent::ToolsOverBudget {
                tokens,
                context_window,
                share_percent,
                limit_percent,
            } => Self::ToolsOverBudget {
                tokens: tokens as f64,
                context_window,
                share_percent,
                limit_percent,
            },
            ChatEvent::Redacted { counts } => Self::Redacted {
                counts: counts
                    .into_iter()
                    .map(|c| RedactedCountDto {
                        kind: c.kind,
                        count: c.count,
                        label: c.label,
                    })
                    .collect(),
            },
            ChatEvent::HandedOver { from, to, note } => Self::HandedOver {
                from,
                to,
                note: cap(note, 4_000),
            },
        }
    }
}

/// An image the person attached.
#[derive(Clone, Debug, Deserialize, Type)]
pub struct ImageDto {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// Base64 data.
    pub data: String,
}

/// What a turn answers.
#[derive(Clone, Debug, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnInputDto {
    /// A new message: text (attachments already inlined by the window) and images.
    Message {
        /// The text.
        text: String,
        /// Attached images.
        images: Vec<ImageDto>,
    },
    /// Edit-and-resend one of the person's messages.
    Edit {
        /// The message edited (its id, as text).
        message: String,
        /// Its new text.
        text: String,
    },
    /// Answer the last message again.
    Regenerate,
}

/// Images attached to one message at most.
const IMAGES_MAX: usize = 8;

fn input(dto: TurnInputDto) -> Result<TurnInput, IpcError> {
    let text_part = |text: String| {
        if text.len() > TEXT_MAX {
            Err(IpcError::invalid(
                "a message must be at most 512 KB of text",
            ))
        } else {
            Ok(Part::Text { text })
        }
    };
    Ok(match dto {
        TurnInputDto::Message { text, images } => {
            if images.len() > IMAGES_MAX {
                return Err(IpcError::invalid("attach at most 8 images to one message"));
            }
            let mut parts = Vec::with_capacity(1 + images.len());
            if !text.trim().is_empty() {
                parts.push(text_part(text)?);
            }
            parts.extend(images.into_iter().map(|i| Part::Image {
                mime_type: i.mime_type,
                data: i.data,
            }));
            TurnInput::Message(parts)
        }
        TurnInputDto::Edit { message, text } => TurnInput::Edit {
            message: message_id(&message)?,
            parts: vec![text_part(text)?],
        },
        TurnInputDto::Regenerate => TurnInput::Regenerate,
    })
}

/// Servers one message may name as the sources of what it carries, at most.
const ATTACHED_MAX: usize = 64;

/// The servers a message names as the sources of what it carries.
fn attached(names: &[String]) -> Result<Vec<ServerId>, IpcError> {
    if names.len() > ATTACHED_MAX {
        return Err(IpcError::invalid(format!(
            "a message names at most {ATTACHED_MAX} source servers"
        )));
    }
    Ok(names
        .iter()
        .map(|s| Host::server_id(s))
        .collect::<Result<Vec<_>, _>>()?)
}

/// The core's request from the window's arguments. They are checked in the order written
/// (struct fields evaluate in order), so the first problem named does not depend on others.
fn request(
    input: TurnInputDto,
    conversation: Option<String>,
    provider: &str,
    model: Option<String>,
    attached: &[String],
    run_id: &str,
    agent: Option<String>,
) -> Result<SendRequest, IpcError> {
    Ok(SendRequest {
        input: self::input(input)?,
        conversation: conversation.as_deref().map(conversation_id).transpose()?,
        provider: Host::provider_name(provider)?,
        model: optional("model", model)?,
        attached: self::attached(attached)?,
        run: Some(parse_run(run_id)?),
        agent: agent
            .map(|a| AgentName::new(&a).map_err(|e| IpcError::invalid(e.to_string())))
            .transpose()?,
        max_steps: None,
        discovery: None,
    })
}

/// Forwards a turn's events to the window. It keeps draining after the window went away, so
/// the turn never blocks on it; the task ends when the turn drops its sender.
fn forward(
    host: Host,
    on_event: Channel<ChatEventDto>,
) -> (UnboundedSender<ChatEvent>, JoinHandle<()>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut open = true;
        let mut views = AppViews::new(host);
        while let Some(e) = rx.recv().await {
            if !open {
                continue;
            }
            let app_view = views.of(&e).await;
            let mut dto = ChatEventDto::from(e);
            if let ChatEventDto::ToolResult { app_view: slot, .. } = &mut dto {
                *slot = app_view;
            }
            if on_event.send(dto).is_err() {
                open = false;
            }
        }
    });
    (tx, task)
}

/// Runs a turn in `conversation` (a new one when `None`, for a new message only): a new
/// message, an edit of an earlier one, or a regenerated answer. `attached` names the servers
/// the message brings something from (attached resources, slash prompts), for the trifecta
/// guard. With `agent`, that agent profile answers (its provider and model replace
/// `provider` and `model`, which must still name a configured provider) and may delegate and
/// hand over. `discovery` switches progressive discovery on or off for the conversation first
/// (how a new chat starts with it). Its events arrive on `on_event`; `cancel_run` with `run_id`
/// stops it. Returns the conversation id once the turn is over.
#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments)]
#[tracing::instrument(skip_all, fields(
    run = %logged(&run_id),
    conversation = conversation.as_deref().map(logged),
    provider = %logged(&provider),
    model = model.as_deref().map(logged),
))]
pub async fn send_message(
    host: State<'_, Host>,
    run_id: String,
    conversation: Option<String>,
    provider: String,
    model: Option<String>,
    input: TurnInputDto,
    attached: Vec<String>,
    agent: Option<String>,
    discovery: Option<bool>,
    on_event: Channel<ChatEventDto>,
) -> Result<String, IpcError> {
    let mut req = request(
        input,
        conversation,
        &provider,
        model,
        &attached,
        &run_id,
        agent,
    )?;
    req.discovery = discovery;
    drive(host.inner(), req, on_event).await
}

/// Runs the turn `req`, its events forwarded to the window; the conversation's id when done.
async fn drive(
    host: &Host,
    req: SendRequest,
    on_event: Channel<ChatEventDto>,
) -> Result<String, IpcError> {
    let (tx, forwarding) = forward(host.clone(), on_event);
    let outcome = host.send_message(req, tx).await;
    let _ = forwarding.await;
    Ok(outcome?.conversation.to_string())
}

//! [`ChatEvent`]: what a turn tells the shells (the desktop's chat view, the CLI, the store
//! writer) as it happens, in order.

use serde::Serialize;
use serde_json::Value;

use crate::llm::{Message, ResultPart, StopReason, Usage};
use crate::mcp::catalog::Progress;

/// One step of a turn.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ChatEvent {
    /// More answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model asked for a tool call. `server`/`tool` are `None` for a name no server
    /// offers (the model is told so).
    ToolCallProposed {
        /// The vendor's call id.
        call_id: String,
        /// The LLM-facing name the model used.
        name: String,
        /// The server, when the name resolves.
        server: Option<String>,
        /// The tool as the server names it, when the name resolves.
        tool: Option<String>,
        /// The arguments exactly as the model sent them.
        arguments: Value,
    },
    /// The call passed approval and runs.
    ToolRunning {
        /// The call.
        call_id: String,
        /// The arguments the person edited before approving, when they did; the call runs
        /// with these, and the model is told so with the result.
        edited_arguments: Option<Value>,
        /// The policy rule or grant that allowed it without asking; `None` when a person
        /// approved it.
        allowed_by: Option<crate::approval::AllowedBy>,
    },
    /// The running call reported progress.
    ToolProgress {
        /// The call.
        call_id: String,
        /// The progress.
        progress: Progress,
    },
    /// The call ended (or was refused); `content` is what the model sees.
    ToolResult {
        /// The call.
        call_id: String,
        /// What goes back to the model (possibly capped).
        content: Vec<ResultPart>,
        /// Whether it failed, was denied, or was invalid.
        is_error: bool,
        /// The whole result before capping, as JSON, for the store; `None` when nothing ran.
        full: Option<Value>,
        /// How long it took, in milliseconds.
        duration_ms: u64,
    },
    /// Tokens used by one model call.
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// A message joined the transcript: an assistant answer, or the user-role message that
    /// carries tool results back. The store appends exactly these.
    MessageDone {
        /// The message.
        message: Message,
    },
    /// The turn is over; the model finished.
    Done {
        /// Why the last model call stopped.
        stop: StopReason,
        /// Tokens used by the whole turn.
        usage: Usage,
    },
    /// The turn failed; the partial answer, if any, came as `Partial` first.
    Failed {
        /// What happened, for a person.
        error: String,
    },
    /// The user stopped the turn; the partial answer, if any, came as `Partial` first.
    Cancelled,
    /// Before the turn: older messages were summarized to fit the model's context window. The
    /// summary stands in for them in requests; they stay in the store.
    Compacted {
        /// The summary, as the model will read it.
        summary: String,
        /// How many messages it stands in for.
        messages: u32,
    },
    /// The conversation's agent handed it over (issue 15): the next answer, in the same send,
    /// is `to`'s. Sent after `from`'s turn is done, before `to`'s begins.
    HandedOver {
        /// The agent that handed over.
        from: String,
        /// The agent taking over.
        to: String,
        /// Its note (a model's words).
        note: String,
    },
    /// Before each model request of a turn: what the tool definitions sent with it cost
    /// (issue 16). Exact for OpenAI models, an estimate otherwise (`llm::tokens`).
    ToolsCost {
        /// How many tools are offered.
        tools: u32,
        /// Their definitions' tokens, with the vendor's per-request overhead.
        tokens: u64,
        /// Whether `tokens` is an estimate.
        estimate: bool,
        /// The model's context window.
        context_window: u32,
        /// `tokens` as a share of `context_window`, in percent.
        share_percent: f64,
    },
    /// Sent right after `ToolsCost` when the definitions take more than the set share of the
    /// window: the turn still runs, but little room is left for the conversation.
    ToolsOverBudget {
        /// The definitions' tokens.
        tokens: u64,
        /// The model's context window.
        context_window: u32,
        /// Their share, in percent.
        share_percent: f64,
        /// The share past which this warns (the setting), in percent.
        limit_percent: u32,
    },
    /// Before a model call (issue 16, point 5): secrets and personal data in what was sent
    /// were replaced by placeholders. Sent when a turn's requests carry more than last said;
    /// counts of distinct values by kind, never the values.
    Redacted {
        /// What was replaced, by kind.
        counts: Vec<RedactedCount>,
    },
    /// The answer so far, when a turn ends early (cancelled or failed) mid-answer. The store
    /// keeps it, marked as such; it is not part of the transcript sent to models.
    Partial {
        /// The text received before the end.
        message: Message,
    },
}

/// How many distinct values of one kind a request had redacted ([`ChatEvent::Redacted`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RedactedCount {
    /// The kind's stable id (`email`, `api_key`, `jwt`, `private_key`, `url_password`,
    /// `card`, `phone`, `custom`).
    pub kind: String,
    /// How many distinct values.
    pub count: u32,
    /// For a person: "2 e-mail addresses".
    pub label: String,
}

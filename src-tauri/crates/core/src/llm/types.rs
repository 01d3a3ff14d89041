//! The provider-neutral transcript, requests and stream events, as the providers use them.
//!
//! The transcript and request types live in the [`crate::transcript`] leaf (so `store` and
//! `approval` can name them without depending on `llm`) and are re-exported here; what is left
//! is the one type only a provider produces, the [`StreamEvent`]s of a streamed answer, which
//! `assemble` folds into a [`Message`].

use serde::{Deserialize, Serialize};

pub use crate::transcript::{
    ChatRequest, Message, Part, ResultPart, Role, StopReason, ToolSpec, Usage,
};

/// One event of a streamed answer, in arrival order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A tool call begins. `index` orders parallel calls within the answer.
    ToolCallStart {
        /// Position among this answer's calls.
        index: usize,
        /// The vendor's call id.
        id: String,
        /// The LLM-facing tool name.
        name: String,
    },
    /// More of a tool call's argument JSON text.
    ToolCallDelta {
        /// Which call.
        index: usize,
        /// The next fragment of the arguments' JSON text.
        fragment: String,
    },
    /// Token usage (may arrive more than once; the last one wins per call).
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// The answer is complete.
    Done {
        /// Why it ended.
        stop: StopReason,
    },
}

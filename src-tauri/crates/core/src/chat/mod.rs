//! The agent loop: a person's message, a model that may call tools, and the answer.
//!
//! - [`turn`]: one turn as an explicit state machine emitting [`ChatEvent`]s.
//! - [`tools`]: the [`ToolRunner`] seam the turn runs calls through (`host::HostTools` fills
//!   it with the host's validation and approval seam), and what a started call reports.
//! - [`cap`]: the cap on what the model sees of one tool output, and the built-in tool that
//!   reads the rest.
//! - [`events`]: the `ChatEvent` enum.
//! - [`compact`]: context compaction (estimate, where to cut, the summary request).
//!
//! The loop knows nothing of storage: it appends to a transcript and says so in events; the
//! conversation service writes what the events say (user message first, the streaming answer
//! checkpointed, tool calls and results), so a turn is testable with a scripted provider and
//! runner alone.

pub mod cap;
pub mod compact;
pub mod events;
pub mod tools;
pub mod turn;

#[cfg(test)]
mod tests;

pub use events::ChatEvent;
pub use tools::{Started, ToolCall, ToolError, ToolRunner};
pub use turn::{run_turn, OfferHook, TurnBudget, TurnConfig, TurnEnd};

//! The tools a turn offers the model, and how a call the model asks for reaches a server.
//!
//! [`ToolRunner`] is the seam: the turn loop asks it for specs, resolves names through it and
//! runs calls with it, so the loop is tested with a scripted runner. The chat module defines
//! the seam and the host fills it, not the other way round: `chat` sits below `host` in
//! ARCHITECTURE's table, so it names what it needs here ([`ToolRunner`], [`Started`]) and
//! `host::HostTools` implements it by sending every call through `Host::run_tool`: argument
//! validation first (TD-07), then the approval seam (AP-01/AP-03), then the server.

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::approval::AllowedBy;
use crate::ids::ToolRef;
use crate::llm::ToolSpec;
use crate::mcp::catalog::{Arguments, Progress, ToolResult};

/// What a runner tells the turn once a call passed approval and is sent (the host's
/// `Host::run_tool` fires it just before the call goes out; dropped unfired when refused).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Started {
    /// The arguments the person edited before approving; the call runs with these instead of
    /// the requested ones.
    pub edited: Option<Arguments>,
    /// The rule or grant that allowed it without asking; `None` when a person approved it.
    pub allowed_by: Option<AllowedBy>,
    /// The grant the person made while approving ("this conversation" / "always").
    pub granted: Option<String>,
}

/// One call of a server's tool, as the turn hands it to a runner: what to run, and the
/// turn's ends of the call (its cancel token, where progress goes, who hears it start).
/// Wrappers pass it on whole, changing what they must (the arguments, when restoring).
#[derive(Debug)]
pub struct ToolCall {
    /// The server tool.
    pub tool: ToolRef,
    /// Its arguments, a JSON object.
    pub arguments: Map<String, Value>,
    /// Cancels this call only (a child of the turn's token).
    pub cancel: CancellationToken,
    /// The server's progress notifications for the call.
    pub progress: mpsc::UnboundedSender<Progress>,
    /// Fired once the call is approved and sent (see [`Started`]).
    pub started: oneshot::Sender<Started>,
}

impl ToolCall {
    /// A call of `tool` with `arguments`, its progress and start going nowhere: for callers
    /// that only want the result.
    pub fn new(tool: ToolRef, arguments: Map<String, Value>, cancel: CancellationToken) -> Self {
        let (progress, _) = mpsc::unbounded_channel();
        let (started, _) = oneshot::channel();
        Self {
            tool,
            arguments,
            cancel,
            progress,
            started,
        }
    }
}

/// Why a call gave the model no result. Its text is the sentence the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The person refused the call.
    #[error("The user did not allow this call ({reason}).")]
    DeniedByPerson {
        /// What the approval said.
        reason: String,
    },
    /// The approval policy refused the call.
    #[error("The approval policy did not allow this call: {reason}.")]
    DeniedByPolicy {
        /// The rule's reason.
        reason: String,
    },
    /// The arguments do not match the tool's input schema (TD-07).
    #[error("The arguments do not match the tool's input schema: {}", .errors.join("; "))]
    InvalidArguments {
        /// One line per mismatch.
        errors: Vec<String>,
    },
    /// The call was cancelled before it answered.
    #[error("The call was cancelled.")]
    Cancelled,
    /// An agent's scope does not hold the tool.
    #[error("There is no tool named {tool} for this agent.")]
    OutOfScope {
        /// The tool asked for.
        tool: ToolRef,
    },
    /// An agent's profile denies the tool.
    #[error("Agent {agent}'s policy does not allow {tool}; do without it.")]
    DeniedByAgent {
        /// The agent.
        agent: String,
        /// The tool.
        tool: ToolRef,
    },
    /// The call could not be made or the server failed it.
    #[error("The call failed: {0}")]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// Runs the tools of one turn.
pub trait ToolRunner: Send + Sync {
    /// The tools offered to the model.
    fn specs(&self) -> Vec<ToolSpec>;
    /// The server tool behind an LLM-facing name.
    fn resolve(&self, llm_name: &str) -> Option<ToolRef>;
    /// Runs one call. `call.started` fires once it is approved and sent, with the arguments
    /// when the person edited them.
    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>>;

    /// Whether the runner answers `llm_name` itself, with no server behind it: an agent's
    /// built-in tools (delegation, the shared state). They are offered in [`Self::specs`] like
    /// any tool and [`Self::resolve`] does not know them.
    fn is_local(&self, _llm_name: &str) -> bool {
        false
    }

    /// How many tool calls one call of `llm_name` sends at most, for a tool-call budget
    /// ([`super::TurnBudget::tool_calls`]): 1 for a server's tool or a built-in one, an
    /// offered pipeline's number of steps (each step is a tool call). Wrappers forward it.
    fn calls_in(&self, _llm_name: &str) -> usize {
        1
    }

    /// Runs a local tool (see [`Self::is_local`]). `Err` is a sentence for the model.
    fn run_local(
        &self,
        llm_name: &str,
        _arguments: Map<String, Value>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        let why = format!("There is no tool named {llm_name:?}. Use one of the tools offered.");
        Box::pin(async move { Err(why) })
    }
}

/// A borrowed runner runs like the runner: wrappers take their inner runner by value, and a
/// `&dyn ToolRunner` is one.
impl<T: ToolRunner + ?Sized> ToolRunner for &T {
    fn specs(&self) -> Vec<ToolSpec> {
        (**self).specs()
    }
    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        (**self).resolve(llm_name)
    }
    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        (**self).run(call)
    }
    fn is_local(&self, llm_name: &str) -> bool {
        (**self).is_local(llm_name)
    }
    fn calls_in(&self, llm_name: &str) -> usize {
        (**self).calls_in(llm_name)
    }
    fn run_local(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        (**self).run_local(llm_name, arguments, cancel)
    }
}

/// An owned, boxed runner (a turn's composed wrappers) runs like the runner.
impl<T: ToolRunner + ?Sized> ToolRunner for Box<T> {
    fn specs(&self) -> Vec<ToolSpec> {
        (**self).specs()
    }
    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        (**self).resolve(llm_name)
    }
    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        (**self).run(call)
    }
    fn is_local(&self, llm_name: &str) -> bool {
        (**self).is_local(llm_name)
    }
    fn calls_in(&self, llm_name: &str) -> usize {
        (**self).calls_in(llm_name)
    }
    fn run_local(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        (**self).run_local(llm_name, arguments, cancel)
    }
}

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

/// Runs the tools of one turn.
pub trait ToolRunner: Send + Sync {
    /// The tools offered to the model.
    fn specs(&self) -> Vec<ToolSpec>;
    /// The server tool behind an LLM-facing name.
    fn resolve(&self, llm_name: &str) -> Option<ToolRef>;
    /// Runs one call. `started` fires once it is approved and sent, with the arguments when
    /// the person edited them. `Err` is a sentence for the model (denied, invalid, failed).
    fn run(
        &self,
        tool: ToolRef,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Progress>,
        started: oneshot::Sender<Started>,
    ) -> BoxFuture<'_, Result<ToolResult, String>>;

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

//! An agent's view of the tools (issue 15): the host's tools cut to the agent's scope, its
//! policy tightenings applied before anything reaches the approval seam, and its built-in
//! tools (the run's shared state).
//!
//! [`AgentTools`] wraps the runner a turn would get (the host's tools, as [`BaseTools`]) and
//! is itself a
//! [`ToolRunner`], so the turn loop runs an agent exactly as it runs a conversation: same
//! validation, same approval seam, same audit. What the agent may not see is neither offered
//! (`specs`) nor resolvable (`resolve`): a model that names a tool outside its scope gets "no
//! such tool", the same answer as for a tool that does not exist, so the scope does not leak
//! what else is configured. Tightenings can only take away: `deny` refuses before the seam is
//! asked; `ask` tells the seam to ask a person even where the policy would allow the call.
//! Every call goes through the seam as this agent ([`AsAgent`]): the approval prompt
//! says which agent asks and for whom, the audit log names it as the actor.
//!
//! State tools are local (answered here, no server): a read is one agent's output reaching
//! another, so it is untrusted text like any tool result. So is the delegate tool
//! (`delegation`), offered only when the agent may delegate from where it is.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::delegation::{
    delegate_spec, parse_delegate, refusal, Lineage, DELEGATE_TOOL, MAX_CHILDREN,
};
use super::hand_over::{hand_over_spec, parse_hand_over, HandOver, HandOverSlot, HAND_OVER_TOOL};
use super::state::{is_state_tool, state_tool_specs, StateAuthor};
use super::{AgentHost, Agents};
use crate::agent_data::{AgentName, AgentProfile, Tighten};
use crate::approval::audit::{AuditContext, AuditEvent};
use crate::approval::Acting;
use crate::chat::{ToolCall, ToolError, ToolRunner, TurnEnd};
use crate::ids::ToolRef;
use crate::llm::ToolSpec;
use crate::mcp::catalog::{Content, ToolResult};

/// An agent making a call (issue 15): named in the approval prompt and the audit log, and,
/// when its profile tightens this tool to `ask`, why a person is asked even where the policy
/// would allow the call.
#[derive(Clone, Debug)]
pub struct AsAgent {
    /// Who asks, for whom.
    pub acting: Acting,
    /// The tightening's reason, when the profile says `ask` for this tool.
    pub ask: Option<String>,
}

/// The tools an agent's are cut from: the host's tools of the conversation (every call
/// through the governed seam), with the saved pipelines offered in this turn. The host
/// implements it (`host/agents.rs`); the agent adds its scope, tightenings and built-in tools.
pub trait BaseTools: ToolRunner {
    /// Runs `call` through the seam as `agent`.
    fn run_as(
        &self,
        call: ToolCall,
        agent: AsAgent,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>>;
    /// The pipeline tools `profile`'s agent may run: every step in its scope, none denied.
    fn pipeline_specs_for(&self, profile: &AgentProfile) -> Vec<ToolSpec>;
    /// Whether `llm_name` is a pipeline offered in this turn.
    fn offers_pipeline(&self, llm_name: &str) -> bool;
    /// Runs the pipeline offered as `llm_name` as the agent `acting` with `profile` (its scope
    /// and tightenings apply to every step). `Err` is a sentence for the model.
    fn run_pipeline_as<'a>(
        &'a self,
        llm_name: &'a str,
        arguments: Map<String, Value>,
        acting: &'a Acting,
        profile: &'a AgentProfile,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ToolResult, String>>;
}

/// The tools one agent sees in one run.
pub struct AgentTools {
    inner: Arc<dyn BaseTools>,
    host: Arc<dyn AgentHost>,
    profile: AgentProfile,
    lineage: Lineage,
    specs: Vec<ToolSpec>,
    /// Whether the delegate tool is offered.
    delegates: bool,
    /// Tasks delegated so far (at most `MAX_CHILDREN`).
    children: AtomicUsize,
    /// Where a hand-over is left, when this agent runs a conversation and may hand it over.
    hand_over: Option<HandOverSlot>,
}

impl AgentTools {
    /// `inner`'s tools as `profile` may see them, plus the state tools of the lineage's run.
    pub fn new<H: AgentHost + Clone + 'static>(
        host: &H,
        inner: Arc<dyn BaseTools>,
        profile: AgentProfile,
        lineage: Lineage,
    ) -> Self {
        let mut specs: Vec<ToolSpec> = inner
            .specs()
            .into_iter()
            .filter(|s| {
                inner
                    .resolve(&s.name)
                    .is_some_and(|r| in_scope(&profile, &r))
            })
            .collect();
        specs.extend(state_tool_specs());
        // Saved pipelines offered to models, when every step is in scope and none denied.
        specs.extend(inner.pipeline_specs_for(&profile));
        Self {
            inner,
            host: Arc::new(host.clone()),
            profile,
            lineage,
            specs,
            delegates: false,
            children: AtomicUsize::new(0),
            hand_over: None,
        }
    }

    /// Offers the delegate tool, naming `choices` (the agents it may pick, with what they are
    /// for); nothing changes when there is none.
    pub fn with_delegation(mut self, choices: Vec<(AgentName, String)>) -> Self {
        if !choices.is_empty() {
            self.specs.push(delegate_spec(&choices));
            self.delegates = true;
        }
        self
    }

    /// Offers the hand-over tool (this agent runs a conversation), naming `choices`; a
    /// hand-over asked for is left in `slot`. Nothing changes when there is no choice.
    pub fn with_hand_over(mut self, choices: Vec<(AgentName, String)>, slot: HandOverSlot) -> Self {
        if !choices.is_empty() {
            self.specs.push(hand_over_spec(&choices));
            self.hand_over = Some(slot);
        }
        self
    }

    /// Records in the audit log that this agent handed `text` to `to` (by digest and size).
    async fn audit_hand_on(&self, tool: &str, to: &AgentName, hand_over: bool, text: &str) {
        let hand_on = HandOn {
            from: &self.profile.name,
            to,
            hand_over,
            text,
        };
        hand_on.audit(self.host.agents(), &self.lineage, tool).await;
    }

    /// Runs a hand-over call: leaves it for the conversation, to take effect when this turn
    /// ends. A second one in the same turn replaces the first (the last word counts).
    async fn hand_over(&self, arguments: &Map<String, Value>) -> Result<ToolResult, String> {
        let Some(slot) = &self.hand_over else {
            return Err(format!("There is no tool named {HAND_OVER_TOOL:?}."));
        };
        let (to, note) = parse_hand_over(&self.profile, arguments)?;
        // Audited by the conversation when it takes effect (`HandOn`): the turn may still end
        // otherwise (over budget, failed), and then nobody takes over.
        let text = format!(
            "Agent {to} takes over this conversation when you finish this answer; end with a \
             short word to the person."
        );
        if let Ok(mut s) = slot.lock() {
            *s = Some(HandOver {
                from: self.profile.name.clone(),
                to,
                note,
            });
        }
        Ok(text_result(text))
    }

    /// Runs a delegate call: the checks, then the child's task; its answer, or why not.
    async fn delegate(
        &self,
        arguments: &Map<String, Value>,
        cancel: CancellationToken,
    ) -> Result<ToolResult, String> {
        let (to, task) = parse_delegate(arguments)?;
        if let Some(why) = refusal(&self.profile, &self.lineage.above, &to) {
            return Err(why);
        }
        if self.children.fetch_add(1, Ordering::SeqCst) >= MAX_CHILDREN {
            return Err(format!(
                "At most {MAX_CHILDREN} delegations per task; finish with what you have."
            ));
        }
        self.audit_hand_on(DELEGATE_TOOL, &to, false, &task).await;
        let mut above = self.lineage.above.clone();
        above.push(self.profile.name.clone());
        let child = Lineage {
            above,
            ..self.lineage.clone()
        };
        let outcome = self
            .host
            .run_task(child, to.clone(), task, cancel)
            .await
            .map_err(|e| format!("Agent {to} could not start: {e}"))?;
        let answer = if outcome.answer.is_empty() {
            "(no answer)".to_owned()
        } else {
            outcome.answer
        };
        match outcome.end {
            TurnEnd::Done(_) => Ok(text_result(answer)),
            TurnEnd::BudgetExceeded(why) => Err(format!(
                "Agent {to} stopped: {why}. What it had so far: {answer}"
            )),
            TurnEnd::StepLimit => Err(format!(
                "Agent {to} stopped at its step limit. What it had so far: {answer}"
            )),
            TurnEnd::Failed(why) => Err(format!("Agent {to} failed: {why}")),
            TurnEnd::Cancelled => Err(format!("Agent {to} was stopped.")),
        }
    }

    /// This agent, and the one it works for (none: the person).
    pub fn acting(&self) -> Acting {
        Acting {
            agent: self.profile.name.clone(),
            for_agent: self.lineage.above.last().cloned(),
        }
    }

    /// The agent these tools are for.
    pub fn profile(&self) -> &AgentProfile {
        &self.profile
    }
}

fn in_scope(profile: &AgentProfile, r: &ToolRef) -> bool {
    profile.scope.allows(r.server.as_str(), &r.tool)
}

fn text_result(text: String) -> ToolResult {
    ToolResult {
        content: vec![Content::Text { text }],
        structured_content: None,
        is_error: false,
    }
}

impl ToolRunner for AgentTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        self.inner
            .resolve(llm_name)
            .filter(|r| in_scope(&self.profile, r))
    }

    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        let tool = &call.tool;
        // `resolve` already kept out-of-scope tools away; this is the second lock on the door.
        if !in_scope(&self.profile, tool) {
            let why = ToolError::OutOfScope { tool: tool.clone() };
            return Box::pin(async move { Err(why) });
        }
        let ask = match self
            .profile
            .tightening_for(tool.server.as_str(), &tool.tool)
        {
            None => None,
            Some(Tighten::Ask) => Some(format!(
                "Agent {}'s profile asks a person before every call of {tool}.",
                self.profile.name
            )),
            Some(Tighten::Deny) => {
                let why = ToolError::DeniedByAgent {
                    agent: self.profile.name.to_string(),
                    tool: tool.clone(),
                };
                return Box::pin(async move { Err(why) });
            }
        };
        let agent = AsAgent {
            acting: self.acting(),
            ask,
        };
        self.inner.run_as(call, agent)
    }

    fn is_local(&self, llm_name: &str) -> bool {
        is_state_tool(llm_name)
            || (self.delegates && llm_name == DELEGATE_TOOL)
            || (self.hand_over.is_some() && llm_name == HAND_OVER_TOOL)
            || (self.inner.offers_pipeline(llm_name)
                && self.specs.iter().any(|s| s.name == llm_name))
    }

    fn calls_in(&self, llm_name: &str) -> usize {
        self.inner.calls_in(llm_name)
    }

    fn run_local(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        let name = llm_name.to_owned();
        Box::pin(async move {
            if self.delegates && name == DELEGATE_TOOL {
                return self.delegate(&arguments, cancel).await;
            }
            if name == HAND_OVER_TOOL {
                return self.hand_over(&arguments).await;
            }
            if self.inner.offers_pipeline(&name) && self.specs.iter().any(|s| s.name == name) {
                let acting = self.acting();
                return self
                    .inner
                    .run_pipeline_as(&name, arguments, &acting, &self.profile, cancel)
                    .await;
            }
            let author = StateAuthor::Agent(self.profile.name.clone());
            match self
                .host
                .agents()
                .run_state_tool(&self.lineage.run, &author, &name, &arguments)
                .await
            {
                Some(Ok(text)) => Ok(text_result(text)),
                Some(Err(why)) => Err(why),
                None => Err(format!(
                    "There is no tool named {name:?}. Use one of the tools offered."
                )),
            }
        })
    }
}

/// A task or a conversation handed from one agent to another, for the audit log.
pub struct HandOn<'a> {
    /// Who hands it on.
    pub from: &'a AgentName,
    /// Who takes it.
    pub to: &'a AgentName,
    /// A hand-over of the conversation (else a delegated task).
    pub hand_over: bool,
    /// The task or the note (kept as digest and size only).
    pub text: &'a str,
}

impl HandOn<'_> {
    /// Records it against `lineage`'s run and conversation, as a call of `tool`.
    pub async fn audit(&self, agents: &Agents, lineage: &Lineage, tool: &str) {
        let event = AuditEvent::delegated(
            self.from.as_str(),
            self.to.as_str(),
            lineage.run.as_str(),
            self.hand_over,
            self.text,
        );
        let ctx = AuditContext {
            tool: Some(Arc::from(tool)),
            conversation: Some(lineage.conversation.clone()),
            ..AuditContext::default()
        };
        agents.audit.record(vec![(event, ctx)]).await;
    }
}

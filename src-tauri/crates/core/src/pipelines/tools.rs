//! A saved pipeline offered to a model as one tool (issue 15, point 6).
//!
//! Only pipelines whose definition says `offer = true` (`pipeline add --offer`) are offered: a
//! person decides which pipelines a model may start, as they decide which servers run. The
//! tool is bound to the version that was newest when the turn's tools were loaded, and it is
//! offered only when every step's server is running now and the whole pipeline passes its
//! check against the live catalogs (a switched-off or held tool, a bad mapping: not offered).
//! Its input schema is the pipeline's declared inputs.
//!
//! A call runs exactly as `switchboard pipeline run` does (`Pipelines::run_stored`): checked again,
//! approved by a person as a whole (the prompt shows every step and what flows where, and
//! names the conversation and the agent that asks), then every step through the governed seam
//! and the audit log; a step that writes still asks unless a rule allows it. The model gets
//! the last step's output after a short line per step; a refusal or a failed step is an error
//! sentence saying what ran.
//!
//! For an agent the pipeline must fit the agent's scope at every step
//! ([`pipeline_in_scope`]); a step its profile denies keeps the pipeline away from it, and a
//! step its profile says to ask about is asked about even after the whole was approved.
//!
//! # Names
//! `switchboard_pipeline_NAME`, with every `_` and `.` of the name written `-` and, when two
//! pipelines would get the same name (compared case-insensitively) or the name would pass 64
//! characters, `-` and 8 hex digits of the SHA-256 of the exact name at the end. After the
//! prefix there is no `_` at all, so `mcp::naming` can never give a server's tool one of these
//! names: its plain names contain `__`, and its hashed names are `{prefix}_{hex}` where the
//! prefix either contains `__` or is exactly 31, 47 or 55 characters long, never the 20 of
//! `switchboard_pipeline`. The test `no_server_tool_is_named_like_a_pipeline_tool` fails if
//! that ever stops being true. Nor is it a state or delegate tool's name (other prefixes).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::{Driven, Listed, PipelineError, PipelineHost, PipelineOutcome, Pipelines, RunStatus};
use crate::agent_data::{AgentProfile, Tighten, ToolScope};
use crate::approval::{Acting, Origin};
use crate::catalog::{Content, ToolResult};
use crate::error::HostError;
use crate::ids::ConversationId;
use crate::llm::ToolSpec;
use crate::mcp::naming::MAX_LEN;
use crate::pipeline_data::{check, Pipeline, PipelineName, ToolSchemas};

/// What every pipeline tool's name starts with.
pub const PIPELINE_TOOL_PREFIX: &str = "switchboard_pipeline_";

/// A pipeline as offered to a model in one turn: its tool name and the version it runs.
#[derive(Clone, Debug)]
pub struct OfferedPipeline {
    /// The name the model calls it by.
    pub llm_name: String,
    /// The definition, its version set.
    pub pipeline: Pipeline,
}

/// An agent starting a pipeline: named in the approval prompt and the audit log; its profile
/// must allow every step and may ask about some.
#[derive(Clone, Copy, Debug)]
pub struct PipelineAgent<'a> {
    /// Who asks, for whom.
    pub acting: &'a Acting,
    /// Its profile (scope and tightenings).
    pub profile: &'a AgentProfile,
}

/// Whether `llm_name` has the shape of a pipeline tool's name (see the module docs).
pub fn is_pipeline_tool_name(llm_name: &str) -> bool {
    llm_name
        .strip_prefix(PIPELINE_TOOL_PREFIX)
        .is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn hash8(name: &PipelineName) -> String {
    hex::encode(Sha256::digest(name.as_str().as_bytes()))[..8].to_owned()
}

/// The tool name of `name`: plain when `plain`, else with the hash suffix.
fn tool_name(name: &PipelineName, plain: bool) -> String {
    let written: String = name
        .as_str()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let whole = format!("{PIPELINE_TOOL_PREFIX}{written}");
    if plain && whole.len() <= MAX_LEN {
        return whole;
    }
    let keep = MAX_LEN - PIPELINE_TOOL_PREFIX.len() - 9;
    let short: String = written.chars().take(keep).collect();
    format!("{PIPELINE_TOOL_PREFIX}{short}-{}", hash8(name))
}

/// Names every pipeline: plain unless two would collide (case-insensitively); a collision
/// that survives the hash drops both rather than let one name mean two pipelines.
pub fn name_pipelines(pipelines: Vec<Pipeline>) -> Vec<OfferedPipeline> {
    let lower = |p: &Pipeline, plain| tool_name(&p.name, plain).to_ascii_lowercase();
    let mut count: HashMap<String, usize> = HashMap::new();
    for p in &pipelines {
        *count.entry(lower(p, true)).or_default() += 1;
    }
    let named: Vec<OfferedPipeline> = pipelines
        .into_iter()
        .map(|p| {
            let plain = count.get(&lower(&p, true)).is_some_and(|n| *n == 1);
            OfferedPipeline {
                llm_name: tool_name(&p.name, plain),
                pipeline: p,
            }
        })
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for o in &named {
        *seen.entry(o.llm_name.to_ascii_lowercase()).or_default() += 1;
    }
    named
        .into_iter()
        .filter(|o| seen.get(&o.llm_name.to_ascii_lowercase()) == Some(&1))
        .collect()
}

/// The tool a model sees for `o`.
pub fn pipeline_spec(o: &OfferedPipeline) -> ToolSpec {
    let p = &o.pipeline;
    let tools: Vec<&str> = p.steps.iter().map(|s| s.tool.as_str()).collect();
    let mut description = format!(
        "Runs the saved pipeline {} (version {}): {} tool calls in a fixed order ({}), each \
         step's output feeding the next. A person approves the whole run first. Returns the \
         last step's output.",
        p.name,
        p.version,
        p.steps.len(),
        tools.join(" -> ")
    );
    if !p.description.is_empty() {
        description = format!("{} {description}", p.description);
    }
    ToolSpec {
        name: o.llm_name.clone(),
        description,
        input_schema: input_schema(p),
    }
}

/// The pipeline's declared inputs as one object schema: all required, nothing else.
pub fn input_schema(p: &Pipeline) -> Value {
    let mut properties = Map::new();
    for i in &p.inputs {
        let mut schema = i.schema.clone();
        if let Value::Object(m) = &mut schema {
            if !i.description.is_empty() && !m.contains_key("description") {
                m.insert("description".into(), Value::String(i.description.clone()));
            }
        }
        properties.insert(i.name.clone(), schema);
    }
    let required: Vec<&str> = p.inputs.iter().map(|i| i.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Whether `scope` allows every step's server and tool.
pub fn pipeline_in_scope(p: &Pipeline, scope: &ToolScope) -> bool {
    p.steps.iter().all(|s| {
        s.tool_ref()
            .is_ok_and(|(server, tool)| scope.allows(server.as_str(), tool))
    })
}

/// Why `profile`'s agent may not run `p`: a step outside its scope or one its policy denies.
pub fn agent_refusal(p: &Pipeline, profile: &AgentProfile) -> Option<String> {
    if !pipeline_in_scope(p, &profile.scope) {
        return Some(format!(
            "There is no tool for pipeline {} for this agent: a step is outside its scope.",
            p.name
        ));
    }
    let denied = p.steps.iter().find(|s| {
        s.tool_ref().is_ok_and(|(server, tool)| {
            profile.tightening_for(server.as_str(), tool) == Some(Tighten::Deny)
        })
    })?;
    Some(format!(
        "Agent {}'s policy does not allow {} (step {:?} of pipeline {}); do without it.",
        profile.name, denied.tool, denied.id, p.name
    ))
}

/// Per step id, why a person is asked about the step for `profile`'s agent.
fn agent_asks(p: &Pipeline, profile: &AgentProfile) -> HashMap<String, String> {
    p.steps
        .iter()
        .filter(|s| {
            s.tool_ref().is_ok_and(|(server, tool)| {
                profile.tightening_for(server.as_str(), tool) == Some(Tighten::Ask)
            })
        })
        .map(|s| {
            let why = format!(
                "Agent {}'s profile asks a person before every call of {}.",
                profile.name, s.tool
            );
            (s.id.clone(), why)
        })
        .collect()
}

/// Whether every step's server is running (in `catalogs` with live tools) and the pipeline
/// passes its check against them.
fn runnable_now(p: &Pipeline, catalogs: &[Listed]) -> bool {
    let live: HashSet<&str> = catalogs
        .iter()
        .filter(|c| c.live)
        .map(|c| c.server.as_str())
        .collect();
    let lookup = |server: &crate::ids::ServerId, tool: &str| -> Result<ToolSchemas, String> {
        let c = catalogs
            .iter()
            .find(|c| &c.server == server && live.contains(c.server.as_str()))
            .ok_or_else(|| format!("the server {server} is not running"))?;
        let t = c
            .catalog
            .tools
            .iter()
            .find(|t| t.name == tool && !c.disabled_tools.contains(&t.name))
            .ok_or_else(|| format!("{server} offers no tool {tool:?} now"))?;
        Ok(ToolSchemas {
            input: t.input_schema.clone(),
            output: t.output_schema.clone(),
        })
    };
    check(p, &lookup).is_ok()
}

impl Pipelines {
    /// The pipelines offered to models now: the newest version of each one marked `offer`,
    /// whose servers are all running (in `catalogs`) and which passes its check.
    pub async fn offered(&self, catalogs: &[Listed]) -> Result<Vec<OfferedPipeline>, HostError> {
        let all = self.store.pipelines().await?;
        let offered = all
            .into_iter()
            .map(|s| s.pipeline)
            .filter(|p| p.offer && runnable_now(p, catalogs))
            .collect();
        Ok(name_pipelines(offered))
    }

    /// Runs an offered pipeline for a model of `conversation` (as `agent` when one asks).
    /// `Err` is a sentence for the model.
    pub async fn run_offered(
        &self,
        host: &dyn PipelineHost,
        offered: &OfferedPipeline,
        arguments: Map<String, Value>,
        conversation: &ConversationId,
        agent: Option<PipelineAgent<'_>>,
        cancel: CancellationToken,
    ) -> Result<ToolResult, String> {
        let p = &offered.pipeline;
        let mut how = Driven {
            cancel: Some(cancel),
            ..Driven::default()
        };
        if let Some(a) = agent {
            if let Some(why) = agent_refusal(p, a.profile) {
                return Err(why);
            }
            how.asks = agent_asks(p, a.profile);
        }
        let origin = Origin::Model {
            conversation: conversation.clone(),
            agent: agent.map(|a| a.acting.clone()),
        };
        match self.run_stored(host, p, arguments, origin, how, None).await {
            Ok(outcome) => answer(p, &outcome),
            Err(e) => Err(refused(p, e)),
        }
    }
}

/// One line per step: its position, id, tool and how it ended.
fn step_lines(outcome: &PipelineOutcome) -> Vec<String> {
    outcome
        .steps
        .iter()
        .map(|s| {
            let how = match (s.status, &s.error) {
                (RunStatus::Succeeded, _) => "ok".to_owned(),
                (RunStatus::Running, _) => "did not finish".to_owned(),
                (RunStatus::Failed, Some(e)) => format!("failed: {e}"),
                (RunStatus::Failed, None) => "failed".to_owned(),
            };
            format!("{}. {} ({}): {how}", s.index, s.step_id, s.tool)
        })
        .collect()
}

/// The model's result of a run that started: the summary and the last step's output, or why
/// it stopped.
fn answer(p: &Pipeline, outcome: &PipelineOutcome) -> Result<ToolResult, String> {
    let lines = step_lines(outcome).join("\n");
    if outcome.run.status != RunStatus::Succeeded {
        return Err(format!(
            "The pipeline {} (version {}, run {}) stopped: {}. The steps before it ran and \
             what they did stands.\n{lines}",
            p.name,
            p.version,
            outcome.run.id,
            outcome.run.error.as_deref().unwrap_or("a step failed")
        ));
    }
    let last: Option<ToolResult> = outcome
        .steps
        .last()
        .and_then(|s| s.result.clone())
        .and_then(|v| serde_json::from_value(v).ok());
    let last = last.ok_or_else(|| {
        format!(
            "The pipeline {} ran, but its last step's output could not be read.\n{lines}",
            p.name
        )
    })?;
    let summary = format!(
        "Pipeline {} (version {}, run {}) ran {} steps:\n{lines}\nThe last step's output follows.",
        p.name,
        p.version,
        outcome.run.id,
        outcome.steps.len()
    );
    let mut content = vec![Content::Text { text: summary }];
    content.extend(last.content);
    Ok(ToolResult {
        content,
        structured_content: last.structured_content,
        is_error: false,
    })
}

/// A run refused before its first step, as the model should read it.
fn refused(p: &Pipeline, e: PipelineError) -> String {
    match e {
        PipelineError::Declined(reason) => format!(
            "The user did not allow the pipeline {}{}; nothing was run.",
            p.name,
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        PipelineError::Refused(r) => format!(
            "The approval policy does not allow the pipeline {}; nothing was run: {r}. Do \
             without it.",
            p.name
        ),
        PipelineError::Host(HostError::Mcp(crate::mcp::McpError::Cancelled)) => {
            format!("The pipeline {} was cancelled.", p.name)
        }
        PipelineError::Inputs(why) => format!(
            "The pipeline {} was not run, nothing was called: {why}. Call it again with \
             inputs that fit its schema.",
            p.name
        ),
        PipelineError::Mapping(errors) => format!(
            "The pipeline {} was not run, nothing was called: its steps no longer fit the \
             tools ({}).",
            p.name,
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ),
        other => format!("The pipeline {} was not run: {other}", p.name),
    }
}

#[cfg(test)]
mod tests;

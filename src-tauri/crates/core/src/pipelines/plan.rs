//! The pure parts of a pipeline run (`crate::pipelines`): the question it is approved by, the
//! inputs' check, each step's arguments from its sources, and whether its result can be used.

use serde_json::{Map, Value};

use super::{PipelineError, StepAsks};
use crate::approval::{Ask, Origin, RequestKind};
use crate::catalog::{Content, ToolResult};
use crate::pipeline_data::{ArgSource, Pipeline, Plan};
use crate::schema::ArgValidator;

/// The question a pipeline is approved by: its name and version, the inputs, every step (its
/// tool and argument sources) and what flows where (`Plan::lines`). Asked on the first step's
/// server (every ask has one).
pub(super) fn whole_ask(
    p: &Pipeline,
    plan: &Plan,
    inputs: &Value,
    origin: &Origin,
    replay_of: Option<&str>,
) -> Result<Ask, PipelineError> {
    let first = plan
        .steps
        .first()
        .ok_or_else(|| PipelineError::Inputs(format!("{} has no steps", p.name)))?;
    let steps: Vec<Value> = p
        .steps
        .iter()
        .map(|s| serde_json::json!({"id": s.id, "tool": s.tool, "args": s.args}))
        .collect();
    let mut arguments = serde_json::json!({
        "version": p.version,
        "inputs": inputs,
        "steps": steps,
        "flows": plan.lines(),
    });
    if let Some(past) = replay_of {
        arguments["replay_of"] = Value::String(past.to_owned());
    }
    Ok(Ask {
        server: first.server.clone(),
        kind: RequestKind::Pipeline,
        tool: p.name.to_string(),
        arguments,
        origin: origin.clone(),
        hints: Vec::new(),
        reason: format!(
            "run the pipeline {} (version {}): {} steps, approved as a whole",
            p.name,
            p.version,
            p.steps.len()
        ),
        warning: None,
    })
}

/// Adds to a pipeline's question which steps will still ask when they run (`asks_again` in
/// its arguments, and a sentence in its reason); the policy decides each step again then.
pub(super) fn say_asks(ask: &mut Ask, asks: &[StepAsks]) {
    ask.arguments["asks_again"] = serde_json::to_value(asks).unwrap_or(Value::Null);
    let sentence = match asks {
        [] => "no step is expected to ask again".to_owned(),
        [one] => format!(
            "step {} ({:?}, {}) will ask again when it runs: {}",
            one.step, one.id, one.tool, one.why
        ),
        many => format!(
            "{} steps will ask again when they run: {}",
            many.len(),
            many.iter()
                .map(|a| format!("step {} ({:?}, {}): {}", a.step, a.id, a.tool, a.why))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    ask.reason = format!("{}; {sentence}", ask.reason);
}

/// Every declared input given, nothing else, each matching its schema.
pub(super) fn check_inputs(p: &Pipeline, inputs: &Map<String, Value>) -> Result<(), PipelineError> {
    if let Some(k) = inputs
        .keys()
        .find(|k| !p.inputs.iter().any(|i| &i.name == *k))
    {
        return Err(PipelineError::Inputs(format!(
            "{} declares no input {k:?}",
            p.name
        )));
    }
    for decl in &p.inputs {
        let Some(v) = inputs.get(&decl.name) else {
            return Err(PipelineError::Inputs(format!(
                "the input {:?} is missing (--input {}=VALUE)",
                decl.name, decl.name
            )));
        };
        let validator = ArgValidator::compile(&decl.schema).map_err(|e| {
            PipelineError::Inputs(format!("the schema of input {:?}: {e}", decl.name))
        })?;
        if let Err(errors) = validator.check(v) {
            return Err(PipelineError::Inputs(format!(
                "the input {:?} does not fit its schema: {}",
                decl.name,
                errors.join("; ")
            )));
        }
    }
    Ok(())
}

/// A step's arguments from its sources; `structured` holds the earlier steps' results.
pub(super) fn arguments_of(
    step: &crate::pipeline_data::Step,
    inputs: &Map<String, Value>,
    steps: &[crate::pipeline_data::Step],
    structured: &[Option<Value>],
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (name, source) in step.sources()? {
        let value = match source {
            ArgSource::Literal(v) => v,
            ArgSource::Input(n) => inputs
                .get(&n)
                .cloned()
                .ok_or_else(|| format!("the input {n:?} was not given"))?,
            ArgSource::From {
                step: from,
                pointer,
            } => {
                let at = steps
                    .iter()
                    .position(|s| s.id == from)
                    .filter(|at| *at < structured.len())
                    .ok_or_else(|| format!("the step {from:?} has not run"))?;
                let Some(result) = &structured[at] else {
                    return Err(format!("the step {from:?} returned no structuredContent"));
                };
                result.pointer(&pointer).cloned().ok_or_else(|| {
                    format!(
                        "argument {name:?}: the result of step {from:?} has nothing at {pointer:?}"
                    )
                })?
            }
        };
        out.insert(name.to_owned(), value);
    }
    Ok(out)
}

/// Why a step's result cannot be used: a tool error, or `structuredContent` missing or not
/// matching the tool's `outputSchema` (`schema`, as its server lists it now).
pub(super) fn result_problem(schema: Option<&Value>, r: &ToolResult) -> Option<String> {
    if r.is_error {
        let text: Vec<&str> = r
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        return Some(format!("the tool reported an error: {}", text.join(" ")));
    }
    let schema = schema?;
    let Some(value) = &r.structured_content else {
        return Some("the tool declares an outputSchema but returned no structuredContent".into());
    };
    match ArgValidator::compile(schema) {
        Err(e) => Some(format!("the tool's outputSchema cannot be used: {e}")),
        Ok(v) => v.check(value).err().map(|errors| {
            format!(
                "its structuredContent does not match its outputSchema: {}",
                errors.join("; ")
            )
        }),
    }
}

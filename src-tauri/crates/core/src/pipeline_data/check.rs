//! The check a pipeline passes before any step runs: every tool exists, every mapping points at
//! an earlier step whose tool declares an `outputSchema` in which the pointer resolves, every
//! value's type fits the argument it feeds, every required argument is given and none is
//! unknown to a tool that allows no others. What passes becomes a [`Plan`], whose lines are what
//! a person approves ("what flows where").
//!
//! Types are compared by JSON Schema `type` (with `const`, `enum` and `anyOf`/`oneOf` read for
//! theirs); a schema that says nothing about a type accepts anything. `integer` fits `number`,
//! not the reverse. The tool's own input validation still runs on the real arguments at call
//! time: this check catches the wiring mistakes before anything has an effect.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::walk::{closed, compatible, property, required, resolve, show, type_of, types};
use super::{ArgSource, Pipeline};
use crate::ids::ServerId;

/// What the check needs of one tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSchemas {
    /// Its `inputSchema`.
    pub input: Value,
    /// Its `outputSchema`, if it declares one.
    pub output: Option<Value>,
}

/// One wiring mistake, as a sentence naming the step, the argument and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MappingError {
    /// The step's position, from 1.
    pub step: usize,
    /// The step's id.
    pub step_id: String,
    /// The argument, when the mistake is about one.
    pub argument: Option<String>,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for MappingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {} ({:?})", self.step, self.step_id)?;
        if let Some(a) = &self.argument {
            write!(f, ", argument {a:?}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Where a planned argument's value comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlowSource {
    /// A literal value.
    Literal {
        /// The value.
        value: Value,
    },
    /// A pipeline input.
    Input {
        /// Its name.
        name: String,
    },
    /// An earlier step's structured result.
    From {
        /// That step's position, from 1.
        step: usize,
        /// Its id.
        step_id: String,
        /// Its tool, `server/tool`.
        tool: String,
        /// The JSON pointer into its `structuredContent`.
        pointer: String,
    },
}

/// One argument of a planned step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedArg {
    /// The argument.
    pub name: String,
    /// Where its value comes from.
    pub source: FlowSource,
}

/// One checked step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedStep {
    /// Its position, from 1.
    pub index: usize,
    /// Its id.
    pub id: String,
    /// Its server.
    pub server: ServerId,
    /// Its tool's name.
    pub tool: String,
    /// Its arguments.
    pub args: Vec<PlannedArg>,
}

/// A pipeline that passed [`check`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The steps in order.
    pub steps: Vec<PlannedStep>,
}

impl Plan {
    /// What flows where, one line per argument:
    /// `step 2 "sum" fake/add.a <- step 1 "weather" (everything/get-structured-content) /temperature`.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.steps {
            let head = format!("step {} {:?} {}/{}", s.index, s.id, s.server, s.tool);
            if s.args.is_empty() {
                out.push(format!("{head} (no arguments)"));
            }
            for a in &s.args {
                let from = match &a.source {
                    FlowSource::Literal { value } => {
                        let text = value.to_string();
                        let mut cut: String = text.chars().take(80).collect();
                        if cut.len() < text.len() {
                            cut.push('…');
                        }
                        cut
                    }
                    FlowSource::Input { name } => format!("input {name}"),
                    FlowSource::From {
                        step,
                        step_id,
                        tool,
                        pointer,
                    } => {
                        let p = if pointer.is_empty() { "(all)" } else { pointer };
                        format!("step {step} {step_id:?} ({tool}) {p}")
                    }
                };
                out.push(format!("{head}.{} <- {from}", a.name));
            }
        }
        out
    }
}

/// What a step checked so far is, by position: its id, its tool, and the tool's schemas when
/// the tool is available.
type Known = (String, String, Option<ToolSchemas>);

/// Where an argument that takes from the step `from` (at `pointer` in its result) gets its
/// value, and the types it may have. `Err(Some)` says what is wrong; `Err(None)`: that step
/// already reported why its tool is unknown.
fn from_step(
    p: &Pipeline,
    i: usize,
    known: &[Known],
    from: String,
    pointer: String,
) -> Result<(FlowSource, Option<BTreeSet<&'static str>>), Option<String>> {
    let Some(at) = p.steps.iter().position(|s| s.id == from) else {
        return Err(Some(format!(
            "it takes from the step {from:?}, and there is no such step"
        )));
    };
    if at >= i {
        return Err(Some(format!(
            "it takes from the step {from:?} (step {}), which does not run before it; a step can only use the results of earlier steps",
            at + 1
        )));
    }
    let (_, from_tool, from_schemas) = &known[at];
    let Some(from_schemas) = from_schemas else {
        return Err(None);
    };
    let Some(output) = &from_schemas.output else {
        return Err(Some(format!(
            "it takes from step {} ({from_tool}), whose tool declares no outputSchema, so nothing in its result can be mapped",
            at + 1
        )));
    };
    let Some(node) = resolve(output, &pointer) else {
        return Err(Some(format!(
            "the pointer {pointer:?} does not resolve in the outputSchema of {from_tool} (step {})",
            at + 1
        )));
    };
    Ok((
        FlowSource::From {
            step: at + 1,
            step_id: from,
            tool: from_tool.clone(),
            pointer,
        },
        types(output, node),
    ))
}

/// Plans the argument `name` of the step at `i` (its tool `tool`, with `input` its schema
/// when known): where its value comes from, checked against what the tool takes.
/// `Err(Some)` says what is wrong; `Err(None)`: another step's error already says it.
fn plan_arg(
    p: &Pipeline,
    i: usize,
    known: &[Known],
    tool: &str,
    input: Option<&Value>,
    name: &str,
    source: ArgSource,
) -> Result<PlannedArg, Option<String>> {
    let target = match input {
        Some(input) => match property(input, name) {
            Some(t) => Some(t),
            None if closed(input) => {
                return Err(Some(format!("{tool} takes no argument of that name")));
            }
            None => None,
        },
        None => None,
    };
    let (flow, source_types) = match source {
        ArgSource::Literal(v) => (
            FlowSource::Literal { value: v.clone() },
            Some(BTreeSet::from([type_of(&v)])),
        ),
        ArgSource::Input(n) => match p.inputs.iter().find(|i| i.name == n) {
            Some(decl) => (
                FlowSource::Input { name: n },
                types(&decl.schema, &decl.schema),
            ),
            None => {
                return Err(Some(format!(
                    "it uses the input {n:?}, which the pipeline does not declare"
                )));
            }
        },
        ArgSource::From {
            step: from,
            pointer,
        } => from_step(p, i, known, from, pointer)?,
    };
    if let (Some(target), Some(input)) = (target, input) {
        let want = types(input, target);
        if !compatible(source_types.as_ref(), want.as_ref()) {
            return Err(Some(format!(
                "it would get {} but {tool} wants {}",
                show(source_types.as_ref()),
                show(want.as_ref())
            )));
        }
    }
    Ok(PlannedArg {
        name: name.to_owned(),
        source: flow,
    })
}

/// Checks `p` against the tools `tools` describes (`Err` says why a tool is not available).
/// Every mistake is reported, not just the first.
pub fn check(
    p: &Pipeline,
    tools: &dyn Fn(&ServerId, &str) -> Result<ToolSchemas, String>,
) -> Result<Plan, Vec<MappingError>> {
    let mut errors = Vec::new();
    let mut steps = Vec::new();
    // The schemas of the steps checked so far, by position.
    let mut known: Vec<Known> = Vec::new();
    for (i, step) in p.steps.iter().enumerate() {
        let index = i + 1;
        let mut err = |argument: Option<&str>, reason: String| {
            errors.push(MappingError {
                step: index,
                step_id: step.id.clone(),
                argument: argument.map(str::to_owned),
                reason,
            });
        };
        let (server, tool) = match step.tool_ref() {
            Ok(t) => t,
            Err(e) => {
                err(None, e);
                known.push((step.id.clone(), step.tool.clone(), None));
                continue;
            }
        };
        let schemas = match tools(&server, tool) {
            Ok(s) => Some(s),
            Err(why) => {
                err(
                    None,
                    format!("the tool {} is not available: {why}", step.tool),
                );
                None
            }
        };
        let sources = match step.sources() {
            Ok(s) => s,
            Err(e) => {
                err(None, e);
                Vec::new()
            }
        };
        let input = schemas.as_ref().map(|s| &s.input);
        if let Some(input) = input {
            for r in required(input) {
                if !step.args.contains_key(r) {
                    err(
                        Some(r),
                        format!("{} requires it and the step does not give it", step.tool),
                    );
                }
            }
        }
        let mut args = Vec::new();
        for (name, source) in sources {
            match plan_arg(p, i, &known, &step.tool, input, name, source) {
                Ok(arg) => args.push(arg),
                Err(Some(why)) => err(Some(name), why),
                // That step's own error says why its tool is unknown.
                Err(None) => {}
            }
        }
        steps.push(PlannedStep {
            index,
            id: step.id.clone(),
            server,
            tool: tool.to_owned(),
            args,
        });
        known.push((step.id.clone(), step.tool.clone(), schemas));
    }
    if errors.is_empty() {
        Ok(Plan { steps })
    } else {
        Err(errors)
    }
}

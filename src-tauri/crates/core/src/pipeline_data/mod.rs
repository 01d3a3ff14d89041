//! Tool pipelines as plain data (issue 15, point 6): a named, versioned sequence of tool calls
//! in which one step's `structuredContent` feeds a later step's arguments through explicit
//! mappings, checked ([`check`]) before anything runs.
//!
//! A leaf over `ids`: `store` keeps definitions and runs, `host` checks them against the live
//! catalog and runs each step through the governed seam. Definitions come from files people
//! write and share, so parsing is bounded (size, counts, nesting), refuses unknown fields and
//! never panics on hostile input.
//!
//! # Argument sources
//! Each argument of a step is one of, in JSON (or the same shapes in TOML):
//! - `{"$input": "name"}`: a declared input of the pipeline, given when it runs;
//! - `{"$from": "step_id", "pointer": "/json/pointer"}`: the value at that JSON pointer in the
//!   `structuredContent` of an earlier step (the pointer may be `""`, the whole value);
//! - `{"$literal": VALUE}`: VALUE as is, for a literal that would otherwise read as a source;
//! - any other value: a literal.
//!
//! An object with any other key starting with `$`, or with `$input`/`$from` beside unexpected
//! keys, is refused as ambiguous rather than guessed to be a literal; so is a literal that hides
//! such an object deeper inside (wrap it in `$literal`).

mod check;
#[cfg(test)]
mod tests;
mod walk;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ids::{InvalidName, ServerId};

pub use check::{check, FlowSource, MappingError, Plan, PlannedArg, PlannedStep, ToolSchemas};

/// The largest definition file accepted, in bytes.
pub const MAX_DEFINITION_BYTES: usize = 256 * 1024;
/// The most steps in one pipeline.
pub const MAX_STEPS: usize = 64;
/// The most declared inputs.
pub const MAX_INPUTS: usize = 64;
/// The most arguments of one step.
pub const MAX_ARGS: usize = 128;
/// The deepest nesting of any value in a definition.
pub const MAX_DEPTH: usize = 32;
/// The longest description, in characters.
pub const MAX_DESCRIPTION: usize = 4096;

/// A pipeline's name: validated like a server's (letters, digits, `-`, `_`, `.`; at most 64).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PipelineName(String);

impl PipelineName {
    /// The longest name accepted.
    pub const MAX_LEN: usize = 64;

    /// Validates a name.
    pub fn new(s: impl AsRef<str>) -> Result<Self, InvalidName> {
        // The same rules as a server's name, so it is safe to show and to use as a key.
        ServerId::new(s.as_ref())?;
        Ok(Self(s.as_ref().to_owned()))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for PipelineName {
    type Error = InvalidName;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<PipelineName> for String {
    fn from(n: PipelineName) -> Self {
        n.0
    }
}

impl std::fmt::Display for PipelineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A named, versioned sequence of tool calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// Its name.
    pub name: PipelineName,
    /// Its version: set by the store (1 for the first definition under a name, then the next
    /// number for each different one). A version in a file is ignored.
    #[serde(default)]
    pub version: u32,
    /// What it does, for people.
    #[serde(default)]
    pub description: String,
    /// Whether chat models and agents are offered it as one tool (`pipelines::tools`).
    /// Off unless the definition (or `pipeline add --offer`) says so: a person decides which
    /// pipelines a model may start, each run still approved as a whole.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offer: bool,
    /// Values given when it runs.
    #[serde(default)]
    pub inputs: Vec<PipelineInput>,
    /// The calls, in order.
    pub steps: Vec<Step>,
}

/// A value given when a pipeline runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineInput {
    /// Its name, as `{"$input": name}` refers to it.
    pub name: String,
    /// The JSON Schema of the value (`{"type": "string"}`); `{}` accepts anything.
    #[serde(default = "any_schema")]
    pub schema: Value,
    /// What it is, for people.
    #[serde(default)]
    pub description: String,
}

fn any_schema() -> Value {
    Value::Object(Map::new())
}

/// One tool call of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Its id, unique in the pipeline, as `$from` refers to it.
    pub id: String,
    /// The tool, `server/tool`.
    pub tool: String,
    /// Where each argument comes from.
    #[serde(default)]
    pub args: Map<String, Value>,
}

impl Step {
    /// The server and tool name of [`Step::tool`] (split at the first `/`; a server's name has
    /// none).
    pub fn tool_ref(&self) -> Result<(ServerId, &str), String> {
        let (server, tool) = self
            .tool
            .split_once('/')
            .ok_or_else(|| format!("the tool {:?} is not written server/tool", self.tool))?;
        let server = ServerId::new(server)
            .map_err(|e| format!("the server in {:?} is not a valid name: {e}", self.tool))?;
        if tool.is_empty() {
            return Err(format!("the tool {:?} names no tool", self.tool));
        }
        Ok((server, tool))
    }

    /// The step's arguments as sources, in name order.
    pub fn sources(&self) -> Result<Vec<(&str, ArgSource)>, String> {
        self.args
            .iter()
            .map(|(k, v)| {
                ArgSource::from_value(v)
                    .map(|s| (k.as_str(), s))
                    .map_err(|e| format!("argument {k:?}: {e}"))
            })
            .collect()
    }
}

/// Where one argument's value comes from (see the module docs for the written form).
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSource {
    /// This value.
    Literal(Value),
    /// A declared input.
    Input(String),
    /// The value at `pointer` in an earlier step's `structuredContent`.
    From {
        /// The step.
        step: String,
        /// An RFC 6901 JSON pointer (`""` for the whole value).
        pointer: String,
    },
}

impl ArgSource {
    /// Reads a written argument; an ambiguous object is an error.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        let Value::Object(m) = v else {
            return match hidden_marker(v) {
                Some(k) => Err(hidden(&k)),
                None => Ok(Self::Literal(v.clone())),
            };
        };
        if let Some(lit) = m.get("$literal") {
            if m.len() != 1 {
                return Err("\"$literal\" must be the object's only key".into());
            }
            return Ok(Self::Literal(lit.clone()));
        }
        if let Some(name) = m.get("$input") {
            let Value::String(name) = name else {
                return Err("\"$input\" must name an input as a string".into());
            };
            if m.len() != 1 {
                return Err("\"$input\" must be the object's only key".into());
            }
            return Ok(Self::Input(name.clone()));
        }
        if let Some(step) = m.get("$from") {
            let Value::String(step) = step else {
                return Err("\"$from\" must name a step as a string".into());
            };
            let pointer = match m.get("pointer") {
                None => String::new(),
                Some(Value::String(p)) => p.clone(),
                Some(_) => return Err("\"pointer\" must be a string".into()),
            };
            if m.keys().any(|k| k != "$from" && k != "pointer") {
                return Err("\"$from\" takes only \"pointer\" beside it".into());
            }
            if !(pointer.is_empty() || pointer.starts_with('/')) {
                return Err(format!(
                    "the pointer {pointer:?} must be empty or start with '/'"
                ));
            }
            return Ok(Self::From {
                step: step.clone(),
                pointer,
            });
        }
        if let Some(k) = hidden_marker(v) {
            return Err(hidden(&k));
        }
        Ok(Self::Literal(v.clone()))
    }

    /// The written form.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Literal(v) if v.is_object() => serde_json::json!({ "$literal": v }),
            Self::Literal(v) => v.clone(),
            Self::Input(n) => serde_json::json!({ "$input": n }),
            Self::From { step, pointer } => serde_json::json!({"$from": step, "pointer": pointer}),
        }
    }
}

fn hidden(k: &str) -> String {
    format!(
        "a literal holds an object with the key {k:?}, which reads like a source; wrap the \
         literal in {{\"$literal\": ...}} if it is meant as is"
    )
}

/// A key starting with `$` anywhere inside a literal (iterative: definitions are bounded in
/// depth already, but this walk needs no stack either way).
fn hidden_marker(v: &Value) -> Option<String> {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(k) = m.keys().find(|k| k.starts_with('$')) {
                    return Some(k.clone());
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    None
}

/// Why a definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// Over [`MAX_DEFINITION_BYTES`].
    #[error("the definition is {0} bytes; at most {MAX_DEFINITION_BYTES} are accepted")]
    TooLarge(usize),
    /// Not valid JSON or TOML of the expected shape.
    #[error("the definition does not parse: {0}")]
    Syntax(String),
    /// Parsed, but not a usable pipeline.
    #[error("the pipeline is invalid: {0}")]
    Invalid(String),
}

/// The format of a definition file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON.
    Json,
    /// TOML.
    Toml,
}

impl Format {
    /// The format a file name says (`.toml`, else JSON).
    pub fn of_path(path: &std::path::Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => Self::Toml,
            _ => Self::Json,
        }
    }
}

/// Parses and validates a definition.
pub fn parse(text: &str, format: Format) -> Result<Pipeline, DefinitionError> {
    if text.len() > MAX_DEFINITION_BYTES {
        return Err(DefinitionError::TooLarge(text.len()));
    }
    // Parsed as a value first so the nesting is bounded before serde walks it recursively.
    let value: Value = match format {
        Format::Json => {
            serde_json::from_str(text).map_err(|e| DefinitionError::Syntax(e.to_string()))?
        }
        Format::Toml => {
            let t: toml::Value =
                toml::from_str(text).map_err(|e| DefinitionError::Syntax(e.to_string()))?;
            serde_json::to_value(t).map_err(|e| DefinitionError::Syntax(e.to_string()))?
        }
    };
    if depth(&value) > MAX_DEPTH {
        return Err(DefinitionError::Invalid(format!(
            "it nests deeper than {MAX_DEPTH} levels"
        )));
    }
    let p: Pipeline =
        serde_json::from_value(value).map_err(|e| DefinitionError::Syntax(e.to_string()))?;
    validate(&p).map_err(DefinitionError::Invalid)?;
    Ok(p)
}

fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if d > MAX_DEPTH {
            return d;
        }
        match v {
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

/// The checks that need no catalog: counts, names, unique ids, well-formed sources.
pub fn validate(p: &Pipeline) -> Result<(), String> {
    if p.steps.is_empty() {
        return Err("it has no steps".into());
    }
    if p.steps.len() > MAX_STEPS {
        return Err(format!(
            "it has {} steps; at most {MAX_STEPS} are allowed",
            p.steps.len()
        ));
    }
    if p.inputs.len() > MAX_INPUTS {
        return Err(format!(
            "it has {} inputs; at most {MAX_INPUTS} are allowed",
            p.inputs.len()
        ));
    }
    if p.description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "the description is over {MAX_DESCRIPTION} characters"
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for i in &p.inputs {
        ServerId::new(&i.name).map_err(|e| format!("input {:?}: {e}", i.name))?;
        if !seen.insert(i.name.as_str()) {
            return Err(format!("the input {:?} is declared twice", i.name));
        }
        if !i.schema.is_object() {
            return Err(format!("the schema of input {:?} is not an object", i.name));
        }
    }
    let mut ids = std::collections::HashSet::new();
    for (n, s) in p.steps.iter().enumerate() {
        let at = format!("step {} ({:?})", n + 1, s.id);
        ServerId::new(&s.id).map_err(|e| format!("{at}: the id is not valid: {e}"))?;
        if !ids.insert(s.id.as_str()) {
            return Err(format!("{at}: the id is used twice"));
        }
        s.tool_ref().map_err(|e| format!("{at}: {e}"))?;
        if s.args.len() > MAX_ARGS {
            return Err(format!("{at}: over {MAX_ARGS} arguments"));
        }
        s.sources().map_err(|e| format!("{at}: {e}"))?;
    }
    Ok(())
}

/// Whether two definitions are the same pipeline (everything but the version).
pub fn same_definition(a: &Pipeline, b: &Pipeline) -> bool {
    let strip = |p: &Pipeline| Pipeline {
        version: 0,
        ..p.clone()
    };
    strip(a) == strip(b)
}

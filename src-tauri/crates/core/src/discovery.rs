//! Progressive discovery (issue 16, point 2): for a large catalog, the model is offered a search
//! over the tools and the definitions it loads, instead of every definition in every request.
//!
//! [`Discovering`] wraps the runner a turn would get (the host's, or an agent's scoped one) and
//! is itself a [`ToolRunner`]. It offers two built-in tools, [`FIND_TOOL`] and [`LOAD_TOOL`],
//! plus the inner runner's own built-ins (an agent's state, delegation and hand-over tools,
//! offered pipelines), plus the tools loaded so far. Why this shape:
//! - **Only what the inner runner offers can be found or loaded**, so an agent's scope holds: a
//!   tool outside it is "unknown" exactly like a tool that does not exist.
//! - **Every call still goes through the inner runner** unchanged: the same validation, the
//!   same approval seam, the same policy and audit. Loading a tool grants nothing.
//! - **A tool the model never loaded is refused** with a sentence telling it to load it first,
//!   rather than run: the offered set stays what the model was actually shown, so it never
//!   calls a tool whose schema it has not seen.
//! - **The loaded set is not stored anywhere new**: at the start of a turn it is read back from
//!   the conversation's past [`LOAD_TOOL`] calls ([`loaded_in`]), then kept in memory; the turn
//!   loop asks for the specs before every model call, so a tool loaded in one step is offered
//!   in the next.
//!
//! The built-in names start with `switchboard__`, a prefix `mcp::naming` never gives a server
//! tool, so they cannot collide with one.
//!
//! A feature of its own (issue 26): [`Discovery`] owns the per-conversation switch (its store
//! repository is `discovery/store.rs`) and reads back what a conversation loaded; the search's
//! ranking is `discovery/rank.rs`. It needs nothing of the host: the host's side
//! (`host/discovery.rs`) is one-line delegations the shells call and the turn's wrapping.

use std::collections::BTreeSet;
use std::sync::Mutex;

use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::catalog::{Content, ToolResult};
use crate::chat::{ToolCall, ToolError, ToolRunner};
use crate::error::HostError;
use crate::ids::{ConversationId, ToolRef};
use crate::llm::{Message, ToolSpec};
use crate::store::Store;
use rank::{first_line, rank, Candidate};

mod rank;
mod store;

/// The search over the catalog.
pub const FIND_TOOL: &str = "switchboard__find_tools";
/// Loading found tools into the offered set.
pub const LOAD_TOOL: &str = "switchboard__load_tools";
/// Lines one search answers at most.
pub const FIND_MAX: usize = 20;
/// Tools one load call takes at most.
pub const LOAD_MAX: usize = 10;
/// Characters of a description shown in a search line.
const LINE_MAX: usize = 120;

/// What the system prompt says when the mode is on.
pub const DISCOVERY_PROMPT: &str = "Tools are not listed up front in this conversation. To use \
one, first search for it with switchboard__find_tools, then load it with \
switchboard__load_tools; a loaded tool is offered from your next step on.";

/// One tool of the inner runner's catalog.
struct Entry {
    spec: ToolSpec,
    tool: ToolRef,
}

/// A runner that offers a search over `inner`'s tools and the tools loaded (see module docs).
pub struct Discovering<'a> {
    inner: &'a dyn ToolRunner,
    catalog: Vec<Entry>,
    /// The inner runner's own built-ins (no server behind them): always offered.
    fixed: Vec<ToolSpec>,
    /// LLM names of the loaded tools.
    loaded: Mutex<BTreeSet<String>>,
}

impl<'a> Discovering<'a> {
    /// Wraps `inner`, with `earlier` (names from past load calls, see [`loaded_in`]) loaded.
    pub fn new(inner: &'a dyn ToolRunner, earlier: &[String]) -> Self {
        let mut catalog = Vec::new();
        let mut fixed = Vec::new();
        for spec in inner.specs() {
            if spec.name == FIND_TOOL || spec.name == LOAD_TOOL {
                continue;
            }
            match inner.resolve(&spec.name) {
                Some(tool) => catalog.push(Entry { spec, tool }),
                None => fixed.push(spec),
            }
        }
        let me = Self {
            inner,
            catalog,
            fixed,
            loaded: Mutex::new(BTreeSet::new()),
        };
        let mut loaded = BTreeSet::new();
        for name in earlier {
            if let Some(e) = me.entry(name) {
                loaded.insert(e.spec.name.clone());
            }
        }
        *me.loaded_set() = loaded;
        me
    }

    /// How many tools can be found.
    pub fn catalog_len(&self) -> usize {
        self.catalog.len()
    }

    /// The LLM names loaded so far.
    pub fn loaded(&self) -> Vec<String> {
        self.loaded_set().iter().cloned().collect()
    }

    fn loaded_set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The catalog entry `name` means: `server/tool` or the LLM-facing name.
    fn entry(&self, name: &str) -> Option<&Entry> {
        let name = name.trim();
        if let Some(e) = self.catalog.iter().find(|e| e.spec.name == name) {
            return Some(e);
        }
        let (server, tool) = name.split_once('/')?;
        self.catalog
            .iter()
            .find(|e| e.tool.server.as_str() == server && e.tool.tool.as_ref() == tool)
    }

    fn is_loaded(&self, llm_name: &str) -> bool {
        self.loaded_set().contains(llm_name)
    }

    /// Answers a search.
    fn find(&self, args: &Map<String, Value>) -> Result<String, String> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or("");
        let server = args.get("server").and_then(Value::as_str).map(str::trim);
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(FIND_MAX, |n| usize::try_from(n).unwrap_or(FIND_MAX))
            .clamp(1, FIND_MAX);
        if query.trim().is_empty() && server.is_none_or(str::is_empty) {
            return Err(
                "Give a query (a few words of what the tool should do), a server, or both.".into(),
            );
        }
        let pool: Vec<&Entry> = self
            .catalog
            .iter()
            .filter(|e| server.is_none_or(|s| s.is_empty() || e.tool.server.as_str() == s))
            .collect();
        let candidates: Vec<Candidate<'_>> = pool
            .iter()
            .map(|e| Candidate {
                server: e.tool.server.as_str(),
                tool: e.tool.tool.as_ref(),
                description: &e.spec.description,
            })
            .collect();
        let (best, found) = rank(&candidates, query, limit);
        if best.is_empty() {
            return Ok(format!(
                "No tool matches. {} tools can be searched; try other words.",
                self.catalog.len()
            ));
        }
        let loaded = self.loaded_set();
        let mut out = format!(
            "{found} of {} tools match; the best {}:",
            self.catalog.len(),
            best.len()
        );
        for i in best {
            let e = pool[i];
            let mark = if loaded.contains(&e.spec.name) {
                " (loaded)"
            } else {
                ""
            };
            out.push_str(&format!(
                "\n{}/{}{mark} — {}",
                e.tool.server,
                e.tool.tool,
                first_line(&e.spec.description, LINE_MAX)
            ));
        }
        out.push_str(&format!(
            "\nLoad the ones you need with {LOAD_TOOL} (\"server/tool\" names)."
        ));
        Ok(out)
    }

    /// Answers a load.
    fn load(&self, args: &Map<String, Value>) -> Result<String, String> {
        let names: Vec<&str> = match args.get("tools") {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(s)) => vec![s.as_str()],
            _ => return Err("Pass `tools`: a list of \"server/tool\" names from a search.".into()),
        };
        if names.is_empty() {
            return Err("Pass at least one \"server/tool\" name from a search.".into());
        }
        if names.len() > LOAD_MAX {
            return Err(format!(
                "Load at most {LOAD_MAX} tools per call; you asked for {}.",
                names.len()
            ));
        }
        let (mut new, mut already, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
        let mut loaded = self.loaded_set();
        for name in names {
            match self.entry(name) {
                Some(e) if loaded.contains(&e.spec.name) => already.push(e.spec.name.clone()),
                Some(e) => {
                    loaded.insert(e.spec.name.clone());
                    new.push(e.spec.name.clone());
                }
                None => unknown.push(name.to_owned()),
            }
        }
        let mut out = Vec::new();
        if !new.is_empty() {
            out.push(format!(
                "Loaded: {}. They are offered from your next step on, by these names.",
                new.join(", ")
            ));
        }
        if !already.is_empty() {
            out.push(format!("Already loaded: {}.", already.join(", ")));
        }
        if !unknown.is_empty() {
            out.push(format!(
                "Unknown or not available here: {}. Search with {FIND_TOOL} for the exact names.",
                unknown.join(", ")
            ));
        }
        Ok(out.join("\n"))
    }
}

/// The two built-in tools' definitions.
pub fn discovery_specs() -> [ToolSpec; 2] {
    [
        ToolSpec {
            name: FIND_TOOL.into(),
            description: "Search the available tools by what they do. Answers lines \
                          \"server/tool — description\" without their input schemas; load the \
                          ones you need before calling them."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "A few words of what the tool should do."},
                    "server": {"type": "string", "description": "Only this server's tools."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": FIND_MAX}
                },
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: LOAD_TOOL.into(),
            description: format!(
                "Load tools found with {FIND_TOOL} so they can be called (at most {LOAD_MAX} per \
                 call). A loaded tool is offered from your next step on."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "tools": {
                        "type": "array",
                        "items": {"type": "string"},
                        "maxItems": LOAD_MAX,
                        "description": "\"server/tool\" names from a search."
                    }
                },
                "required": ["tools"],
                "additionalProperties": false
            }),
        },
    ]
}

/// The names the conversation's past [`LOAD_TOOL`] calls asked for, in order (what
/// [`Discovering::new`] loads again at the start of a turn). Names that do not resolve any
/// more (a server removed, a scope narrowed) are dropped there, not here.
pub fn loaded_in(messages: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        for (_, name, args) in m.tool_calls() {
            if name != LOAD_TOOL {
                continue;
            }
            match args.get("tools") {
                Some(Value::Array(a)) => out.extend(
                    a.iter()
                        .filter_map(Value::as_str)
                        .take(LOAD_MAX)
                        .map(str::to_owned),
                ),
                Some(Value::String(s)) => out.push(s.clone()),
                _ => {}
            }
        }
    }
    out
}

fn text(text: String) -> ToolResult {
    ToolResult {
        content: vec![Content::Text { text }],
        structured_content: None,
        is_error: false,
    }
}

impl ToolRunner for Discovering<'_> {
    fn specs(&self) -> Vec<ToolSpec> {
        let loaded = self.loaded_set();
        let mut specs: Vec<ToolSpec> = discovery_specs().into();
        specs.extend(self.fixed.iter().cloned());
        specs.extend(
            self.catalog
                .iter()
                .filter(|e| loaded.contains(&e.spec.name))
                .map(|e| e.spec.clone()),
        );
        specs
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        if self.is_loaded(llm_name) {
            self.inner.resolve(llm_name)
        } else {
            None
        }
    }

    fn run(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        self.inner.run(call)
    }

    fn is_local(&self, llm_name: &str) -> bool {
        llm_name == FIND_TOOL
            || llm_name == LOAD_TOOL
            || self.inner.is_local(llm_name)
            // Not loaded (else it resolves): answered here with "load it first".
            || (self.catalog.iter().any(|e| e.spec.name == llm_name) && !self.is_loaded(llm_name))
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
        let answer = match llm_name {
            FIND_TOOL => self.find(&arguments),
            LOAD_TOOL => self.load(&arguments),
            _ if self.catalog.iter().any(|e| e.spec.name == llm_name) => Err(format!(
                "{llm_name} is not loaded. Load it with {LOAD_TOOL} first; it is offered from \
                 the next step on."
            )),
            _ => return self.inner.run_local(llm_name, arguments, cancel),
        };
        Box::pin(async move { answer.map(text) })
    }
}

/// The feature's state: the store the per-conversation switch is kept in.
pub struct Discovery {
    store: Store,
}

impl Discovery {
    /// The feature over `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Whether `conversation` runs in progressive-discovery mode.
    pub async fn conversation_discovery(
        &self,
        conversation: &ConversationId,
    ) -> Result<bool, HostError> {
        Ok(self.store.conversation_discovery(conversation).await?)
    }

    /// Switches progressive discovery on or off for `conversation`.
    pub async fn set_conversation_discovery(
        &self,
        conversation: &ConversationId,
        on: bool,
    ) -> Result<(), HostError> {
        self.store
            .set_conversation_discovery(conversation, on)
            .await?;
        tracing::info!(conversation = %conversation, on, "conversation discovery switched");
        Ok(())
    }

    /// The names loaded by the past load calls of `conversation`'s visible messages.
    pub async fn loaded(&self, conversation: &ConversationId) -> Result<Vec<String>, HostError> {
        let messages: Vec<Message> = self
            .store
            .load_messages(conversation)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect();
        Ok(loaded_in(&messages))
    }

    /// `runner` behind progressive discovery when `conversation` has it on or `agent_on` (its
    /// agent has), with what the conversation loaded before; `None` when neither has.
    pub async fn wrap<'a>(
        &self,
        conversation: &ConversationId,
        agent_on: bool,
        runner: &'a dyn ToolRunner,
    ) -> Result<Option<Discovering<'a>>, HostError> {
        let on = agent_on || self.conversation_discovery(conversation).await?;
        if !on {
            return Ok(None);
        }
        let earlier = self.loaded(conversation).await?;
        Ok(Some(Discovering::new(runner, &earlier)))
    }
}

/// `system` with the sentence telling the model to find and load tools first.
pub fn with_discovery_prompt(system: &str) -> String {
    if system.is_empty() {
        DISCOVERY_PROMPT.to_owned()
    } else {
        format!("{system}\n\n{DISCOVERY_PROMPT}")
    }
}

#[cfg(test)]
mod tests;

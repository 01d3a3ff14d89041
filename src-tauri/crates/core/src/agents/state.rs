//! A run's shared state as the feature offers it (issue 15, point 3): thin methods over its
//! tables ([`super::store`]) for the shells and the agent runtime, and the built-in tools
//! through which agents read and write it ([`state_tool_specs`], [`Agents::run_state_tool`]).
//!
//! The point is that what one vendor's model found reaches another vendor's model in one form:
//! every agent of a run, whatever its provider, sees the same JSON entries with the same
//! versions and authors, and the same notes.
//!
//! Every write (a value, a note) is audited as [`AuditEvent::StateWritten`], naming the author,
//! the run, the key and the size, never the value.
//!
//! Tool names: see `state/tools.rs` for why they can never collide with a server's tool.

mod tools;

use serde_json::{Map, Value};

pub use tools::{is_state_tool, state_tool_specs, STATE_TOOLS};

use super::{Agents, RunStateError, StateEntry, StateKey, StateNote, PERSON};
use crate::agent_data::AgentName;
use crate::approval::audit::{Actor, AuditContext, AuditEvent};
use crate::error::HostError;
use crate::ids::RunId;

/// Who writes to a run's state: an agent, or a person (at a shell).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateAuthor {
    /// An agent, by its profile's name.
    Agent(AgentName),
    /// A person.
    Person,
}

impl StateAuthor {
    /// The author as stored: the agent's name, or `(person)`, which no agent name can be.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Agent(a) => a.as_str(),
            Self::Person => PERSON,
        }
    }

    fn actor(&self) -> Actor {
        match self {
            Self::Agent(a) => Actor::Model {
                name: Some(a.to_string()),
            },
            Self::Person => Actor::User,
        }
    }
}

impl From<AgentName> for StateAuthor {
    fn from(a: AgentName) -> Self {
        Self::Agent(a)
    }
}

impl Agents {
    /// Writes a new version of `key` in `run`'s state (see `agents/store/state.rs` for versions,
    /// conflicts and limits) and audits it.
    pub async fn state_put(
        &self,
        run: &RunId,
        key: &str,
        value: &Value,
        author: &StateAuthor,
        expected_version: Option<u32>,
    ) -> Result<StateKey, RunStateError> {
        let written = self
            .store
            .state_put(run, key, value, author.as_str(), expected_version)
            .await?;
        self.audit_state(run, author, Some(key), written.version, written.bytes)
            .await;
        Ok(written)
    }

    /// Appends a note to `run`'s log and audits it (by size, not text).
    pub async fn state_add_note(
        &self,
        run: &RunId,
        author: &StateAuthor,
        text: &str,
    ) -> Result<StateNote, RunStateError> {
        let note = self
            .store
            .state_add_note(run, author.as_str(), text)
            .await?;
        self.audit_state(run, author, None, note.seq, text.len() as u64)
            .await;
        Ok(note)
    }

    /// The newest version of `key`, if it was ever written.
    pub async fn state_get(&self, run: &RunId, key: &str) -> Result<Option<StateEntry>, HostError> {
        Ok(self.store.state_get(run, key).await?)
    }

    /// Every version of `key`, oldest first.
    pub async fn state_history(
        &self,
        run: &RunId,
        key: &str,
    ) -> Result<Vec<StateEntry>, HostError> {
        Ok(self.store.state_history(run, key).await?)
    }

    /// The newest version of every key, by key (without values).
    pub async fn state_list(&self, run: &RunId) -> Result<Vec<StateKey>, HostError> {
        Ok(self.store.state_list(run).await?)
    }

    /// Every note, oldest first.
    pub async fn state_notes(&self, run: &RunId) -> Result<Vec<StateNote>, HostError> {
        Ok(self.store.state_notes(run).await?)
    }

    /// Answers a call of a built-in state tool by `author` in `run`: `None` when `llm_name` is
    /// not one of them (the caller routes it elsewhere); else the text for the model, JSON for
    /// reads and a sentence for writes, or an error sentence (bad arguments, a limit, a
    /// conflict). Never panics on what a model sends.
    pub async fn run_state_tool(
        &self,
        run: &RunId,
        author: &StateAuthor,
        llm_name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Result<String, String>> {
        let call = tools::parse(llm_name, arguments)?;
        Some(match call {
            Ok(call) => self.run_call(run, author, call).await,
            Err(sentence) => Err(sentence),
        })
    }

    async fn run_call(
        &self,
        run: &RunId,
        author: &StateAuthor,
        call: tools::Call,
    ) -> Result<String, String> {
        use tools::Call;
        let said = |e: &dyn std::fmt::Display| e.to_string();
        match call {
            Call::Get { key } => {
                let entry = self.state_get(run, &key).await.map_err(|e| said(&e))?;
                Ok(tools::get_json(&key, entry.as_ref()))
            }
            Call::Put {
                key,
                value,
                expected_version,
            } => {
                let w = self
                    .state_put(run, &key, &value, author, expected_version)
                    .await
                    .map_err(|e| said(&e))?;
                Ok(format!(
                    "Stored {:?} as version {} ({} bytes). To replace it later, pass expected_version {}.",
                    w.key, w.version, w.bytes, w.version
                ))
            }
            Call::List => {
                let keys = self.state_list(run).await.map_err(|e| said(&e))?;
                Ok(tools::list_json(&keys))
            }
            Call::NoteAdd { text } => {
                let n = self
                    .state_add_note(run, author, &text)
                    .await
                    .map_err(|e| said(&e))?;
                Ok(format!("Added note {} to this run's notes.", n.seq))
            }
            Call::NotesRead { after } => {
                let notes = self.state_notes(run).await.map_err(|e| said(&e))?;
                Ok(tools::notes_json(&notes, after))
            }
        }
    }

    async fn audit_state(
        &self,
        run: &RunId,
        author: &StateAuthor,
        key: Option<&str>,
        version: u32,
        bytes: u64,
    ) {
        let event = AuditEvent::StateWritten {
            by: author.actor(),
            run: run.to_string(),
            key: key.map(str::to_owned),
            version,
            bytes,
        };
        self.audit
            .record(vec![(event, AuditContext::default())])
            .await;
    }
}

#[cfg(test)]
mod tests;

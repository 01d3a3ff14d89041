//! A run-tree node live while its turn runs (issue 15, point 4): the turn's events are read as
//! they come, counted ([`Tally`]), and what the node has spent so far (calls, tokens, cost) is
//! written over its row and announced ([`crate::events::HostEvent::AgentRunChanged`]), so the
//! app's tree shows a supervisor or a long sub-agent working rather than "0 calls" until it
//! ends. Writes are throttled to one per [`EVERY`] per node; a change inside the window is
//! written when the window ends (a model that goes quiet after a tool call still shows the
//! call), and the node's end ([`Agents::finish_node`]) writes the final numbers in any case.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

use crate::agents::delegation::{Lineage, Tally};
use crate::agents::{AgentRunProgress, Agents};
use crate::chat::ChatEvent;
use crate::ids::{ConversationId, RunId};
use crate::llm::limits::Price;

/// The shortest time between two progress writes of one node.
pub const EVERY: Duration = Duration::from_millis(250);

/// One turn's events being counted, and its node's row kept up to date.
pub struct Live<'a> {
    agents: &'a Agents,
    run: RunId,
    conversation: ConversationId,
    /// The node written to; `None` (a plain model chat) only counts.
    node: Option<String>,
    price: Option<Price>,
    tally: Tally,
    written: Option<Instant>,
    dirty: bool,
}

impl<'a> Live<'a> {
    /// Follows a turn of `node` (of `lineage`'s run) on a model priced at `price`.
    pub fn new(
        agents: &'a Agents,
        lineage: &Lineage,
        node: Option<String>,
        price: Option<Price>,
    ) -> Self {
        Self {
            agents,
            run: lineage.run.clone(),
            conversation: lineage.conversation.clone(),
            node,
            price,
            tally: Tally::default(),
            written: None,
            dirty: false,
        }
    }

    /// Counts `ev`; a change in calls or tokens is due to be written.
    fn see(&mut self, ev: &ChatEvent) {
        let before = (self.tally.usage, self.tally.calls);
        self.tally.see(ev);
        if (self.tally.usage, self.tally.calls) != before && self.node.is_some() {
            self.dirty = true;
        }
    }

    /// When the next write may happen: now for the first, else [`EVERY`] after the last.
    fn due(&self) -> Instant {
        self.written.map_or_else(Instant::now, |w| w + EVERY)
    }

    /// Writes what the node has spent so far and tells the shells, if it is still running. A
    /// failed write is logged: the node's end writes the numbers again.
    async fn flush(&mut self) {
        self.dirty = false;
        self.written = Some(Instant::now());
        let Some(node) = &self.node else { return };
        let usage = self.tally.usage;
        let progress = AgentRunProgress {
            usage_input: usage.input_tokens,
            usage_output: usage.output_tokens,
            cost_usd: self
                .price
                .map(|p| p.cost(usage.input_tokens, usage.output_tokens)),
            tool_calls: self.tally.calls,
        };
        match self.agents.store.agent_run_progress(node, &progress).await {
            Ok(true) => self.agents.run_changed(&self.run, &self.conversation),
            Ok(false) => {}
            Err(e) => tracing::warn!(node = %node, error = %e, "run-tree progress not written"),
        }
    }

    /// Runs `turn` while counting the events it sends on `rx`, writing progress as it goes;
    /// returns the turn's output and the whole count (events left when it ends included). For
    /// a turn whose channel outlives it (another sender holds a clone).
    ///
    /// The turn and the counting are joined, never one awaited inside the other: a progress
    /// write waits for the store's writer, which the turn itself (a tool call's transaction, a
    /// child's node) may hold, and must not stop the turn from being polled meanwhile.
    pub async fn follow<T>(
        mut self,
        turn: impl Future<Output = T>,
        rx: &mut mpsc::UnboundedReceiver<ChatEvent>,
    ) -> (T, Tally) {
        let ended = CancellationToken::new();
        let turn = async {
            let out = turn.await;
            ended.cancel();
            out
        };
        let count = async {
            let mut open = true;
            loop {
                tokio::select! {
                    () = ended.cancelled() => break,
                    ev = rx.recv(), if open => match ev {
                        Some(ev) => self.see(&ev),
                        None => open = false,
                    },
                    () = sleep_until(self.due()), if self.dirty => self.flush().await,
                }
            }
            while let Ok(ev) = rx.try_recv() {
                self.see(&ev);
            }
            self.tally
        };
        tokio::join!(turn, count)
    }

    /// Counts the events on `rx` until it closes, passing each on to `tap` (stops early when
    /// `tap` is gone), writing progress as it goes; returns the count. For a turn whose channel
    /// closes when it ends (a conversation's turn, `host/chat.rs`), joined with the turn (as
    /// there), never awaited inside it.
    pub async fn pump(
        mut self,
        mut rx: mpsc::UnboundedReceiver<ChatEvent>,
        tap: mpsc::UnboundedSender<ChatEvent>,
    ) -> Tally {
        loop {
            tokio::select! {
                ev = rx.recv() => {
                    let Some(ev) = ev else { break };
                    self.see(&ev);
                    if tap.send(ev).is_err() {
                        break;
                    }
                }
                () = sleep_until(self.due()), if self.dirty => self.flush().await,
            }
        }
        self.tally
    }
}

//! The conversation service: one user message in, a turn of the agent loop, everything
//! written to SQLite as it happens (ST-02).
//!
//! Order of writes: the user's message is committed before the provider is called; the
//! streaming answer is a row marked incomplete, checkpointed at most once a second and
//! finished when the answer is whole (or marked cancelled/failed with what arrived); tool calls
//! are recorded against the answer that asked for them, with the full result; the tool-result
//! message is appended like any other. The loop itself ([`crate::chat`]) knows nothing of
//! storage: this file turns its events into rows and passes them on to the caller.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod writer;

use super::chat_agent::{HandOver, Seat, MAX_HAND_OVERS, TAKE_OVER};
use super::delegation::{Lineage, Live};
use super::HostTools;
use super::{Host, HostError};
use crate::agent_data::AgentProfile;
use crate::chat::{compact, run_turn, ChatEvent, ToolRunner, TurnConfig, TurnEnd};
use crate::ids::{ConversationId, MessageId, ProviderName, RunId, ServerId};
use crate::llm::{Message, Part, Provider, Role};
use crate::models::ProviderView;
use crate::store::{MessageStatus, NewSummary, StoreError, StoredMessage};
use writer::Writer;

/// What the model is told before the conversation.
const SYSTEM: &str = "You are a helpful assistant inside Switchboard, a desktop app that \
connects you to tools served by MCP servers. Use a tool when it helps; the user approves each \
call. When a call is denied or fails, say so plainly and continue without it.";

/// The longest instructions taken from one server.
const INSTRUCTIONS_MAX: usize = 4_000;

/// What starts a turn.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnInput {
    /// A new message from the person: text, attachments, images.
    Message(Vec<Part>),
    /// Edit-and-resend: `message` (one the person wrote) and everything after it are replaced
    /// by `parts`, which is answered. The replaced messages stay in the history.
    Edit {
        /// The message edited.
        message: MessageId,
        /// Its new content.
        parts: Vec<Part>,
    },
    /// Answer the person's last message again; the previous answer stays in the history.
    Regenerate,
}

impl TurnInput {
    /// A plain text message.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Message(vec![Part::Text { text: text.into() }])
    }
}

/// One message to send.
#[derive(Clone, Debug)]
pub struct SendRequest {
    /// The conversation; `None` starts a new one (only with [`TurnInput::Message`]).
    pub conversation: Option<ConversationId>,
    /// The provider to answer with.
    pub provider: ProviderName,
    /// The model; the provider's default when `None`.
    pub model: Option<String>,
    /// What the turn answers.
    pub input: TurnInput,
    /// Model calls per turn at most.
    pub max_steps: Option<usize>,
    /// The servers a person brought something from into this message (an attached resource,
    /// a prompt run as a slash command): the conversation's data flow counts them (AP-04).
    pub attached: Vec<ServerId>,
    /// The run this turn belongs to ([`Host::open_run`]); [`Host::cancel_run`] stops it,
    /// keeping what arrived. Without one the turn cannot be stopped from outside.
    pub run: Option<RunId>,
    /// The agent that runs the conversation (issue 15): its provider, model, system prompt,
    /// scope, tightenings and budget replace `provider` and `model`, and it may delegate and
    /// hand the conversation over. `None`: the plain model chat.
    pub agent: Option<crate::agent_data::AgentName>,
    /// Progressive discovery (issue 16) switched on or off for the conversation before this
    /// turn, a new one included; `None` leaves it as it is.
    pub discovery: Option<bool>,
}

/// How a send ended.
#[derive(Clone, Debug, PartialEq)]
pub struct SendOutcome {
    /// The conversation (new or given).
    pub conversation: ConversationId,
    /// How the turn ended.
    pub end: TurnEnd,
    /// The agent that answered last (after any hand-over); `None` for a plain model.
    pub agent: Option<crate::agent_data::AgentName>,
}

impl Host {
    /// Flags answers that were streaming when a previous process died (ST-02). Call once at
    /// start, in a process that runs chats. Work of another live process on the same data
    /// directory (the app and a terminal's `switchboard chat`) is left alone (`runners`); every
    /// turn that starts when none runs anywhere sweeps the same way.
    pub async fn recover_interrupted(&self) -> Result<u64, HostError> {
        let (_working, swept) = self.working().await?;
        Ok(swept)
    }

    /// Sends a message and runs the turn; events reach `events` after they are stored.
    pub async fn send_message(
        &self,
        req: SendRequest,
        events: mpsc::UnboundedSender<ChatEvent>,
    ) -> Result<SendOutcome, HostError> {
        // Held until the turn ends: no other process's sweep flags this turn's answer while it
        // is written, and a turn alone on the data directory sweeps what a dead one left.
        let (_working, _) = self.working().await?;
        let run = self.claim_run(req.run.as_ref(), None)?;
        let cancel = run.cancel.clone();
        for s in &req.attached {
            self.server(s).await?;
        }
        // An agent answers with its own provider and model; otherwise the request names them.
        let mut agent = match &req.agent {
            Some(a) => Some(self.agent(a).await?),
            None => None,
        };
        let (mut provider_name, mut model, mut provider, mut view) = self
            .answering(agent.as_ref(), &req.provider, req.model.clone())
            .await?;
        let task = match &req.input {
            TurnInput::Message(parts) | TurnInput::Edit { parts, .. } => Message {
                role: Role::User,
                parts: parts.clone(),
            }
            .text(),
            TurnInput::Regenerate => "(answer the last message again)".to_owned(),
        };
        let store = &self.inner.store;
        let conversation = match (&req.conversation, &req.input) {
            (Some(id), _) => {
                store.get_conversation(id).await?.ok_or_else(|| {
                    HostError::Store(StoreError::NotFound(format!("conversation {id}")))
                })?;
                id.clone()
            }
            (None, TurnInput::Message(parts)) => {
                let text = Message {
                    role: Role::User,
                    parts: parts.clone(),
                }
                .text();
                let title: String = text.trim().chars().take(60).collect();
                let title = if title.is_empty() {
                    "Attachment"
                } else {
                    &title
                };
                store.create_conversation(title.trim()).await?.id
            }
            (None, _) => {
                return Err(HostError::Invalid(
                    "edit and regenerate need a conversation".into(),
                ))
            }
        };
        // Committed before the provider is called: a crash from here on loses no input. What
        // the message brings from servers counts in the conversation's flow from now on.
        store
            .add_conversation_sources(conversation.as_str(), &req.attached)
            .await?;
        if let Some(on) = req.discovery {
            self.set_conversation_discovery(&conversation, on).await?;
        }
        let mut begun = None;
        match req.input {
            TurnInput::Message(parts) => {
                check_parts(&parts)?;
                store
                    .append_message(
                        &conversation,
                        &Message {
                            role: Role::User,
                            parts,
                        },
                    )
                    .await?;
            }
            TurnInput::Edit { message, parts } => {
                check_parts(&parts)?;
                let visible = store.load_messages(&conversation).await?;
                let editable = visible.iter().any(|m| {
                    m.id == message
                        && m.message.role == Role::User
                        && m.message
                            .parts
                            .iter()
                            .any(|p| !matches!(p, Part::ToolResult { .. }))
                });
                if !editable {
                    return Err(HostError::Invalid(format!(
                        "message {message} is not a visible message the person wrote"
                    )));
                }
                store
                    .edit_and_resend(
                        &conversation,
                        message,
                        &Message {
                            role: Role::User,
                            parts,
                        },
                    )
                    .await?;
            }
            TurnInput::Regenerate => {
                begun = Some(
                    store
                        .regenerate(&conversation, provider_name.as_str(), &model)
                        .await?,
                );
            }
        }

        // A turn offers the tools of every enabled server: those that start when needed start.
        self.start_for_turn().await?;
        // With an agent, the message is a run: the agent its root, hand-overs below it.
        let mut lineage = Lineage::root(conversation.clone());
        let mut from: Option<HandOver> = None;
        let mut hand_overs = 0;
        loop {
            // Issue 16: what leaves for a cloud model is redacted (compaction's summary
            // request too), and the model's placeholders are restored in its tool calls.
            let (door, redaction) =
                self.inner
                    .redaction
                    .redacting(provider, &view, &conversation, &events);
            provider = door;
            let tools = HostTools::load(self, &conversation).await?;
            let supervised = match &agent {
                Some(p) => Some(
                    self.supervise(
                        p,
                        Seat {
                            lineage: &lineage,
                            task: &task,
                            model: &model,
                            profile_id: provider.profile_id(),
                            from: from.as_ref(),
                            hand_overs,
                        },
                        tools.clone(),
                    )
                    .await?,
                ),
                None => None,
            };
            let runner: &dyn ToolRunner = match &supervised {
                Some(s) => &s.tools,
                None => tools.as_ref(),
            };
            // Issue 16: a search over the catalog and the tools loaded, instead of every tool.
            let discovering = self
                .discovering(&conversation, agent.as_ref(), runner)
                .await?;
            let runner: &dyn ToolRunner = match &discovering {
                Some(d) => d,
                None => runner,
            };
            let restoring = redaction
                .clone()
                .map(|r| crate::outbound::Restoring::new(runner, r));
            let runner: &dyn ToolRunner = match &restoring {
                Some(r) => r,
                None => runner,
            };
            let mut cfg = TurnConfig::new(model.clone());
            cfg.conversation = Some(conversation.clone());
            cfg.provider = Some(provider_name.clone());
            if let Some(n) = req.max_steps {
                cfg.max_steps = n;
            }
            let window = crate::llm::limits::context_window(&model, view.context_window);
            // Issue 16: what the definitions cost, and a warning (not a refusal) past the share;
            // told again when the turn offers other tools (progressive discovery loads some).
            for ev in self.tools_cost_events(provider.profile_id(), &model, window, &runner.specs())
            {
                let _ = events.send(ev);
            }
            cfg.on_offer = Some(crate::chat::OfferHook(std::sync::Arc::new({
                let (host, model) = (self.clone(), model.clone());
                let profile = provider.profile_id().to_owned();
                move |specs: &[crate::llm::ToolSpec]| {
                    host.tools_cost_events(&profile, &model, window, specs)
                }
            })));
            let (system, mut transcript) = self
                .context(
                    &conversation,
                    provider.as_ref(),
                    &model,
                    window,
                    &runner.specs(),
                    &events,
                    &cancel,
                )
                .await?;
            cfg.system = Some(match &supervised {
                Some(s) => s.system(&system),
                None => system,
            });
            if discovering.is_some() {
                cfg.system = cfg
                    .system
                    .map(|s| super::discovery::with_discovery_prompt(&s));
            }
            if let Some(s) = &supervised {
                cfg.budget = s.budget.clone();
            }
            if from.is_some() {
                transcript.push(Message::user_text(TAKE_OVER));
            }
            let (tx, rx) = mpsc::unbounded_channel();
            let (tap_tx, tap_rx) = mpsc::unbounded_channel();
            let mut outputs = crate::chat::cap::Outputs::default();
            let writer = Writer {
                host: self,
                conversation: &conversation,
                provider: provider_name.as_str(),
                model: &model,
            };
            // A supervised turn's node shows its calls, tokens and cost while it runs.
            let live = Live::new(
                self,
                &lineage,
                supervised.as_ref().map(|s| s.node.clone()),
                cfg.budget.price,
            );
            let tally = live.pump(rx, tap_tx);
            let (end, tally, written) = tokio::join!(
                run_turn(
                    provider.as_ref(),
                    runner,
                    &mut outputs,
                    &cfg,
                    &mut transcript,
                    cancel.clone(),
                    tx,
                ),
                tally,
                writer.run(tap_rx, events.clone(), begun.take()),
            );
            drop(restoring);
            drop(discovering);
            written?;
            self.inner
                .redaction
                .audit_redaction(redaction.as_ref(), &conversation, provider.profile_id())
                .await;
            let Some(s) = supervised else {
                return Ok(SendOutcome {
                    conversation,
                    end,
                    agent: None,
                });
            };
            self.finish_node(&lineage, &s.node, &end, &tally, &cfg.budget)
                .await?;
            let next = s.slot.lock().ok().and_then(|mut h| h.take());
            let answered = agent.as_ref().map(|p| p.name.clone());
            let (TurnEnd::Done(_), Some(h)) = (&end, next) else {
                return Ok(SendOutcome {
                    conversation,
                    end,
                    agent: answered,
                });
            };
            if hand_overs == MAX_HAND_OVERS {
                return Ok(SendOutcome {
                    conversation,
                    end,
                    agent: answered,
                });
            }
            hand_overs += 1;
            let next_profile = self.agent(&h.to).await?;
            (provider_name, model, provider, view) = self
                .answering(Some(&next_profile), &next_profile.provider, None)
                .await?;
            // Audited once the next agent can take the turn (it exists, its provider answers).
            super::agent_tools::HandOn {
                from: &h.from,
                to: &h.to,
                hand_over: true,
                text: &h.note,
            }
            .audit(self, &lineage, super::chat_agent::HAND_OVER_TOOL)
            .await;
            let _ = events.send(ChatEvent::HandedOver {
                from: h.from.to_string(),
                to: h.to.to_string(),
                note: h.note.clone(),
            });
            lineage.parent_node = Some(s.node);
            agent = Some(next_profile);
            from = Some(h);
        }
    }

    /// The provider and model that answer: the agent's, or else `provider` and `model`.
    async fn answering(
        &self,
        agent: Option<&AgentProfile>,
        provider: &ProviderName,
        model: Option<String>,
    ) -> Result<(ProviderName, String, Box<dyn Provider>, ProviderView), HostError> {
        let (name, model) = match agent {
            Some(p) => (p.provider.clone(), p.model.clone()),
            None => (provider.clone(), model),
        };
        let (provider, view) = self.inner.models.provider(&name).await?;
        let model = model
            .or(view.model.clone())
            .ok_or_else(|| HostError::Provider {
                name: name.to_string(),
                reason: match agent {
                    Some(p) => format!(
                        "agent {} names no model and the provider has no default",
                        p.name
                    ),
                    None => "no model given and the provider has no default; pass --model".into(),
                },
            })?;
        Ok((name, model, provider, view))
    }

    /// The system prompt and transcript for the next request: the visible, complete messages
    /// after the latest summary, compacted first when they would fill most of `window`.
    #[allow(clippy::too_many_arguments)]
    async fn context(
        &self,
        conversation: &ConversationId,
        provider: &dyn crate::llm::Provider,
        model: &str,
        window: u32,
        specs: &[crate::llm::ToolSpec],
        events: &mpsc::UnboundedSender<ChatEvent>,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Message>), HostError> {
        let store = &self.inner.store;
        let base = self.system_prompt().await?;
        let latest = store.summaries(conversation).await?.pop();
        let mut stored: Vec<StoredMessage> = store
            .load_messages(conversation)
            .await?
            .into_iter()
            .filter(|m| m.status == MessageStatus::Complete)
            .filter(|m| latest.as_ref().is_none_or(|s| m.seq > s.through_seq))
            .collect();
        let system = |summary: Option<&str>| match summary {
            Some(s) => compact::with_summary(&base, s),
            None => base.clone(),
        };
        let previous = latest.as_ref().map(|s| s.text.as_str());
        let messages: Vec<Message> = stored.iter().map(|m| m.message.clone()).collect();
        let fixed = compact::estimate_fixed(&system(previous), specs);
        let Some(cut) = compact::plan(&messages, fixed, window, false) else {
            return Ok((system(previous), messages));
        };
        let summarized = compact::summarize(
            provider,
            model,
            window,
            previous,
            &messages[..cut],
            cancel.clone(),
        )
        .await;
        let summary = match summarized {
            Ok(s) => s,
            Err(e) => {
                // The turn goes on uncompacted; the vendor's own limit is the last word.
                tracing::warn!(conversation = %conversation, error = %e, "compaction failed");
                return Ok((system(previous), messages));
            }
        };
        let covered = u32::try_from(cut)
            .unwrap_or(u32::MAX)
            .saturating_add(latest.as_ref().map_or(0, |s| s.messages));
        let kept = stored.split_off(cut);
        let Some(through) = stored.last() else {
            return Ok((system(previous), messages));
        };
        store
            .save_summary(
                conversation,
                &NewSummary {
                    through: through.id,
                    messages: covered,
                    text: &summary,
                    provider: provider.profile_id(),
                    model,
                },
            )
            .await?;
        let _ = events.send(ChatEvent::Compacted {
            summary: summary.clone(),
            messages: covered,
        });
        Ok((
            system(Some(&summary)),
            kept.into_iter().map(|m| m.message).collect(),
        ))
    }

    async fn system_prompt(&self) -> Result<String, HostError> {
        let mut system = SYSTEM.to_owned();
        for c in self.catalogs().await? {
            if let Some(i) = &c.catalog.instructions {
                // TD-02: instructions that changed since approved wait for review.
                if !self.instructions_approved(&c.server, &c.catalog).await? {
                    continue;
                }
                let i: String = i.chars().take(INSTRUCTIONS_MAX).collect();
                system.push_str(&format!(
                    "\n\n# Instructions from the MCP server \"{}\"\n{i}",
                    c.server
                ));
            }
        }
        Ok(system)
    }
}

/// Refuses an empty message and images that are not base64 rasters of an allowed type.
fn check_parts(parts: &[Part]) -> Result<(), HostError> {
    let mut said = false;
    for p in parts {
        match p {
            Part::Text { text } => said |= !text.trim().is_empty(),
            Part::Image { mime_type, data } => {
                if !IMAGE_TYPES.contains(&mime_type.as_str()) {
                    return Err(HostError::Invalid(format!(
                        "images must be PNG, JPEG, GIF or WebP, not {}",
                        crate::config::escape::short_for_display(mime_type, 40)
                    )));
                }
                if data.is_empty() || data.len() > IMAGE_MAX_BASE64 {
                    return Err(HostError::Invalid(
                        "an image must be 1 byte to 15 MB of base64".into(),
                    ));
                }
                said = true;
            }
            Part::ToolCall { .. } | Part::ToolResult { .. } => {
                return Err(HostError::Invalid(
                    "a message from the person cannot carry tool calls or results".into(),
                ))
            }
        }
    }
    if said {
        Ok(())
    } else {
        Err(HostError::Invalid("the message is empty".into()))
    }
}

/// Image types a person may attach (what both vendors accept).
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
/// The largest attached image, as base64 (about 11 MB of image).
const IMAGE_MAX_BASE64: usize = 15 * 1024 * 1024;

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

mod seat;
mod writer;

use super::{Host, HostError};
use crate::agent_data::AgentProfile;
use crate::agents::{HandOn, HandOver, Lineage, Live, HAND_OVER_TOOL, MAX_HAND_OVERS, TAKE_OVER};
use crate::chat::{compact, run_turn, ChatEvent, TurnConfig, TurnEnd};
use crate::ids::{ConversationId, MessageId, ProviderName, RunId, ServerId};
use crate::llm::{Message, Part, Role};
use crate::store::{MessageStatus, NewSummary, StoreError, StoredMessage};
use seat::{Answering, Layers, Place, Seated};
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

/// What every seat of one turn shares: the conversation, the person's message as a task,
/// the step limit, where events go and the run's cancel token.
struct Turn<'a> {
    conversation: ConversationId,
    task: String,
    max_steps: Option<usize>,
    events: &'a mpsc::UnboundedSender<ChatEvent>,
    cancel: &'a CancellationToken,
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
        for s in &req.attached {
            self.server(s).await?;
        }
        // An agent answers with its own provider and model; otherwise the request names them.
        let agent = match &req.agent {
            Some(a) => Some(self.agent(a).await?),
            None => None,
        };
        let answering = self
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
        let conversation = self
            .conversation_for(req.conversation.as_ref(), &req.input)
            .await?;
        // Committed before the provider is called: a crash from here on loses no input. What
        // the message brings from servers counts in the conversation's flow from now on.
        self.inner
            .store
            .add_conversation_sources(conversation.as_str(), &req.attached)
            .await?;
        if let Some(on) = req.discovery {
            self.set_conversation_discovery(&conversation, on).await?;
        }
        let begun = self
            .record_input(&conversation, req.input, &answering)
            .await?;
        // A turn offers the tools of every enabled server: those that start when needed start.
        self.start_for_turn().await?;
        let turn = Turn {
            conversation,
            task,
            max_steps: req.max_steps,
            events: &events,
            cancel: &run.cancel,
        };
        self.answer(&turn, agent, answering, begun).await
    }

    /// The conversation a send goes to: `given`, which must exist, or a new one titled after
    /// the message.
    async fn conversation_for(
        &self,
        given: Option<&ConversationId>,
        input: &TurnInput,
    ) -> Result<ConversationId, HostError> {
        let store = &self.inner.store;
        match (given, input) {
            (Some(id), _) => {
                store.get_conversation(id).await?.ok_or_else(|| {
                    HostError::Store(StoreError::NotFound(format!("conversation {id}")))
                })?;
                Ok(id.clone())
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
                Ok(store.create_conversation(title.trim()).await?.id)
            }
            (None, _) => Err(HostError::Invalid(
                "edit and regenerate need a conversation".into(),
            )),
        }
    }

    /// Stores what the turn answers: the person's message, their edit (replacing the message
    /// and what followed), or, to regenerate, the answer row it opens (returned).
    async fn record_input(
        &self,
        conversation: &ConversationId,
        input: TurnInput,
        answering: &Answering,
    ) -> Result<Option<MessageId>, HostError> {
        let store = &self.inner.store;
        match input {
            TurnInput::Message(parts) => {
                check_parts(&parts)?;
                store
                    .append_message(
                        conversation,
                        &Message {
                            role: Role::User,
                            parts,
                        },
                    )
                    .await?;
                Ok(None)
            }
            TurnInput::Edit { message, parts } => {
                check_parts(&parts)?;
                let visible = store.load_messages(conversation).await?;
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
                        conversation,
                        message,
                        &Message {
                            role: Role::User,
                            parts,
                        },
                    )
                    .await?;
                Ok(None)
            }
            TurnInput::Regenerate => Ok(Some(
                store
                    .regenerate(conversation, answering.name.as_str(), &answering.model)
                    .await?,
            )),
        }
    }

    /// Answers the stored message: the plain model once, or the agent and whoever it hands
    /// the conversation over to (at most [`MAX_HAND_OVERS`] times), each a seat of the turn.
    /// With an agent, the message is a run: the agent its root, hand-overs below it.
    async fn answer(
        &self,
        turn: &Turn<'_>,
        mut agent: Option<AgentProfile>,
        mut answering: Answering,
        mut begun: Option<MessageId>,
    ) -> Result<SendOutcome, HostError> {
        let mut lineage = Lineage::root(turn.conversation.clone());
        let mut from: Option<HandOver> = None;
        let mut hand_overs = 0;
        loop {
            let place = Place {
                agent: agent.as_ref(),
                lineage: &lineage,
                from: from.as_ref(),
                hand_overs,
            };
            let (end, handed) = self
                .answer_seat(turn, &place, answering, begun.take())
                .await?;
            let answered = agent.as_ref().map(|p| p.name.clone());
            let next = handed.filter(|_| hand_overs < MAX_HAND_OVERS);
            let Some((node, h)) = next else {
                return Ok(SendOutcome {
                    conversation: turn.conversation.clone(),
                    end,
                    agent: answered,
                });
            };
            hand_overs += 1;
            let next_profile;
            (next_profile, answering) = self.hand_on(turn, &lineage, &h).await?;
            lineage.parent_node = Some(node);
            agent = Some(next_profile);
            from = Some(h);
        }
    }

    /// Runs one seat of the turn. Returns how it ended and, when its agent finished and asked
    /// to hand the conversation over, its run-tree node and the hand-over.
    async fn answer_seat(
        &self,
        turn: &Turn<'_>,
        place: &Place<'_>,
        answering: Answering,
        begun: Option<MessageId>,
    ) -> Result<(TurnEnd, Option<(String, HandOver)>), HostError> {
        let conversation = &turn.conversation;
        let seated = self
            .seat(answering, place, conversation, &turn.task, turn.events)
            .await?;
        let layers = seated.runner(self, conversation, place.agent).await?;
        let (cfg, mut transcript) = self.turn_config(turn, &seated, &layers).await?;
        if place.from.is_some() {
            transcript.push(Message::user_text(TAKE_OVER));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let (tap_tx, tap_rx) = mpsc::unbounded_channel();
        let mut outputs = crate::chat::cap::Outputs::default();
        let writer = Writer {
            host: self,
            conversation,
            provider: seated.name.as_str(),
            model: &seated.model,
        };
        // A supervised turn's node shows its calls, tokens and cost while it runs.
        let live = Live::new(
            &self.inner.features.agents,
            place.lineage,
            seated.supervised.as_ref().map(|s| s.node.clone()),
            cfg.budget.price,
        );
        let tally = live.pump(rx, tap_tx);
        let (end, tally, written) = tokio::join!(
            run_turn(
                seated.provider.as_ref(),
                layers.runner.as_ref(),
                &mut outputs,
                &cfg,
                &mut transcript,
                turn.cancel.clone(),
                tx,
            ),
            tally,
            writer.run(tap_rx, turn.events.clone(), begun),
        );
        drop(layers);
        written?;
        self.inner
            .features
            .redaction
            .audit_redaction(
                seated.redaction.as_ref(),
                conversation,
                seated.provider.profile_id(),
            )
            .await;
        let Some(s) = seated.supervised else {
            return Ok((end, None));
        };
        self.inner
            .features
            .agents
            .finish_node(place.lineage, &s.node, &end, &tally, &cfg.budget)
            .await?;
        let next = s.slot.lock().ok().and_then(|mut h| h.take());
        match (&end, next) {
            (TurnEnd::Done(_), Some(h)) => Ok((end, Some((s.node, h)))),
            _ => Ok((end, None)),
        }
    }

    /// The loop's configuration for a seat and the transcript it starts from.
    async fn turn_config(
        &self,
        turn: &Turn<'_>,
        seated: &Seated,
        layers: &Layers<'_>,
    ) -> Result<(TurnConfig, Vec<Message>), HostError> {
        let (model, provider) = (&seated.model, seated.provider.as_ref());
        let mut cfg = TurnConfig::new(model.clone());
        cfg.conversation = Some(turn.conversation.clone());
        cfg.provider = Some(seated.name.clone());
        if let Some(n) = turn.max_steps {
            cfg.max_steps = n;
        }
        let window = crate::llm::limits::context_window(model, seated.view.context_window);
        // Issue 16: what the definitions cost, and a warning (not a refusal) past the share;
        // told again when the turn offers other tools (progressive discovery loads some).
        let specs = layers.runner.specs();
        for ev in self.tools_cost_events(provider.profile_id(), model, window, &specs) {
            let _ = turn.events.send(ev);
        }
        cfg.on_offer = Some(crate::chat::OfferHook(std::sync::Arc::new({
            let (host, model) = (self.clone(), model.clone());
            let profile = provider.profile_id().to_owned();
            move |specs: &[crate::llm::ToolSpec]| {
                host.tools_cost_events(&profile, &model, window, specs)
            }
        })));
        let (system, transcript) = self
            .context(
                &turn.conversation,
                provider,
                model,
                window,
                &layers.runner.specs(),
                turn.events,
                turn.cancel,
            )
            .await?;
        cfg.system = Some(match &seated.supervised {
            Some(s) => s.system(&system),
            None => system,
        });
        if layers.discovers {
            cfg.system = cfg
                .system
                .map(|s| crate::discovery::with_discovery_prompt(&s));
        }
        if let Some(s) = &seated.supervised {
            cfg.budget = s.budget.clone();
        }
        Ok((cfg, transcript))
    }

    /// Hands the turn on to `h.to`: the next agent and the provider that answers for it,
    /// audited and told once it can take the turn (it exists, its provider answers).
    async fn hand_on(
        &self,
        turn: &Turn<'_>,
        lineage: &Lineage,
        h: &HandOver,
    ) -> Result<(AgentProfile, Answering), HostError> {
        let next = self.agent(&h.to).await?;
        let answering = self.answering(Some(&next), &next.provider, None).await?;
        HandOn {
            from: &h.from,
            to: &h.to,
            hand_over: true,
            text: &h.note,
        }
        .audit(&self.inner.features.agents, lineage, HAND_OVER_TOOL)
        .await;
        let _ = turn.events.send(ChatEvent::HandedOver {
            from: h.from.to_string(),
            to: h.to.to_string(),
            note: h.note.clone(),
        });
        Ok((next, answering))
    }

    /// The provider and model that answer: the agent's, or else `provider` and `model`.
    async fn answering(
        &self,
        agent: Option<&AgentProfile>,
        provider: &ProviderName,
        model: Option<String>,
    ) -> Result<Answering, HostError> {
        let (name, model) = match agent {
            Some(p) => (p.provider.clone(), p.model.clone()),
            None => (provider.clone(), model),
        };
        let (provider, view) = self.inner.features.models.provider(&name).await?;
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
        Ok(Answering {
            name,
            model,
            provider,
            view,
        })
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
                        crate::escape::short_for_display(mime_type, 40)
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

//! One turn of the agent loop, as an explicit state machine:
//!
//! ```text
//! Ask ──stream──▶ Answer ──tool calls──▶ RunTools ──results──▶ Ask … ──no calls──▶ Done
//!   │                │                      │
//!   └── error ──▶ Failed      cancel (any state) ──▶ Cancelled (partial answer kept)
//! ```
//!
//! Every call the model asks for is checked before anything runs: an unknown name or arguments
//! that are not an object go straight back to the model as a tool error; the rest go to the
//! [`ToolRunner`], which validates against the schema and asks for approval. Independent calls
//! of one answer run concurrently; results go back in the model's order. The loop ends when the
//! model stops asking for tools, or after `max_steps` model calls.
//!
//! A turn runs inside one `chat_turn` tracing span naming its conversation, provider and model,
//! so a log line from anywhere below (a retry, a tool call, a compaction) says which turn it
//! belongs to. The span carries identifiers only, never message content: logs are shared in
//! bug reports.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::cap::{cap_parts, read_output_spec, to_parts, Outputs, READ_OUTPUT_TOOL};
use super::events::ChatEvent;
use super::tools::{Started, ToolCall, ToolRunner};
use crate::ids::{ConversationId, ProviderName, ToolRef};
use crate::llm::limits::Price;
use crate::llm::{
    Assembler, ChatRequest, LlmError, Message, Part, Provider, ResultPart, Role, StopReason,
    ToolSpec, Usage,
};
use crate::mcp::catalog::ToolResult;

/// How a turn runs.
#[derive(Clone, Debug)]
pub struct TurnConfig {
    /// The model id.
    pub model: String,
    /// The conversation the turn belongs to, for the turn's tracing span.
    pub conversation: Option<ConversationId>,
    /// The configured provider answering, for the turn's tracing span (the provider's profile
    /// id is named when this is `None`).
    pub provider: Option<ProviderName>,
    /// System instructions (the host adds server instructions before this is built).
    pub system: Option<String>,
    /// Model calls per turn at most.
    pub max_steps: usize,
    /// Characters of one tool output the model sees.
    pub output_cap: usize,
    /// Output token limit per model call.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// How long a model stream may stay silent (no event at all) before the turn fails. Local
    /// models can take a while to load, so this is generous.
    pub idle_timeout: Duration,
    /// What the turn may spend; an agent's budget (issue 15). Unlimited by default.
    pub budget: TurnBudget,
    /// Told the tools offered whenever they differ from the previous model call's (progressive
    /// discovery loads tools mid-turn); what it returns is emitted (the tools' cost, issue 16).
    pub on_offer: Option<OfferHook>,
}

/// What a turn tells when the tools it offers change mid-turn: the runner's tools (without the
/// turn's own output reader) in, events out.
#[derive(Clone)]
pub struct OfferHook(pub std::sync::Arc<OfferFn>);

/// The function inside an [`OfferHook`].
pub type OfferFn = dyn Fn(&[ToolSpec]) -> Vec<ChatEvent> + Send + Sync;

impl std::fmt::Debug for OfferHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OfferHook")
    }
}

/// What one turn may spend before it stops with [`TurnEnd::BudgetExceeded`]. Checked by the
/// loop itself, so no model and no tool can talk its way past it: before every model call
/// (tokens, cost, time), before a tool call is sent (the number of calls) and while anything
/// runs (time).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnBudget {
    /// Input and output tokens of every model call together.
    pub tokens: Option<u64>,
    /// Estimated dollars at `price`; without a price the cost cannot be known and this limit
    /// stops the turn before its first model call rather than guessing.
    pub cost_usd: Option<f64>,
    /// The model's list price, for `cost_usd`.
    pub price: Option<Price>,
    /// Tool calls sent (refused ones do not count); a call of an offered pipeline counts
    /// each of its steps ([`super::ToolRunner::calls_in`]), whether or not all of them run.
    pub tool_calls: Option<u32>,
    /// When the turn must have ended.
    pub deadline: Option<tokio::time::Instant>,
}

impl TurnBudget {
    /// Why the turn may not ask the model again, if it may not.
    fn spent(&self, usage: &Usage) -> Option<String> {
        let tokens = usage.input_tokens + usage.output_tokens;
        if let Some(max) = self.tokens {
            if tokens >= max {
                return Some(format!(
                    "its budget of {max} tokens is spent ({tokens} used)"
                ));
            }
        }
        if let Some(max) = self.cost_usd {
            match &self.price {
                Some(p) => {
                    let cost = p.cost(usage.input_tokens, usage.output_tokens);
                    if cost >= max {
                        return Some(format!(
                            "its budget of ${max:.4} is spent (${cost:.4} estimated)"
                        ));
                    }
                }
                None => {
                    return Some(format!(
                        "it has a cost budget (${max:.4}) but its model's price is unknown, so \
                         what it spends cannot be counted"
                    ))
                }
            }
        }
        self.late()
    }

    /// Why the turn is out of time, if it is.
    fn late(&self) -> Option<String> {
        match self.deadline {
            Some(d) if tokio::time::Instant::now() >= d => {
                Some("its time budget is spent".to_owned())
            }
            _ => None,
        }
    }
}

/// The default [`TurnConfig::idle_timeout`].
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

impl TurnConfig {
    /// Defaults for `model`: 25 steps, a 16k-character output cap, a 5-minute idle timeout.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            conversation: None,
            provider: None,
            system: None,
            max_steps: 25,
            output_cap: super::cap::DEFAULT_CAP,
            max_tokens: None,
            temperature: None,
            idle_timeout: IDLE_TIMEOUT,
            budget: TurnBudget::default(),
            on_offer: None,
        }
    }
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnEnd {
    /// The model finished.
    Done(StopReason),
    /// The step limit was reached while the model still asked for tools.
    StepLimit,
    /// The model call failed.
    Failed(String),
    /// The user stopped it.
    Cancelled,
    /// It spent its budget ([`TurnConfig::budget`]); the reason, for the parent or the person.
    BudgetExceeded(String),
}

/// The turn's states (see the module docs).
enum State {
    Ask,
    RunTools(Vec<(String, String, Value)>),
    End(TurnEnd),
}

/// Runs one turn on `transcript` (which must end with the user's message); new messages are
/// appended to it and announced as [`ChatEvent::MessageDone`].
pub async fn run_turn(
    provider: &dyn Provider,
    tools: &dyn ToolRunner,
    outputs: &mut Outputs,
    cfg: &TurnConfig,
    transcript: &mut Vec<Message>,
    cancel: CancellationToken,
    events: mpsc::UnboundedSender<ChatEvent>,
) -> TurnEnd {
    let span = turn_span(cfg, provider);
    // A time budget cancels everything the turn runs when it is up, and says why.
    let Some(deadline) = cfg.budget.deadline else {
        return turn(provider, tools, outputs, cfg, transcript, cancel, events)
            .instrument(span)
            .await;
    };
    let inner = cancel.child_token();
    let timer = {
        let inner = inner.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            inner.cancel();
        })
    };
    let end = turn(
        provider,
        tools,
        outputs,
        cfg,
        transcript,
        inner,
        events.clone(),
    )
    .instrument(span)
    .await;
    timer.abort();
    match end {
        TurnEnd::Cancelled | TurnEnd::Failed(_) if !cancel.is_cancelled() => {
            if let Some(why) = cfg.budget.late() {
                // The loop already said "cancelled"; the reason follows.
                let _ = events.send(ChatEvent::Failed {
                    error: format!("stopped: {why}"),
                });
                return TurnEnd::BudgetExceeded(why);
            }
            end
        }
        other => other,
    }
}

/// The span one turn runs in: identifiers only (see the module docs).
fn turn_span(cfg: &TurnConfig, provider: &dyn Provider) -> tracing::Span {
    let name = cfg
        .provider
        .as_ref()
        .map_or_else(|| provider.profile_id(), |p| p.as_str());
    let span = tracing::info_span!(
        "chat_turn",
        conversation = tracing::field::Empty,
        provider = name,
        model = cfg.model.as_str(),
    );
    if let Some(c) = &cfg.conversation {
        span.record("conversation", c.as_str());
    }
    span
}

/// The next model request. The tools are asked for before every model call: a runner may
/// offer more as the turn goes (progressive discovery offers a tool from the step after it
/// was loaded), and the offer hook hears when they changed since the `offered` last time.
fn request(
    tools: &dyn ToolRunner,
    cfg: &TurnConfig,
    transcript: &[Message],
    offered: &mut Option<Vec<String>>,
    emit: &impl Fn(ChatEvent),
) -> ChatRequest {
    let mut specs = tools.specs();
    let names: Vec<String> = specs.iter().map(|t| t.name.clone()).collect();
    if let (Some(before), Some(hook)) = (&*offered, &cfg.on_offer) {
        if *before != names {
            for e in (hook.0)(&specs) {
                emit(e);
            }
        }
    }
    *offered = Some(names);
    specs.push(read_output_spec());
    ChatRequest {
        model: cfg.model.clone(),
        system: cfg.system.clone(),
        messages: transcript.to_vec(),
        tools: specs,
        max_tokens: cfg.max_tokens,
        temperature: cfg.temperature,
    }
}

/// How many of `calls` fit in the `left` tool calls of a budget, and the tool calls they
/// send; and how many calls are counted. Each call costs the tool calls it sends (a
/// pipeline, its steps): the calls run in the model's order while they fit what is left;
/// the first that does not, and every one after it, is refused.
fn fitting(
    tools: &dyn ToolRunner,
    calls: &[(String, String, Value)],
    left: Option<usize>,
) -> (usize, usize, usize) {
    let costs: Vec<usize> = calls
        .iter()
        .filter(|c| c.1 != READ_OUTPUT_TOOL)
        .map(|c| tools.calls_in(&c.1).max(1))
        .collect();
    let (mut fit, mut spent) = (0, 0);
    for cost in &costs {
        if left.is_some_and(|l| spent + cost > l) {
            break;
        }
        spent += cost;
        fit += 1;
    }
    (fit, spent, costs.len())
}

/// The state loop of [`run_turn`], inside its span.
async fn turn(
    provider: &dyn Provider,
    tools: &dyn ToolRunner,
    outputs: &mut Outputs,
    cfg: &TurnConfig,
    transcript: &mut Vec<Message>,
    cancel: CancellationToken,
    events: mpsc::UnboundedSender<ChatEvent>,
) -> TurnEnd {
    let emit = |e: ChatEvent| {
        let _ = events.send(e);
    };
    let mut usage = Usage::default();
    let mut steps = 0;
    let mut calls_sent: usize = 0;
    let mut state = State::Ask;
    // The names of the tools the previous model call was offered.
    let mut offered: Option<Vec<String>> = None;
    loop {
        state = match state {
            State::Ask if steps >= cfg.max_steps => State::End(TurnEnd::StepLimit),
            State::Ask if cfg.budget.spent(&usage).is_some() => State::End(
                TurnEnd::BudgetExceeded(cfg.budget.spent(&usage).unwrap_or_default()),
            ),
            State::Ask => {
                steps += 1;
                let req = request(tools, cfg, transcript, &mut offered, &emit);
                match ask(provider, req, cfg.idle_timeout, &cancel, &emit).await {
                    Ok((message, call_usage, stop)) => {
                        usage.add(call_usage);
                        emit(ChatEvent::Usage { usage: call_usage });
                        let calls: Vec<(String, String, Value)> = message
                            .tool_calls()
                            .map(|(id, name, args)| (id.to_owned(), name.to_owned(), args.clone()))
                            .collect();
                        transcript.push(message.clone());
                        emit(ChatEvent::MessageDone { message });
                        if calls.is_empty() {
                            State::End(TurnEnd::Done(stop))
                        } else {
                            State::RunTools(calls)
                        }
                    }
                    Err(AskError::Cancelled) => State::End(TurnEnd::Cancelled),
                    Err(AskError::Failed(e)) => State::End(TurnEnd::Failed(e)),
                }
            }
            State::RunTools(calls) => {
                let limit = cfg
                    .budget
                    .tool_calls
                    .map(|max| usize::try_from(max).unwrap_or(usize::MAX));
                let left = limit.map(|max| max.saturating_sub(calls_sent));
                let (fit, spent, counted) = fitting(tools, &calls, left);
                calls_sent += spent;
                let allowed = left.map(|_| fit);
                let results =
                    run_calls(tools, outputs, cfg, calls, allowed, &cancel, &events).await;
                let over = fit < counted;
                let message = Message {
                    role: Role::User,
                    parts: results,
                };
                transcript.push(message.clone());
                emit(ChatEvent::MessageDone { message });
                if cancel.is_cancelled() {
                    State::End(TurnEnd::Cancelled)
                } else if over {
                    State::End(TurnEnd::BudgetExceeded(format!(
                        "its budget of {} tool calls is spent",
                        limit.unwrap_or_default()
                    )))
                } else {
                    State::Ask
                }
            }
            State::End(end) => {
                match &end {
                    TurnEnd::Done(stop) => emit(ChatEvent::Done {
                        stop: stop.clone(),
                        usage,
                    }),
                    TurnEnd::StepLimit => emit(ChatEvent::Failed {
                        error: format!(
                            "stopped after {} model calls (the step limit) while the model still asked for tools",
                            cfg.max_steps
                        ),
                    }),
                    TurnEnd::Failed(e) => emit(ChatEvent::Failed { error: e.clone() }),
                    TurnEnd::BudgetExceeded(why) => emit(ChatEvent::Failed {
                        error: format!("stopped: {why}"),
                    }),
                    TurnEnd::Cancelled => emit(ChatEvent::Cancelled),
                }
                return end;
            }
        };
    }
}

enum AskError {
    Cancelled,
    Failed(String),
}

/// One model call, streamed: text deltas go out as they arrive; the answer comes back whole.
/// On cancel or failure mid-answer the text so far goes out as [`ChatEvent::Partial`].
async fn ask(
    provider: &dyn Provider,
    req: ChatRequest,
    idle: Duration,
    cancel: &CancellationToken,
    emit: &impl Fn(ChatEvent),
) -> Result<(Message, Usage, StopReason), AskError> {
    let failed = |e: LlmError| match e {
        LlmError::Cancelled => AskError::Cancelled,
        other => AskError::Failed(other.to_string()),
    };
    let silent = || {
        AskError::Failed(format!(
            "the model sent nothing for {} s; stopped waiting",
            idle.as_secs()
        ))
    };
    let mut stream = tokio::select! {
        s = provider.stream(req, cancel.clone()) => s.map_err(failed)?,
        () = cancel.cancelled() => return Err(AskError::Cancelled),
        () = tokio::time::sleep(idle) => return Err(silent()),
    };
    let mut answer = Assembler::new();
    let mut text = String::new();
    let partial = |text: &str| {
        if !text.is_empty() {
            emit(ChatEvent::Partial {
                message: Message {
                    role: Role::Assistant,
                    parts: vec![Part::Text {
                        text: text.to_owned(),
                    }],
                },
            });
        }
    };
    loop {
        let next = tokio::select! {
            n = stream.next() => n,
            () = cancel.cancelled() => {
                partial(&text);
                return Err(AskError::Cancelled);
            }
            () = tokio::time::sleep(idle) => {
                partial(&text);
                return Err(silent());
            }
        };
        match next {
            Some(Ok(ev)) => {
                if let crate::llm::StreamEvent::TextDelta { text: t } = &ev {
                    text.push_str(t);
                    emit(ChatEvent::TextDelta { text: t.clone() });
                }
                answer.push(&ev);
                if answer.is_done() {
                    break;
                }
            }
            Some(Err(e)) => {
                partial(&text);
                return Err(failed(e));
            }
            None => break,
        }
    }
    match answer.finish() {
        Ok(a) => Ok((a.message, a.usage, a.stop)),
        Err(e) => {
            partial(&text);
            Err(failed(e))
        }
    }
}

/// Tells the model that the call ran with the person's arguments, not its own.
fn edited_note(edited: &Value) -> ResultPart {
    ResultPart::Text {
        text: format!(
            "(The user edited the arguments before approving; the call ran with: {edited})"
        ),
    }
}

/// A call of the model's, resolved, waiting to run.
struct Pending {
    id: String,
    name: String,
    args: Value,
    /// The server tool behind the name, if any.
    resolved: Option<ToolRef>,
    /// Whether the runner answers it itself.
    local: bool,
    /// Whether it is past the tool-call budget.
    over: bool,
}

/// What a call gave: the full result (for the record), the parts the model reads, and
/// whether it is an error.
type Outcome = (Option<Value>, Vec<ResultPart>, bool);

/// A refusal the model reads.
fn refused(why: String) -> Outcome {
    (None, vec![ResultPart::Text { text: why }], true)
}

/// A result the model reads.
fn answered(result: &ToolResult) -> Outcome {
    (
        serde_json::to_value(result).ok(),
        to_parts(result),
        result.is_error,
    )
}

/// Runs one call (or refuses it) and says what it gave and how long it took.
async fn run_one(
    tools: &dyn ToolRunner,
    call: Pending,
    cancel: CancellationToken,
    events: &mpsc::UnboundedSender<ChatEvent>,
) -> (String, Option<Value>, Vec<ResultPart>, bool, Duration) {
    let started = Instant::now();
    let Pending {
        id,
        name,
        args,
        resolved,
        local,
        over,
    } = call;
    let (full, parts, is_error) = match (resolved, args) {
        _ if over => refused(
            "Not run: the tool-call budget of this agent does not cover it (a \
             pipeline counts each of its steps); answer with what you have."
                .into(),
        ),
        (None, Value::Object(map)) if local => match tools.run_local(&name, map, cancel).await {
            Ok(result) => answered(&result),
            Err(why) => refused(why),
        },
        (None, _) if local => refused("The arguments must be a JSON object.".into()),
        (None, _) => refused(format!(
            "There is no tool named {name:?}. Use one of the tools offered."
        )),
        (Some(_), Value::String(raw)) => refused(format!(
            "The arguments are not valid JSON: {}",
            raw.chars().take(200).collect::<String>()
        )),
        (Some(_), other) if !other.is_object() => {
            refused("The arguments must be a JSON object.".into())
        }
        (Some(tool), Value::Object(map)) => {
            run_server_call(tools, &id, tool, map, cancel, events).await
        }
        (Some(_), _) => refused("The arguments must be a JSON object.".into()),
    };
    (id, full, parts, is_error, started.elapsed())
}

/// Runs a call of a server's tool: "running" is told only once it is approved and sent,
/// then its progress; a result the person edited the arguments of says so first.
async fn run_server_call(
    tools: &dyn ToolRunner,
    id: &str,
    tool: ToolRef,
    arguments: Map<String, Value>,
    cancel: CancellationToken,
    events: &mpsc::UnboundedSender<ChatEvent>,
) -> Outcome {
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let (stx, srx) = tokio::sync::oneshot::channel::<Started>();
    let forward_id = id.to_owned();
    let forward_events = events.clone();
    // "Running" only once the call is approved and sent; then its progress.
    let forward = tokio::spawn(async move {
        let edited = match srx.await {
            Ok(started) => {
                let edited = started.edited.map(Value::Object);
                let _ = forward_events.send(ChatEvent::ToolRunning {
                    call_id: forward_id.clone(),
                    edited_arguments: edited.clone(),
                    allowed_by: started.allowed_by,
                });
                edited
            }
            Err(_) => None,
        };
        while let Some(progress) = prx.recv().await {
            let _ = forward_events.send(ChatEvent::ToolProgress {
                call_id: forward_id.clone(),
                progress,
            });
        }
        edited
    });
    let call = ToolCall {
        tool,
        arguments,
        cancel,
        progress: ptx,
        started: stx,
    };
    let r = tools.run(call).await;
    let edited = forward.await.ok().flatten();
    match r {
        Ok(result) => {
            let (full, mut parts, is_error) = answered(&result);
            if let Some(edited) = edited {
                parts.insert(0, edited_note(&edited));
            }
            (full, parts, is_error)
        }
        Err(why) => refused(why.to_string()),
    }
}

/// Runs one answer's calls concurrently and returns the result parts in the model's order.
async fn run_calls(
    tools: &dyn ToolRunner,
    outputs: &mut Outputs,
    cfg: &TurnConfig,
    calls: Vec<(String, String, Value)>,
    allowed: Option<usize>,
    cancel: &CancellationToken,
    events: &mpsc::UnboundedSender<ChatEvent>,
) -> Vec<Part> {
    let emit = |e: ChatEvent| {
        let _ = events.send(e);
    };
    // Built-in calls read `outputs`; answer them first, before the concurrent calls borrow it.
    let mut builtin = Vec::new();
    let mut external = Vec::new();
    for (id, name, args) in calls {
        let resolved = tools.resolve(&name);
        emit(ChatEvent::ToolCallProposed {
            call_id: id.clone(),
            name: name.clone(),
            server: resolved.as_ref().map(|r| r.server.to_string()),
            tool: resolved.as_ref().map(|r| r.tool.to_string()),
            arguments: args.clone(),
        });
        if name == READ_OUTPUT_TOOL {
            builtin.push((id, args));
        } else {
            let local = resolved.is_none() && tools.is_local(&name);
            let over = allowed.is_some_and(|a| external.len() >= a);
            external.push(Pending {
                id,
                name,
                args,
                resolved,
                local,
                over,
            });
        }
    }
    let mut done: Vec<(String, Vec<ResultPart>, bool)> = Vec::new();
    for (id, args) in builtin {
        let (text, is_error) = outputs.read(&args);
        emit(ChatEvent::ToolResult {
            call_id: id.clone(),
            content: vec![ResultPart::Text { text: text.clone() }],
            is_error,
            full: None,
            duration_ms: 0,
        });
        done.push((id, vec![ResultPart::Text { text }], is_error));
    }
    let runs = external
        .into_iter()
        .map(|call| run_one(tools, call, cancel.child_token(), events));
    let finished = futures::future::join_all(runs).await;
    for (id, full, parts, is_error, took) in finished {
        let (parts, whole) = cap_parts(&id, parts, cfg.output_cap);
        if let Some(whole) = whole {
            outputs.keep(&id, whole);
        }
        emit(ChatEvent::ToolResult {
            call_id: id.clone(),
            content: parts.clone(),
            is_error,
            full,
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        });
        done.push((id, parts, is_error));
    }
    done.into_iter()
        .map(|(call_id, content, is_error)| Part::ToolResult {
            call_id,
            content,
            is_error,
        })
        .collect()
}

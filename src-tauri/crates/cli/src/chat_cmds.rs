//! `switchboard provider ...`, `switchboard chat` and `switchboard history ...`.
//!
//! `chat` streams the answer to stdout. Every tool call the model asks for is shown on stderr
//! with its full arguments and waits for an answer read from stdin ([`crate::approve`]: `y`
//! runs it, `e` edits the arguments first, `n REASON` refuses and tells the model why, anything
//! else or end of input refuses): on a terminal that is a prompt; in a script, answers are
//! lines. Nothing runs without a `y` (AP-01). Questions that come up during the turn (a server's
//! form, URL or sampling request, a result held for review) are asked the same way
//! ([`crate::questions`]); a server's sampling request is answered by the conversation's model.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use switchboard_core::agent_data::{AgentName, AgentProfile};
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::host::{Host, SendRequest, TurnInput};
use switchboard_core::ids::{ConversationId, MessageId};
use switchboard_core::llm::Part;
use switchboard_core::redact::Secret;
use switchboard_core::store::{ArchiveFilter, ConversationQuery, HIGHLIGHT_END, HIGHLIGHT_START};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::errors::CliError;
use crate::{output, Ctx};

/// Model providers.
#[derive(Subcommand, Debug)]
pub enum ProviderCmd {
    /// Add a provider: `--kind openai|anthropic|ollama|lmstudio|vllm|openrouter|deepseek|custom`.
    Add {
        /// Its name, e.g. `work` or `local`.
        name: String,
        /// The vendor profile.
        #[arg(long)]
        kind: String,
        /// Replace the profile's base URL (required for `custom`).
        #[arg(long)]
        base_url: Option<String>,
        /// The default model.
        #[arg(long)]
        model: Option<String>,
        /// The model's context window in tokens, when Switchboard cannot know it from the model
        /// name (local models); older turns are summarized when a conversation nears it.
        #[arg(long)]
        context_window: Option<u32>,
        /// Mark the base URL's host local: a machine of yours on a network you trust. A local
        /// runtime (ollama, lmstudio, vllm) there is not redacted, and plain http may go there.
        #[arg(long, requires = "base_url")]
        local: bool,
    },
    /// List providers, with whether their key is set and whether what goes to them is
    /// redacted.
    List,
    /// Take a host off the addresses marked local (`provider add --local`).
    UnmarkLocal {
        /// The host name or IP address.
        host: String,
    },
    /// Remove a provider and its key.
    Remove {
        /// The provider.
        name: String,
    },
    /// Store a provider's API key in the OS keyring (from stdin or a hidden prompt).
    SetKey {
        /// The provider.
        name: String,
    },
    /// Delete a provider's API key from the OS keyring; the provider stays.
    DeleteKey {
        /// The provider.
        name: String,
    },
}

/// `switchboard chat`.
#[derive(Args, Debug)]
pub struct ChatArgs {
    /// `PROVIDER` or `PROVIDER:MODEL`; the only configured provider when omitted.
    #[arg(long)]
    model: Option<String>,
    /// Let this agent profile answer (`switchboard agent list`): its provider, model, scope,
    /// policy and budget apply, and it may delegate to other agents and hand the
    /// conversation over.
    #[arg(long, conflicts_with = "model")]
    agent: Option<String>,
    /// Continue this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// Model calls per turn at most.
    #[arg(long)]
    max_steps: Option<usize>,
    /// Edit-and-resend: replace this message of the conversation (an id from `history show`)
    /// with MESSAGE and answer it; what followed it stays in the history.
    #[arg(
        long,
        requires = "conversation",
        requires = "message",
        conflicts_with = "regenerate"
    )]
    edit: Option<i64>,
    /// Answer the last message of the conversation again.
    #[arg(long, requires = "conversation")]
    regenerate: bool,
    /// Attach an image file (PNG, JPEG, GIF or WebP); may be repeated.
    #[arg(long, value_name = "PATH")]
    image: Vec<std::path::PathBuf>,
    /// Send this conversation's messages and tool results to cloud models unredacted (issue
    /// 16): it stays off for the conversation until `--redact`.
    #[arg(long, conflicts_with = "redact")]
    no_redact: bool,
    /// Switch redaction back on for this conversation.
    #[arg(long)]
    redact: bool,
    /// Progressive discovery for this conversation (issue 16): the model is offered a search
    /// over the catalog and the tools it loads, instead of every definition. It stays on for
    /// the conversation until `--no-discover`.
    #[arg(long, conflicts_with = "no_discover")]
    discover: bool,
    /// Offer every tool again in this conversation.
    #[arg(long)]
    no_discover: bool,
    /// The message.
    #[arg(required_unless_present = "regenerate")]
    message: Option<String>,
}

/// The image type of a file, from its name.
fn image_type(path: &std::path::Path) -> anyhow::Result<&'static str> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    Ok(match ext.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => bail!("{}: attach PNG, JPEG, GIF or WebP images", path.display()),
    })
}

/// What the turn answers, from the arguments.
fn turn_input(a: &ChatArgs) -> anyhow::Result<TurnInput> {
    use base64::Engine as _;
    if a.regenerate {
        return Ok(TurnInput::Regenerate);
    }
    let mut parts = Vec::new();
    if let Some(text) = &a.message {
        parts.push(Part::Text { text: text.clone() });
    }
    for path in &a.image {
        let mime_type = image_type(path)?;
        let bytes =
            std::fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
        parts.push(Part::Image {
            mime_type: mime_type.into(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        });
    }
    Ok(match a.edit {
        Some(id) => TurnInput::Edit {
            message: MessageId::new(id),
            parts,
        },
        None => TurnInput::Message(parts),
    })
}

/// Conversation history.
#[derive(Subcommand, Debug)]
pub enum HistoryCmd {
    /// Conversations, newest first.
    List,
    /// One conversation's messages.
    Show {
        /// The conversation id.
        id: String,
    },
    /// Full-text search over messages.
    Search {
        /// Words to find.
        query: String,
    },
    /// Copy a conversation up to one of its messages into a new conversation.
    Fork {
        /// The conversation id.
        id: String,
        /// The last message to copy (an id from `history show`).
        #[arg(long)]
        at: i64,
        /// The new conversation's title (the original's when omitted).
        #[arg(long)]
        title: Option<String>,
    },
    /// Export a conversation as Markdown or JSON.
    Export {
        /// The conversation id.
        id: String,
        /// `md` or `json`.
        #[arg(long, default_value = "md")]
        format: String,
    },
}

pub async fn provider(ctx: &Ctx, cmd: ProviderCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ProviderCmd::Add {
            name,
            kind,
            base_url,
            model,
            context_window,
            local,
        } => {
            let name = Host::provider_name(&name)?;
            if let (true, Some(url)) = (local, &base_url) {
                let host = ctx.host.redaction().mark_local(url).await?;
                errln!(
                    "WARNING: marked {host} local: a local model there gets conversations \
                     unredacted, and keys and conversations may go to it over plain http. Do \
                     this only for a machine of yours on a network you trust; undo with \
                     `switchboard provider unmark-local {host}`"
                );
            }
            ctx.host
                .models()
                .add_provider(&name, &kind, base_url, model, context_window)
                .await?;
            errln!("added provider {name}; set its key with `switchboard provider set-key {name}` if it needs one");
        }
        ProviderCmd::List => list_providers(ctx).await?,
        ProviderCmd::UnmarkLocal { host } => {
            if ctx.host.redaction().unmark_local(&host).await? {
                errln!("{host} is no longer marked local");
            } else {
                errln!("{host} was not marked local; nothing changed");
            }
        }
        ProviderCmd::Remove { name } => {
            let name = Host::provider_name(&name)?;
            ctx.host.remove_provider(&name).await?;
            errln!("removed provider {name} and its key");
        }
        ProviderCmd::SetKey { name } => {
            let name = Host::provider_name(&name)?;
            let value = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("API key for {name}: "))?
            } else {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s)?;
                s.trim().to_owned()
            };
            if value.is_empty() {
                bail!("the key is empty; nothing was stored");
            }
            ctx.host
                .models()
                .set_provider_key(&name, Secret::new(value))
                .await?;
            errln!(
                "stored the key of {name} in {}",
                ctx.host.secret_store_description()
            );
        }
        ProviderCmd::DeleteKey { name } => {
            let name = Host::provider_name(&name)?;
            ctx.host.models().delete_provider_key(&name).await?;
            errln!("deleted the key of {name}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `provider list`: each provider, its key and whether what goes to it is redacted.
async fn list_providers(ctx: &Ctx) -> anyhow::Result<()> {
    let list = ctx.host.models().list_providers().await?;
    let settings = ctx.host.redaction().settings();
    let redacted = |p: &switchboard_core::host::ProviderView| {
        settings.applies(p.profile.id, p.base_url.as_deref(), None)
    };
    if ctx.json {
        let rows: Vec<_> = list
            .iter()
            .map(|p| {
                serde_json::json!({"name": p.name, "kind": p.profile.id, "base_url": p.base_url,
                                   "model": p.model, "key_set": p.key_set,
                                   "key_required": p.profile.key_required,
                                   "redacted": redacted(p)})
            })
            .collect();
        output::json(&rows)?;
    } else if list.is_empty() {
        outln!("no providers; add one with `switchboard provider add NAME --kind openai`");
    } else {
        for p in list {
            let key = match (p.key_set, p.profile.key_required) {
                (true, _) => "key set",
                (false, true) => "key NOT set",
                (false, false) => "no key needed",
            };
            let redaction = match (redacted(&p), settings.enabled) {
                (true, _) => "redacted",
                (false, true) => "local: not redacted",
                (false, false) => "redaction off",
            };
            outln!(
                "{}\t{}\t{}\t{}\t{key}\t{redaction}",
                p.name,
                p.profile.id,
                p.base_url.as_deref().unwrap_or("-"),
                p.model.as_deref().unwrap_or("-")
            );
        }
    }
    Ok(())
}

pub async fn chat(ctx: &Ctx, a: ChatArgs) -> anyhow::Result<ExitCode> {
    let agent = a.agent.as_deref().map(AgentName::new).transpose()?;
    let profile = match &agent {
        Some(name) => Some(ctx.host.agent(name).await?),
        None => None,
    };
    let (provider, model) = provider_and_model(ctx, profile.as_ref(), a.model.as_deref()).await?;
    let conversation = a
        .conversation
        .as_deref()
        .map(ConversationId::parse)
        .transpose()
        .context("--conversation is not a conversation id")?;
    let input = turn_input(&a)?;
    let conversation = conversation_of(ctx, &a, conversation).await?;
    ctx.host.recover_interrupted().await?;
    crate::catalog_cmds::bring_up(ctx, None).await?;

    // Ctrl-C stops the turn through the host, like the desktop's Stop button.
    let run = ctx.host.open_run();
    let (host, stop) = (ctx.host.clone(), run.clone());
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            host.cancel_run(&stop);
        }
    });
    let done = CancellationToken::new();
    // A server's sampling request during the turn is answered by the conversation's model.
    let sampling = crate::approve::SamplingChoice {
        provider: Some(provider.clone()),
        model: model.clone(),
    };
    // A chat is answered line by line, from a terminal or from answers piped in.
    let approver = crate::approve::spawn_approver(
        ctx.host.clone(),
        done.clone(),
        sampling,
        crate::approve::ApprovalMode::Prompt,
    );
    let (tx, rx) = mpsc::unbounded_channel();
    let printer = tokio::spawn(print_events(rx, ctx.json));
    let result = ctx
        .host
        .send_message(
            SendRequest {
                conversation,
                provider: Host::provider_name(&provider)?,
                model,
                input,
                max_steps: a.max_steps,
                attached: Vec::new(),
                run: Some(run),
                agent,
                discovery: None,
            },
            tx,
        )
        .await;
    done.cancel();
    let failed = printer.await.ok().flatten();
    let _ = approver.await;
    ctrl_c.abort();
    let outcome = result?;
    errln!("conversation {}", outcome.conversation);
    if let Some(a) = &outcome.agent {
        errln!("answered by agent {a}; `switchboard history show` has its run tree");
    }
    exit_of(outcome.end, failed)
}

/// The provider and model that answer: the agent's, else `--model PROVIDER[:MODEL]`, else
/// the only provider configured.
async fn provider_and_model(
    ctx: &Ctx,
    profile: Option<&AgentProfile>,
    model: Option<&str>,
) -> anyhow::Result<(String, Option<String>)> {
    Ok(match (profile, model) {
        (Some(p), _) => (p.provider.to_string(), p.model.clone()),
        (None, Some(m)) => match m.split_once(':') {
            Some((p, model)) => (p.to_owned(), Some(model.to_owned())),
            None => (m.to_owned(), None),
        },
        (None, None) => {
            let list = ctx.host.models().list_providers().await?;
            match list.as_slice() {
                [only] => (only.name.to_string(), None),
                [] => bail!("no provider configured; add one with `switchboard provider add NAME --kind openai`"),
                _ => bail!("several providers are configured; choose one with --model PROVIDER[:MODEL]"),
            }
        }
    })
}

/// The conversation to send to: `given`, or a new one when redaction or discovery is
/// switched for it, with those switches applied; `None` lets the host start one.
async fn conversation_of(
    ctx: &Ctx,
    a: &ChatArgs,
    given: Option<ConversationId>,
) -> anyhow::Result<Option<ConversationId>> {
    let conversation = given;
    // Redaction and discovery are switched per conversation, so a new one is made first.
    let conversation = match conversation {
        None if a.no_redact || a.discover => {
            let title: String = a
                .message
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            let title = if title.trim().is_empty() {
                "Chat"
            } else {
                title.trim()
            };
            Some(ctx.host.create_conversation(title).await?.id)
        }
        c => c,
    };
    if let (Some(c), true) = (&conversation, a.no_redact || a.redact) {
        ctx.host
            .redaction()
            .set_for_conversation(c, a.redact)
            .await?;
    }
    if let (Some(c), true) = (&conversation, a.discover || a.no_discover) {
        ctx.host.set_conversation_discovery(c, a.discover).await?;
    }
    Ok(conversation)
}

/// Prints a turn's events as they come: JSON lines with `--json`, else the answer on stdout
/// and what happens around it on stderr. Returns why the turn failed, if it did: `main`
/// reports that like any other error.
async fn print_events(mut rx: mpsc::UnboundedReceiver<ChatEvent>, json: bool) -> Option<String> {
    let mut failed = None;
    while let Some(ev) = rx.recv().await {
        if let ChatEvent::Failed { error } = &ev {
            failed = Some(error.clone());
        }
        if json {
            let line = serde_json::to_string(&ev).unwrap_or_default();
            outln!("{}", output::json_inert(&line));
        } else {
            print_event(ev);
        }
    }
    failed
}

/// One event for a person reading the terminal.
fn print_event(ev: ChatEvent) {
    match ev {
        ChatEvent::TextDelta { text } => out!("{}", output::inert(&text)),
        ChatEvent::ToolResult {
            call_id,
            is_error,
            content,
            duration_ms,
            ..
        } => {
            let chars: usize = content
                .iter()
                .map(|c| match c {
                    switchboard_core::llm::ResultPart::Text { text } => text.len(),
                    _ => 0,
                })
                .sum();
            errln!(
                "[{call_id}: {} in {duration_ms} ms, {} back to the model]",
                if is_error { "error" } else { "done" },
                output::count(chars, "character", "characters")
            );
        }
        ChatEvent::Done { usage, .. } => {
            outln!();
            errln!(
                "[{} in, {} out]",
                output::count(usage.input_tokens, "token", "tokens"),
                usage.output_tokens
            );
        }
        ChatEvent::Failed { .. } => outln!(),
        ChatEvent::HandedOver { from, to, .. } => {
            errln!("[agent {from} handed the conversation over to agent {to}]")
        }
        ChatEvent::Cancelled => errln!("\n[stopped]"),
        ChatEvent::Redacted { counts } => errln!(
            "[redacted before sending: {}]",
            counts
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ChatEvent::ToolsCost {
            tools,
            tokens,
            estimate,
            share_percent,
            ..
        } => errln!(
            "[tools: {}{} tokens for {}, {share_percent:.1}% of the context]",
            if estimate { "~" } else { "" },
            tokens,
            output::count(tools, "definition", "definitions")
        ),
        ChatEvent::ToolsOverBudget {
            tokens,
            context_window,
            share_percent,
            limit_percent,
        } => errln!(
            "WARNING: the tool definitions take {tokens} of the model's {context_window} \
             tokens ({share_percent:.0}%, over the {limit_percent}% set); switch off \
             servers or tools you do not need (`switchboard catalog` shows what each costs)"
        ),
        ChatEvent::Compacted { messages, .. } => errln!(
            "[{} summarized to fit the model's context; `history show` has the summary]",
            if messages == 1 {
                "1 earlier message was".to_owned()
            } else {
                format!("{messages} earlier messages were")
            }
        ),
        _ => {}
    }
}

/// The exit code of a turn that ended with `end`; `failed` is the error a failed turn sent.
fn exit_of(end: TurnEnd, failed: Option<String>) -> anyhow::Result<ExitCode> {
    match end {
        TurnEnd::Done(_) => Ok(ExitCode::SUCCESS),
        TurnEnd::Cancelled => Ok(ExitCode::from(crate::errors::exit::CANCELLED)),
        TurnEnd::StepLimit => Err(CliError::Turn {
            model_failed: false,
            message: failed.unwrap_or_else(|| "the turn stopped at the step limit".into()),
        }
        .into()),
        TurnEnd::Failed(e) => Err(CliError::Turn {
            model_failed: true,
            message: e,
        }
        .into()),
        TurnEnd::BudgetExceeded(why) => Err(CliError::Turn {
            model_failed: false,
            message: format!("stopped: {why}"),
        }
        .into()),
    }
}

fn conversation_id(s: &str) -> anyhow::Result<ConversationId> {
    ConversationId::parse(s).with_context(|| format!("{s:?} is not a conversation id"))
}

/// `history show`: the conversation's messages, summaries and tool calls, what it cost,
/// and its agents' run trees.
async fn show_history(ctx: &Ctx, id: &ConversationId) -> anyhow::Result<()> {
    let host = &ctx.host;
    let summaries = host.summaries(id).await?;
    for m in host.messages(id).await? {
        let who = match m.message.role {
            switchboard_core::llm::Role::User => "user",
            switchboard_core::llm::Role::Assistant => "assistant",
        };
        outln!(
            "#{} {who} ({:?}): {}",
            m.id,
            m.status,
            output::inert(&m.message.text())
        );
        for s in summaries.iter().filter(|s| s.through == m.id) {
            outln!(
                "  [summary of {}, sent to models instead of them]\n  {}",
                output::count(s.messages, "earlier message", "earlier messages"),
                output::inert(&s.text).replace('\n', "\n  ")
            );
        }
        for (id, name, args) in m.message.tool_calls() {
            outln!(
                "  tool call {}: {} {}",
                output::inert(id),
                output::name(name),
                output::inert(&args.to_string())
            );
        }
    }
    // The whole conversation: its answers plus what agents spent on tasks for it (each
    // run's own total follows under its tree).
    let usage = ctx.host.conversation_usage(id).await?;
    let tasks = if usage.tasks == Default::default() {
        String::new()
    } else {
        format!(
            " (answers plus {}+{} tokens agents spent on tasks)",
            usage.tasks.input_tokens, usage.tasks.output_tokens
        )
    };
    outln!(
        "tokens: {} in, {} out; {}{tasks}",
        usage.total.input_tokens,
        usage.total.output_tokens,
        match (usage.cost_complete, usage.cost_usd) {
            (true, c) => format!("about ${c:.2} at list prices"),
            (false, c) if c > 0.0 =>
                format!("about ${c:.2} at list prices plus models of unknown price"),
            (false, _) => "cost unknown (no list price for the model)".into(),
        }
    );
    crate::run_tree::print_conversation_runs(host, id).await?;
    Ok(())
}

pub async fn history(ctx: &Ctx, cmd: HistoryCmd) -> anyhow::Result<ExitCode> {
    let host = &ctx.host;
    match cmd {
        HistoryCmd::List => {
            let page = host
                .list_conversations(&ConversationQuery {
                    filter: ArchiveFilter::Active,
                    limit: 100,
                    after: None,
                })
                .await?;
            for c in page.items {
                outln!(
                    "{}\t{}",
                    c.conversation.id,
                    output::inert(&c.conversation.title)
                );
            }
        }
        HistoryCmd::Show { id } => show_history(ctx, &conversation_id(&id)?).await?,
        HistoryCmd::Search { query } => {
            for hit in host.search_conversations(&query, 50).await? {
                let snippet = hit
                    .snippet
                    .replace(HIGHLIGHT_START, "[")
                    .replace(HIGHLIGHT_END, "]");
                outln!(
                    "{}\t{}\t{}",
                    hit.conversation,
                    output::inert(&hit.title),
                    output::inert(&snippet)
                );
            }
        }
        HistoryCmd::Fork { id, at, title } => {
            let fork = host
                .fork_conversation(&conversation_id(&id)?, MessageId::new(at), title.as_deref())
                .await?;
            outln!("{}", fork.id);
        }
        HistoryCmd::Export { id, format } => {
            let id = conversation_id(&id)?;
            let text = match format.as_str() {
                "md" | "markdown" => host.export_markdown(&id).await?,
                "json" => host.export_json(&id).await?,
                other => bail!("unknown format {other:?}; use md or json"),
            };
            // Meant for a file; on a terminal the server text in it is made inert first.
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                out!("{}", output::inert(&text));
            } else {
                out!("{text}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

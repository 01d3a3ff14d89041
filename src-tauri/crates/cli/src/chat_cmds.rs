//! `switchboard provider ...`, `switchboard chat` and `switchboard history ...`.
//!
//! `chat` streams the answer to stdout. Every tool call the model asks for is shown on stderr
//! with its full arguments and waits for an answer read from stdin (`y` runs it, anything else
//! or end of input refuses): on a terminal that is a prompt; in a script, answers are lines.
//! Nothing runs without a `y` (AP-01).

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use switchboard_core::chat::{ChatEvent, TurnEnd};
use switchboard_core::events::HostEvent;
use switchboard_core::host::{Host, SendRequest};
use switchboard_core::ids::ConversationId;
use switchboard_core::redact::Secret;
use switchboard_core::store::{ArchiveFilter, ConversationQuery, HIGHLIGHT_END, HIGHLIGHT_START};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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
    },
    /// List providers, with whether their key is set.
    List,
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
}

/// `switchboard chat`.
#[derive(Args, Debug)]
pub struct ChatArgs {
    /// `PROVIDER` or `PROVIDER:MODEL`; the only configured provider when omitted.
    #[arg(long)]
    model: Option<String>,
    /// Continue this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// Model calls per turn at most.
    #[arg(long)]
    max_steps: Option<usize>,
    /// The message.
    message: String,
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
        } => {
            let name = Host::provider_name(&name)?;
            ctx.host.add_provider(&name, &kind, base_url, model).await?;
            eprintln!("added provider {name}; set its key with `switchboard provider set-key {name}` if it needs one");
        }
        ProviderCmd::List => {
            let list = ctx.host.list_providers().await?;
            if ctx.json {
                let rows: Vec<_> = list
                    .iter()
                    .map(|p| {
                        serde_json::json!({"name": p.name, "kind": p.profile.id, "base_url": p.base_url,
                                           "model": p.model, "key_set": p.key_set,
                                           "key_required": p.profile.key_required})
                    })
                    .collect();
                output::json(&rows)?;
            } else if list.is_empty() {
                println!(
                    "no providers; add one with `switchboard provider add NAME --kind openai`"
                );
            } else {
                for p in list {
                    let key = match (p.key_set, p.profile.key_required) {
                        (true, _) => "key set",
                        (false, true) => "key NOT set",
                        (false, false) => "no key needed",
                    };
                    println!(
                        "{}\t{}\t{}\t{}\t{key}",
                        p.name,
                        p.profile.id,
                        p.base_url.as_deref().unwrap_or("-"),
                        p.model.as_deref().unwrap_or("-")
                    );
                }
            }
        }
        ProviderCmd::Remove { name } => {
            let name = Host::provider_name(&name)?;
            ctx.host.remove_provider(&name).await?;
            eprintln!("removed provider {name} and its key");
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
            ctx.host.set_provider_key(&name, Secret::new(value)).await?;
            eprintln!(
                "stored the key of {name} in {}",
                ctx.host.secrets().describe()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Answers approval requests from stdin until the turn ends.
fn spawn_approver(host: Host, done: CancellationToken) -> tokio::task::JoinHandle<()> {
    let mut events = host.subscribe();
    tokio::spawn(async move {
        let (lines_tx, mut lines) = mpsc::unbounded_channel::<Option<String>>();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                if lines_tx.send(line.ok()).is_err() {
                    return;
                }
            }
            let _ = lines_tx.send(None);
        });
        let mut asked: HashSet<String> = HashSet::new();
        let mut eof = false;
        loop {
            for req in host.pending_approvals() {
                if !asked.insert(req.nonce.to_string()) {
                    continue;
                }
                let args = serde_json::to_string_pretty(&req.arguments).unwrap_or_default();
                let mut err = std::io::stderr();
                let _ = writeln!(
                    err,
                    "\nThe model wants to run {} on {} with:",
                    req.tool, req.server
                );
                let _ = writeln!(err, "{}", output::inert(&args));
                if !req.hints.is_empty() {
                    let _ = writeln!(err, "(the server says: {})", req.hints.join(", "));
                }
                let _ = write!(err, "Run it? [y/N] ");
                let _ = err.flush();
                let answer = if eof {
                    None
                } else {
                    match lines.recv().await {
                        Some(Some(l)) => Some(l),
                        _ => {
                            eof = true;
                            None
                        }
                    }
                };
                let allow = answer.is_some_and(|a| a.trim().eq_ignore_ascii_case("y"));
                let _ = writeln!(err, "{}", if allow { "allowed" } else { "denied" });
                let _ = host.answer_approval(req.nonce.as_str(), allow);
            }
            tokio::select! {
                () = done.cancelled() => return,
                ev = events.recv() => match ev {
                    Ok(HostEvent::ApprovalsChanged) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Ok(_) => {}
                    Err(_) => return,
                },
            }
        }
    })
}

pub async fn chat(ctx: &Ctx, a: ChatArgs) -> anyhow::Result<ExitCode> {
    let (provider, model) = match a.model.as_deref() {
        Some(m) => match m.split_once(':') {
            Some((p, model)) => (p.to_owned(), Some(model.to_owned())),
            None => (m.to_owned(), None),
        },
        None => {
            let list = ctx.host.list_providers().await?;
            match list.as_slice() {
                [only] => (only.name.to_string(), None),
                [] => bail!("no provider configured; add one with `switchboard provider add NAME --kind openai`"),
                _ => bail!("several providers are configured; choose one with --model PROVIDER[:MODEL]"),
            }
        }
    };
    let conversation = a
        .conversation
        .as_deref()
        .map(ConversationId::parse)
        .transpose()
        .context("--conversation is not a conversation id")?;
    ctx.host.recover_interrupted().await?;
    crate::catalog_cmds::bring_up(ctx, None).await?;

    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let done = CancellationToken::new();
    let approver = spawn_approver(ctx.host.clone(), done.clone());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let json = ctx.json;
    let printer = tokio::spawn(async move {
        let mut out = std::io::stdout();
        while let Some(ev) = rx.recv().await {
            if json {
                let _ = writeln!(out, "{}", serde_json::to_string(&ev).unwrap_or_default());
                continue;
            }
            match ev {
                ChatEvent::TextDelta { text } => {
                    let _ = write!(out, "{}", output::inert(&text));
                    let _ = out.flush();
                }
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
                    eprintln!(
                        "[{call_id}: {} in {duration_ms} ms, {chars} characters back to the model]",
                        if is_error { "error" } else { "done" }
                    );
                }
                ChatEvent::Done { usage, .. } => {
                    let _ = writeln!(out);
                    eprintln!(
                        "[{} tokens in, {} out]",
                        usage.input_tokens, usage.output_tokens
                    );
                }
                ChatEvent::Failed { error } => eprintln!("\nerror: {}", output::inert(&error)),
                ChatEvent::Cancelled => eprintln!("\n[stopped]"),
                _ => {}
            }
        }
    });
    let result = ctx
        .host
        .send_message(
            SendRequest {
                conversation,
                provider: Host::provider_name(&provider)?,
                model,
                text: a.message,
                max_steps: a.max_steps,
            },
            tx,
            cancel,
        )
        .await;
    done.cancel();
    let _ = printer.await;
    let _ = approver.await;
    ctrl_c.abort();
    let outcome = result?;
    eprintln!("conversation {}", outcome.conversation);
    Ok(match outcome.end {
        TurnEnd::Done(_) => ExitCode::SUCCESS,
        TurnEnd::Cancelled => ExitCode::from(130),
        TurnEnd::StepLimit | TurnEnd::Failed(_) => ExitCode::FAILURE,
    })
}

fn conversation_id(s: &str) -> anyhow::Result<ConversationId> {
    ConversationId::parse(s).with_context(|| format!("{s:?} is not a conversation id"))
}

pub async fn history(ctx: &Ctx, cmd: HistoryCmd) -> anyhow::Result<ExitCode> {
    let store = ctx.host.store();
    match cmd {
        HistoryCmd::List => {
            let page = store
                .list_conversations(&ConversationQuery {
                    filter: ArchiveFilter::Active,
                    limit: 100,
                    after: None,
                })
                .await?;
            for c in page.items {
                println!(
                    "{}\t{}",
                    c.conversation.id,
                    output::inert(&c.conversation.title)
                );
            }
        }
        HistoryCmd::Show { id } => {
            for m in store.load_messages(&conversation_id(&id)?).await? {
                let who = match m.message.role {
                    switchboard_core::llm::Role::User => "user",
                    switchboard_core::llm::Role::Assistant => "assistant",
                };
                println!(
                    "{who} ({:?}): {}",
                    m.status,
                    output::inert(&m.message.text())
                );
                for (id, name, args) in m.message.tool_calls() {
                    println!("  tool call {id}: {name} {args}");
                }
            }
        }
        HistoryCmd::Search { query } => {
            for hit in store.search(&query, 50).await? {
                let snippet = hit
                    .snippet
                    .replace(HIGHLIGHT_START, "[")
                    .replace(HIGHLIGHT_END, "]");
                println!(
                    "{}\t{}\t{}",
                    hit.conversation,
                    output::inert(&hit.title),
                    output::inert(&snippet)
                );
            }
        }
        HistoryCmd::Export { id, format } => {
            let id = conversation_id(&id)?;
            let text = match format.as_str() {
                "md" | "markdown" => store.export_markdown(&id).await?,
                "json" => store.export_json(&id).await?,
                other => bail!("unknown format {other:?}; use md or json"),
            };
            print!("{text}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

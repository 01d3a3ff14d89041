//! `tools`, `call`, `resources`, `read`, `prompts`, `prompt`.
//!
//! Each starts the servers it needs (only enabled, approved ones ever start), waits for them to
//! settle within their start-up timeout, does its work, and leaves stopping to `main`.
//!
//! `call`, `read` and `prompt` go through the host's governed seam like every other shell:
//! holds, the policy (a deny rule stops a person's own call too), the audit log. When the
//! policy asks, the question is put on the terminal; without a terminal the request is refused
//! unless the person approved it on the command line with `--yes`. While a request runs, what
//! the server asks of the person (elicitation, sampling) is asked on the terminal
//! ([`crate::questions`]). Ctrl-C stops the run through the host (`Host::cancel_run`).

use std::collections::HashMap;
use std::process::ExitCode;

use clap::Args;
use switchboard_core::approval::Origin;
use switchboard_core::escape::escape_for_display;
use switchboard_core::host::{CallOptions, Host, HostError};
use switchboard_core::hygiene::name_outside_spec;
use switchboard_core::ids::{RunId, ServerId, ToolRef};
use switchboard_core::mcp::catalog::Arguments;
use switchboard_core::mcp::McpError;
use switchboard_core::supervisor::{ServerHandle, ServerStatus};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::errors::{usage, CliError};
use crate::output::{self, inert};
use crate::Ctx;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only this server.
    #[arg(long)]
    server: Option<String>,
}

#[derive(Args, Debug)]
pub struct CallArgs {
    /// The server.
    server: String,
    /// The tool's name as the server reports it.
    tool: String,
    /// The arguments as a JSON object.
    #[arg(long, default_value = "{}")]
    args: String,
    /// `PROVIDER` or `PROVIDER:MODEL` to answer the server's sampling requests with (after you
    /// approve each); the only configured provider when omitted, else you are asked.
    #[arg(long, value_name = "PROVIDER[:MODEL]")]
    sampling_provider: Option<String>,
    #[command(flatten)]
    consent: Consent,
}

/// How a request that the policy asks about is answered.
#[derive(Args, Debug, Clone, Copy)]
pub struct Consent {
    /// Approve this request if the policy asks about it, without a prompt (for scripts; a
    /// deny rule still refuses it). Without it, the policy's question needs a terminal.
    #[arg(long)]
    yes: bool,
}

impl Consent {
    /// How the approver answers the policy's questions about this request.
    fn mode(self) -> crate::approve::ApprovalMode {
        use std::io::IsTerminal as _;
        if std::io::stdin().is_terminal() {
            crate::approve::ApprovalMode::Prompt
        } else if self.yes {
            crate::approve::ApprovalMode::AllowOnce
        } else {
            crate::approve::ApprovalMode::Refuse
        }
    }
}

#[derive(Args, Debug)]
pub struct ReadArgs {
    /// The server.
    server: String,
    /// The resource URI.
    uri: String,
    #[command(flatten)]
    consent: Consent,
}

#[derive(Args, Debug)]
pub struct PromptArgs {
    /// The server.
    server: String,
    /// The prompt's name.
    name: String,
    #[command(flatten)]
    consent: Consent,
    /// An argument, k=v (repeatable).
    #[arg(long = "arg", value_name = "K=V")]
    args: Vec<String>,
}

/// A server's status for a line of text: escaped, and cut to size (a failure's reason can
/// quote whatever the server said).
pub(crate) fn status_text(status: &ServerStatus) -> String {
    output::bounded(&inert(&status.to_string()), output::QUOTE_MAX)
}

/// Starts the named server, or every enabled one, and returns those that came up. Servers that
/// did not are reported on stderr.
pub(crate) async fn bring_up(ctx: &Ctx, only: Option<&str>) -> anyhow::Result<Vec<ServerHandle>> {
    let specs = match only {
        Some(name) => vec![ctx.host.server(&Host::server_id(name)?).await?],
        None => ctx
            .host
            .list_servers()
            .await?
            .into_iter()
            .map(|v| v.spec)
            .filter(|s| s.enabled)
            .collect(),
    };
    let mut started = Vec::new();
    for spec in &specs {
        let h = ctx.host.start_server(&spec.id).await?;
        started.push((h, spec.timeouts.init()));
    }
    let settled = futures::future::join_all(started.iter().map(|(h, t)| async move {
        (
            h.clone(),
            h.wait_settled(*t + std::time::Duration::from_secs(5)).await,
        )
    }))
    .await;
    let mut up = Vec::new();
    for (h, status) in settled {
        match &status {
            ServerStatus::Running { .. } => up.push(h),
            other => {
                if only.is_some() {
                    return Err(CliError::Unavailable {
                        server: h.id().clone(),
                        status: other.clone(),
                    }
                    .into());
                }
                errln!("skipped {}: {}", h.id(), status_text(other));
                // What to do about it, when there is something (sign in, raise a cap).
                if let Some(hint) = other.reason().and_then(|r| crate::errors::hint(h.id(), r)) {
                    errln!("  {hint}");
                }
            }
        }
    }
    Ok(up)
}

pub async fn tools(ctx: &Ctx, a: ListArgs) -> anyhow::Result<ExitCode> {
    let up = bring_up(ctx, a.server.as_deref()).await?;
    let names = ctx.host.tool_names().await?;
    if ctx.json {
        let mut out = Vec::new();
        for h in &up {
            for t in &h.catalog().tools {
                let r = ToolRef {
                    server: h.id().clone(),
                    tool: t.name.as_str().into(),
                };
                out.push(serde_json::json!({
                    "server": h.id(),
                    "llm_name": names.llm_name(&r),
                    "tool": t,
                    "name_outside_spec": name_outside_spec(&t.name),
                }));
            }
        }
        output::json(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in &up {
        let c = h.catalog();
        outln!(
            "{} ({})",
            h.id(),
            output::count(c.tools.len(), "tool", "tools")
        );
        for t in &c.tools {
            let desc = t
                .description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            // Names are shown escaped (a name is one line, and `\e` reads as what it is);
            // one outside the characters MCP recommends is flagged under it.
            outln!("  {:<28} {}", escape_for_display(&t.name), inert(desc));
            if let Some(why) = name_outside_spec(&t.name) {
                outln!("    WARNING: the name is outside the characters MCP recommends: {why}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A request in progress: its run (stopped by Ctrl-C through the host) and the approver that
/// answers on the terminal. `finish` must be called when the request returns.
struct Governed {
    run: RunId,
    done: CancellationToken,
    approver: tokio::task::JoinHandle<()>,
    ctrl_c: tokio::task::JoinHandle<()>,
}

impl Governed {
    fn start(ctx: &Ctx, consent: Consent, sampling: Option<&str>) -> Self {
        let run = ctx.host.open_run();
        let host = ctx.host.clone();
        let stop = run.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                errln!("\ncancelling...");
                host.cancel_run(&stop);
            }
        });
        let done = CancellationToken::new();
        let approver = crate::approve::spawn_approver(
            ctx.host.clone(),
            done.clone(),
            crate::approve::SamplingChoice::parse(sampling),
            consent.mode(),
        );
        Self {
            run,
            done,
            approver,
            ctrl_c,
        }
    }

    async fn finish(self) {
        self.done.cancel();
        let _ = self.approver.await;
        self.ctrl_c.abort();
    }
}

/// The result of a request, or its error in context. A stopped run (Ctrl-C) is noted here and
/// ends with the cancelled exit code ([`crate::errors`]).
fn ended<T>(result: Result<T, HostError>, what: &str) -> anyhow::Result<T> {
    result.map_err(|e| {
        if matches!(e, HostError::Mcp(McpError::Cancelled)) {
            errln!("cancelled; the server was told to stop");
        }
        anyhow::Error::new(e).context(what.to_owned())
    })
}

pub async fn call(ctx: &Ctx, a: CallArgs) -> anyhow::Result<ExitCode> {
    let arguments: Arguments = serde_json::from_str(&a.args).map_err(|e| {
        usage(format!(
            "--args must be a JSON object, e.g. '{{\"text\": \"hi\"}}': {e}"
        ))
    })?;
    let server = Host::server_id(&a.server)?;
    bring_up(ctx, Some(&a.server)).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let bar = tokio::spawn(async move {
        let mut shown = false;
        while let Some(p) = rx.recv().await {
            output::progress(&p);
            shown = true;
        }
        if shown {
            output::progress_done();
        }
    });
    let tool = ToolRef {
        server,
        tool: a.tool.as_str().into(),
    };
    let governed = Governed::start(ctx, a.consent, a.sampling_provider.as_deref());
    let result = ctx
        .host
        .run_tool(
            &tool,
            arguments,
            Origin::Manual,
            CallOptions::default()
                .run(governed.run.clone())
                .progress(tx),
        )
        .await;
    governed.finish().await;
    let _ = bar.await;
    let what = format!("calling {} on {} failed", inert(&a.tool), inert(&a.server));
    let result = ended(result, &what)?;
    if ctx.json {
        output::json(&result)?;
    } else {
        output::content(&result.content);
        if let Some(s) = &result.structured_content {
            outln!("structured: {}", inert(&serde_json::to_string_pretty(s)?));
        }
    }
    if result.is_error {
        errln!("the tool reported an error");
        return Ok(ExitCode::from(crate::errors::exit::TOOL_ERROR));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn resources(ctx: &Ctx, a: ListArgs) -> anyhow::Result<ExitCode> {
    let up = bring_up(ctx, a.server.as_deref()).await?;
    if ctx.json {
        let v: Vec<_> = up
            .iter()
            .map(|h| {
                let c = h.catalog();
                serde_json::json!({"server": h.id(), "resources": c.resources, "templates": c.resource_templates})
            })
            .collect();
        output::json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in &up {
        let c = h.catalog();
        outln!(
            "{} ({}, {})",
            h.id(),
            output::count(c.resources.len(), "resource", "resources"),
            output::count(c.resource_templates.len(), "template", "templates")
        );
        for r in &c.resources {
            outln!("  {:<40} {}", inert(&r.uri), inert(&r.name));
        }
        for t in &c.resource_templates {
            outln!(
                "  {:<40} {} (template)",
                inert(&t.uri_template),
                inert(&t.name)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn read(ctx: &Ctx, a: ReadArgs) -> anyhow::Result<ExitCode> {
    let server: ServerId = Host::server_id(&a.server)?;
    bring_up(ctx, Some(&a.server)).await?;
    let governed = Governed::start(ctx, a.consent, None);
    let result = ctx
        .host
        .read_resource(
            &server,
            &a.uri,
            Origin::Manual,
            CallOptions::default().run(governed.run.clone()),
        )
        .await;
    governed.finish().await;
    let what = format!("reading {} from {} failed", inert(&a.uri), inert(&a.server));
    let contents = ended(result, &what)?;
    if ctx.json {
        output::json(&contents)?;
    } else {
        output::resource_contents(&contents);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn prompts(ctx: &Ctx, a: ListArgs) -> anyhow::Result<ExitCode> {
    let up = bring_up(ctx, a.server.as_deref()).await?;
    if ctx.json {
        let v: Vec<_> = up
            .iter()
            .map(|h| serde_json::json!({"server": h.id(), "prompts": h.catalog().prompts}))
            .collect();
        output::json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in &up {
        let c = h.catalog();
        outln!(
            "{} ({})",
            h.id(),
            output::count(c.prompts.len(), "prompt", "prompts")
        );
        for p in &c.prompts {
            let args: Vec<String> = p
                .arguments
                .iter()
                .map(|a| {
                    if a.required {
                        format!("{}*", a.name)
                    } else {
                        a.name.clone()
                    }
                })
                .collect();
            outln!(
                "  {:<28} ({}) {}",
                inert(&p.name),
                inert(&args.join(", ")),
                inert(p.description.as_deref().unwrap_or(""))
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn prompt(ctx: &Ctx, a: PromptArgs) -> anyhow::Result<ExitCode> {
    let server = Host::server_id(&a.server)?;
    let mut args = HashMap::new();
    for kv in &a.args {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| usage(format!("--arg {kv:?} must look like NAME=VALUE")))?;
        args.insert(k.to_owned(), v.to_owned());
    }
    bring_up(ctx, Some(&a.server)).await?;
    let governed = Governed::start(ctx, a.consent, None);
    let result = ctx
        .host
        .get_prompt(
            &server,
            &a.name,
            &args,
            Origin::Manual,
            CallOptions::default().run(governed.run.clone()),
        )
        .await;
    governed.finish().await;
    let what = format!(
        "getting the prompt {} from {} failed",
        inert(&a.name),
        inert(&a.server)
    );
    let r = ended(result, &what)?;
    if ctx.json {
        output::json(&r)?;
    } else {
        if let Some(d) = &r.description {
            outln!("# {}", inert(d));
        }
        for m in &r.messages {
            outln!("[{}]", inert(&m.role));
            output::content(std::slice::from_ref(&m.content));
        }
    }
    Ok(ExitCode::SUCCESS)
}

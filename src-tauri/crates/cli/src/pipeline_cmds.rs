//! `switchboard pipeline add|list|show|run|runs|replay`: tool pipelines (issue 15, point 6).
//!
//! `add` stores a definition file (JSON, or TOML by its `.toml` name) as the next version of
//! its name; `--offer` (or `offer = true` in the file) offers it to chat models as one tool.
//! `show` prints the steps and what flows where, checked against the catalogs of the
//! servers it uses (started for the look). `run` shows the plan (every step and what flows
//! where) on stderr; the host checks the whole pipeline again and asks for it to be approved
//! as a whole before its first step (a `pipeline` request in the same inbox as `call`'s
//! questions: answered on a terminal, approved by `--yes`, refused without either). Each step
//! then goes through the governed seam: one that does not write is not asked about again; a
//! step that writes, or that a rule asks about, still asks like `call`'s.
//! `replay` runs a past run's pipeline version again with the same inputs. Ctrl-C stops a run
//! through the host.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Map, Value};
use switchboard_core::approval::Origin;
use switchboard_core::host::{PipelineError, PipelineOutcome};
use switchboard_core::pipeline_data::{
    parse, Format, Pipeline, PipelineName, MAX_DEFINITION_BYTES,
};
use switchboard_core::pipelines::RunStatus;
use tokio_util::sync::CancellationToken;

use crate::errors::usage;
use crate::output::{self, inert};
use crate::Ctx;

#[derive(Subcommand, Debug)]
pub enum PipelineCmd {
    /// Store a pipeline definition (JSON, or TOML when the file ends in .toml) as the next
    /// version of its name.
    Add(AddArgs),
    /// List pipelines (their newest versions).
    List,
    /// Show a pipeline's steps and what flows where, checked against the current catalogs.
    Show(NameArgs),
    /// Run a pipeline: checked as a whole first, then step by step through the policy.
    Run(RunArgs),
    /// Past runs, newest first.
    Runs(RunsArgs),
    /// Run a past run's pipeline version again with the same inputs.
    Replay(ReplayArgs),
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// The definition file.
    file: PathBuf,
    /// Offer it to chat models and agents as one tool (`switchboard_pipeline_NAME`), as
    /// `offer = true` in the file does. Each run a model starts is still approved as a whole.
    #[arg(long)]
    offer: bool,
}

#[derive(Args, Debug)]
pub struct NameArgs {
    /// The pipeline.
    name: String,
    /// A version (the newest without it).
    #[arg(long)]
    version: Option<u32>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    which: NameArgs,
    /// An input, NAME=VALUE (repeatable). The value is JSON (`3`, `true`, `["a"]`) unless the
    /// input's schema says it is a string, or it does not parse as JSON.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    inputs: Vec<String>,
    /// Approve the pipeline as a whole and the steps the policy asks about, without a prompt
    /// (for scripts; a deny rule still refuses a step). Without it, the questions need a
    /// terminal.
    #[arg(long)]
    yes: bool,
}

#[derive(Args, Debug)]
pub struct RunsArgs {
    /// Only this pipeline's runs.
    name: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The run, as `pipeline runs` lists it.
    run: String,
    /// As for `run`.
    #[arg(long)]
    yes: bool,
}

pub async fn run(ctx: &Ctx, c: PipelineCmd) -> anyhow::Result<ExitCode> {
    match c {
        PipelineCmd::Add(a) => add(ctx, a).await,
        PipelineCmd::List => list(ctx).await,
        PipelineCmd::Show(a) => show(ctx, a).await,
        PipelineCmd::Run(a) => run_one(ctx, a).await,
        PipelineCmd::Runs(a) => runs(ctx, a).await,
        PipelineCmd::Replay(a) => replay(ctx, a).await,
    }
}

/// A host error as itself, so the CLI's error codes see its type.
fn plain(e: PipelineError) -> anyhow::Error {
    match e {
        PipelineError::Host(h) => anyhow::Error::new(h),
        // Said no to as a whole: the exit code says declined, as for any refused question.
        d @ (PipelineError::Declined(_) | PipelineError::Refused(_)) => {
            crate::errors::CliError::Declined(d.to_string()).into()
        }
        other => anyhow::Error::new(other),
    }
}

fn name_of(s: &str) -> anyhow::Result<PipelineName> {
    PipelineName::new(s).map_err(|e| usage(format!("{s:?} is not a pipeline name: {e}")))
}

async fn add(ctx: &Ctx, a: AddArgs) -> anyhow::Result<ExitCode> {
    let len = std::fs::metadata(&a.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", a.file.display()))?
        .len();
    if len > MAX_DEFINITION_BYTES as u64 {
        anyhow::bail!(
            "{} is {len} bytes; a definition may have at most {MAX_DEFINITION_BYTES}",
            a.file.display()
        );
    }
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", a.file.display()))?;
    let mut p = parse(&text, Format::of_path(&a.file))?;
    p.offer |= a.offer;
    let (stored, added) = ctx.host.add_pipeline(&p).await.map_err(plain)?;
    if ctx.json {
        output::json(&serde_json::json!({"pipeline": stored, "added": added}))?;
    } else if added {
        outln!(
            "added {} version {}",
            stored.pipeline.name,
            stored.pipeline.version
        );
    } else {
        outln!(
            "{} version {} is already this definition; nothing changed",
            stored.pipeline.name,
            stored.pipeline.version
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn list(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let all = ctx.host.list_pipelines().await.map_err(plain)?;
    if ctx.json {
        output::json(&all)?;
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        outln!("no pipelines; add one with `switchboard pipeline add FILE`");
    }
    for s in &all {
        let p = &s.pipeline;
        outln!(
            "{} v{} ({}{}): {}",
            p.name,
            p.version,
            output::count(p.steps.len(), "step", "steps"),
            if p.offer { ", offered to models" } else { "" },
            inert(&p.description)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the servers a pipeline uses, so its check sees their live catalogs. One that does
/// not start is reported; the check then says its tools are not available.
async fn bring_up(ctx: &Ctx, p: &Pipeline) {
    let mut seen = Vec::new();
    for step in &p.steps {
        let Ok((server, _)) = step.tool_ref() else {
            continue;
        };
        if seen.contains(&server) {
            continue;
        }
        if let Err(e) = ctx.host.ensure_started(&server).await {
            errln!("{server} did not start: {}", inert(&e.to_string()));
        }
        seen.push(server);
    }
}

async fn show(ctx: &Ctx, a: NameArgs) -> anyhow::Result<ExitCode> {
    let name = name_of(&a.name)?;
    let stored = ctx.host.pipeline(&name, a.version).await.map_err(plain)?;
    let p = &stored.pipeline;
    bring_up(ctx, p).await;
    let checked = ctx.host.check_pipeline(p).await.map_err(plain)?;
    if ctx.json {
        let (plan, errors) = match &checked {
            Ok(plan) => (Some(plan.lines()), Vec::new()),
            Err(e) => (None, e.iter().map(ToString::to_string).collect()),
        };
        output::json(&serde_json::json!({
            "pipeline": stored, "flows": plan, "errors": errors,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{} v{}: {}", p.name, p.version, inert(&p.description));
    for i in &p.inputs {
        outln!("  input {} {}: {}", i.name, i.schema, inert(&i.description));
    }
    match checked {
        Ok(plan) => {
            outln!("what flows where (checked against the current catalogs):");
            for line in plan.lines() {
                outln!("  {}", inert(&line));
            }
        }
        Err(errors) => {
            for (n, s) in p.steps.iter().enumerate() {
                outln!("  step {} {:?} {}", n + 1, s.id, inert(&s.tool));
            }
            outln!("NOT RUNNABLE against the current catalogs:");
            for e in errors {
                outln!("  {}", inert(&e.to_string()));
            }
            return Ok(ExitCode::from(crate::errors::exit::FAILED));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads `--input NAME=VALUE`s: a string when the input's schema says string, else JSON when
/// it parses, else the text.
fn inputs_of(p: &Pipeline, raw: &[String]) -> anyhow::Result<Map<String, Value>> {
    let mut out = Map::new();
    for r in raw {
        let (k, v) = r
            .split_once('=')
            .ok_or_else(|| usage(format!("--input {r:?} is not NAME=VALUE")))?;
        let string = p
            .inputs
            .iter()
            .find(|i| i.name == k)
            .is_some_and(|i| i.schema.get("type") == Some(&Value::String("string".into())));
        let value = if string {
            Value::String(v.to_owned())
        } else {
            serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()))
        };
        if out.insert(k.to_owned(), value).is_some() {
            return Err(usage(format!("--input {k} is given twice")));
        }
    }
    Ok(out)
}

/// The whole pipeline with what flows where, shown before the host asks for its approval (the
/// question itself comes through the inbox, like every other).
fn show_plan(label: &str, lines: &[String]) {
    errln!("{}:", inert(label));
    for line in lines {
        errln!("  {}", inert(line));
    }
}

/// Approves on the terminal (or by `--yes`) while `f` runs; Ctrl-C stops the run.
async fn governed<F, Fut>(ctx: &Ctx, yes: bool, f: F) -> Result<PipelineOutcome, PipelineError>
where
    F: FnOnce(switchboard_core::ids::RunId) -> Fut,
    Fut: std::future::Future<Output = Result<PipelineOutcome, PipelineError>>,
{
    use std::io::IsTerminal as _;
    let mode = if std::io::stdin().is_terminal() {
        crate::approve::ApprovalMode::Prompt
    } else if yes {
        crate::approve::ApprovalMode::AllowOnce
    } else {
        crate::approve::ApprovalMode::Refuse
    };
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
        crate::approve::SamplingChoice::parse(None),
        mode,
    );
    let result = f(run).await;
    done.cancel();
    let _ = approver.await;
    ctrl_c.abort();
    result
}

async fn run_one(ctx: &Ctx, a: RunArgs) -> anyhow::Result<ExitCode> {
    let name = name_of(&a.which.name)?;
    let stored = ctx
        .host
        .pipeline(&name, a.which.version)
        .await
        .map_err(plain)?;
    let p = stored.pipeline;
    let inputs = inputs_of(&p, &a.inputs)?;
    bring_up(ctx, &p).await;
    // The plan, approved as a whole; the run checks it again itself before its first step.
    if let Ok(Ok(plan)) = ctx.host.check_pipeline(&p).await {
        let label = format!("run {} v{}", p.name, p.version);
        show_plan(&label, &plan.lines());
    }
    let host = ctx.host.clone();
    let version = Some(p.version);
    let outcome = governed(ctx, a.yes, |run| async move {
        host.run_pipeline(&name, version, inputs, Origin::Manual, Some(run))
            .await
    })
    .await
    .map_err(plain)?;
    report(ctx, &outcome)
}

async fn replay(ctx: &Ctx, a: ReplayArgs) -> anyhow::Result<ExitCode> {
    let host = ctx.host.clone();
    let past = host.pipeline_run(&a.run).await.map_err(plain)?;
    let label = format!(
        "replay {} v{} with {}",
        past.run.name, past.run.version, past.run.inputs
    );
    let mut lines = Vec::new();
    if let Ok(name) = PipelineName::new(&past.run.name) {
        if let Ok(stored) = host.pipeline(&name, Some(past.run.version)).await {
            bring_up(ctx, &stored.pipeline).await;
            if let Ok(Ok(plan)) = host.check_pipeline(&stored.pipeline).await {
                lines = plan.lines();
            }
        }
    }
    show_plan(&label, &lines);
    let id = a.run.clone();
    let outcome = governed(ctx, a.yes, |run| async move {
        host.replay_pipeline_run(&id, Origin::Manual, Some(run))
            .await
    })
    .await
    .map_err(plain)?;
    report(ctx, &outcome)
}

fn report(ctx: &Ctx, o: &PipelineOutcome) -> anyhow::Result<ExitCode> {
    if ctx.json {
        output::json(o)?;
    } else {
        for s in &o.steps {
            let structured = s
                .result
                .as_ref()
                .and_then(|r| r.get("structuredContent"))
                .map(|v| format!(" -> {v}"))
                .unwrap_or_default();
            outln!(
                "step {} {:?} {} {}{}",
                s.index,
                s.step_id,
                inert(&s.tool),
                status_word(s.status),
                inert(&structured)
            );
            if let Some(e) = &s.error {
                outln!("  {}", inert(e));
            }
        }
        outln!("run {} {}", o.run.id, status_word(o.run.status));
    }
    if o.run.status == RunStatus::Succeeded {
        Ok(ExitCode::SUCCESS)
    } else {
        if let Some(e) = &o.run.error {
            errln!("the pipeline stopped: {}", inert(e));
        }
        Ok(ExitCode::from(crate::errors::exit::FAILED))
    }
}

fn status_word(s: RunStatus) -> &'static str {
    match s {
        RunStatus::Running => "running (did not end)",
        RunStatus::Succeeded => "succeeded",
        RunStatus::Failed => "FAILED",
    }
}

async fn runs(ctx: &Ctx, a: RunsArgs) -> anyhow::Result<ExitCode> {
    let name = a.name.as_deref().map(name_of).transpose()?;
    let runs = ctx.host.pipeline_runs(name.as_ref()).await.map_err(plain)?;
    if ctx.json {
        output::json(&runs)?;
        return Ok(ExitCode::SUCCESS);
    }
    for r in &runs {
        let replay = r
            .replay_of
            .as_deref()
            .map(|p| format!(" (replay of {p})"))
            .unwrap_or_default();
        outln!(
            "{} {} v{} {} {}{}",
            r.id,
            r.name,
            r.version,
            status_word(r.status),
            output::ago(r.started_ms),
            replay
        );
        if let Some(e) = &r.error {
            outln!("  {}", inert(e));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_strings_when_their_schema_says_so_and_json_otherwise() {
        let p = parse(
            r#"{"name": "p", "inputs": [{"name": "s", "schema": {"type": "string"}}, {"name": "n"}],
                "steps": [{"id": "a", "tool": "x/y"}]}"#,
            Format::Json,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let got = inputs_of(&p, &["s=33".into(), "n=33".into()]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got["s"], Value::String("33".into()));
        assert_eq!(got["n"], serde_json::json!(33));
        assert!(inputs_of(&p, &["s".into()]).is_err());
        assert!(inputs_of(&p, &["n=1".into(), "n=2".into()]).is_err());
    }
}

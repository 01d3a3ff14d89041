//! `switchboard skill list|show|approve|read`: a server's skills (`io.modelcontextprotocol/
//! skills`). Listing and showing read manifests only; `read` loads an approved skill, its files
//! verified against the manifest (size, digest, and the `SKILL.md`'s frontmatter) before
//! anything is printed. A skill never approved, or changed since it was, is held: `show` lists
//! what changed and `approve` accepts it as shown.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use switchboard_core::approval::policy::Origin;
use switchboard_core::host::{CallOptions, Host, SkillHostError, SkillState, SkillView};
use switchboard_core::hygiene::reveal;
use tokio_util::sync::CancellationToken;

use crate::catalog_cmds::bring_up;
use crate::output::{self, inert};
use crate::Ctx;

#[derive(Subcommand, Debug)]
pub enum SkillCmd {
    /// List a server's skills and whether each is approved (reads no skill file).
    List(ServerArg),
    /// Show a skill's entry: its frontmatter, its files, and what changed since it was approved.
    Show(SkillArgs),
    /// Approve a skill as it is listed now, so it can be read and attached.
    Approve(ApproveArgs),
    /// Read an approved skill's SKILL.md (or one of its files), verified against its manifest.
    Read(ReadArgs),
}

#[derive(Args, Debug)]
pub struct ServerArg {
    /// The server.
    server: String,
}

#[derive(Args, Debug)]
pub struct SkillArgs {
    /// The server.
    server: String,
    /// The skill's name (or its SKILL.md URI).
    name: String,
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    #[command(flatten)]
    skill: SkillArgs,
    /// The fingerprint shown by `skill show`: the approval is refused if the skill changed since.
    #[arg(long)]
    fingerprint: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReadArgs {
    #[command(flatten)]
    skill: SkillArgs,
    /// A file of the skill, as a path inside it (`references/FORMS.md`); SKILL.md without it.
    path: Option<String>,
    /// Approve the read if the policy asks about it, without a prompt.
    #[arg(long)]
    yes: bool,
}

pub async fn run(ctx: &Ctx, c: SkillCmd) -> anyhow::Result<ExitCode> {
    match c {
        SkillCmd::List(a) => list(ctx, a).await,
        SkillCmd::Show(a) => show(ctx, a).await,
        SkillCmd::Approve(a) => approve(ctx, a).await,
        SkillCmd::Read(a) => read(ctx, a).await,
    }
}

/// A host error as itself, so the CLI's error codes see its type.
fn plain(e: SkillHostError) -> anyhow::Error {
    match e {
        SkillHostError::Host(h) => anyhow::Error::new(h),
        other => anyhow::Error::new(other),
    }
}

async fn list(ctx: &Ctx, a: ServerArg) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.server)?;
    bring_up(ctx, Some(&a.server)).await?;
    let skills = ctx.host.skills(&id).await.map_err(plain)?;
    if ctx.json {
        output::json(&skills)?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{id} ({})", output::count(skills.len(), "skill", "skills"));
    for s in &skills {
        let files = s.entry.listed().map_or("dynamic".to_owned(), |f| {
            output::count(f.len(), "file", "files")
        });
        outln!(
            "  {} [{}] ({files}): {}",
            reveal(s.entry.name()),
            state_word(s),
            inert(s.entry.description())
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn show(ctx: &Ctx, a: SkillArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.server)?;
    bring_up(ctx, Some(&a.server)).await?;
    let s = ctx.host.skill(&id, &a.name).await.map_err(plain)?;
    if ctx.json {
        output::json(&s)?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{} [{}]", reveal(&s.entry.uri), state_word(&s));
    outln!("fingerprint: {}", s.fingerprint);
    if let Some(why) = &s.invalid {
        outln!("NOT USABLE: {}", inert(why));
    }
    outln!("frontmatter:");
    for (k, v) in &s.entry.frontmatter {
        outln!("  {}: {}", reveal(k), inert(&v.to_string()));
    }
    match s.entry.listed() {
        Some(files) => {
            outln!("files:");
            for f in files {
                outln!("  {} ({} bytes, {})", reveal(&f.uri), f.size, f.digest);
            }
        }
        None => outln!("files: dynamic (no digests; read unverified)"),
    }
    if s.approved.is_some() {
        outln!("CHANGED since it was approved:");
        for line in s.changes() {
            outln!("  {}", inert(&line));
        }
    }
    if s.state != SkillState::Approved {
        outln!(
            "Held until approved: switchboard skill approve {id} {} --fingerprint {}",
            reveal(s.entry.name()),
            s.fingerprint
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn approve(ctx: &Ctx, a: ApproveArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.skill.server)?;
    bring_up(ctx, Some(&a.skill.server)).await?;
    let s = ctx
        .host
        .approve_skill(&id, &a.skill.name, a.fingerprint.as_deref())
        .await
        .map_err(plain)?;
    if ctx.json {
        output::json(&s)?;
    } else {
        errln!("approved the skill {} of {id}", reveal(s.entry.name()));
    }
    Ok(ExitCode::SUCCESS)
}

async fn read(ctx: &Ctx, a: ReadArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.skill.server)?;
    bring_up(ctx, Some(&a.skill.server)).await?;
    let run = ctx.host.open_run();
    let done = CancellationToken::new();
    let mode = {
        use std::io::IsTerminal as _;
        if std::io::stdin().is_terminal() {
            crate::approve::ApprovalMode::Prompt
        } else if a.yes {
            crate::approve::ApprovalMode::AllowOnce
        } else {
            crate::approve::ApprovalMode::Refuse
        }
    };
    let approver = crate::approve::spawn_approver(
        ctx.host.clone(),
        done.clone(),
        crate::approve::SamplingChoice::parse(None),
        mode,
    );
    let opts = CallOptions::default().run(run);
    let result = match &a.path {
        None => ctx
            .host
            .read_skill(&id, &a.skill.name, Origin::Manual, opts)
            .await
            .map(|l| l.skill_md),
        Some(p) => {
            ctx.host
                .read_skill_file(&id, &a.skill.name, p, Origin::Manual, opts)
                .await
        }
    };
    done.cancel();
    let _ = approver.await;
    let content = result.map_err(plain)?;
    if ctx.json {
        output::json(&serde_json::json!({
            "uri": content.uri,
            "mimeType": content.mime_type,
            "verified": content.verified,
            "text": content.text(),
            "size": content.bytes.len(),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let how = if content.verified {
        "verified"
    } else {
        "dynamic, unverified"
    };
    errln!("--- {} ({how})", reveal(&content.uri));
    match content.text() {
        Some(t) => outln!("{}", inert(t)),
        None => outln!("({} bytes, binary, not shown)", content.bytes.len()),
    }
    Ok(ExitCode::SUCCESS)
}

fn state_word(s: &SkillView) -> &'static str {
    match (s.invalid.is_some(), s.state) {
        (true, _) => "invalid",
        (_, SkillState::Approved) => "approved",
        (_, SkillState::New) => "new, held for review",
        (_, SkillState::Changed) => "changed, held for review",
    }
}

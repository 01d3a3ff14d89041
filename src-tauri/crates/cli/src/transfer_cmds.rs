//! `secret`, `import`, `export`.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use switchboard_core::config::import::ForeignFormat;
use switchboard_core::ids::SecretName;
use switchboard_core::redact::Secret;

use crate::output::{self, inert};
use crate::Ctx;

#[derive(Subcommand, Debug)]
pub enum SecretCmd {
    /// Store a secret; the value is read from stdin, or asked for without echo on a terminal.
    Set(SecretArg),
    /// Delete a secret.
    Delete(SecretArg),
    /// Say whether a secret is set (never prints it).
    Status(SecretArg),
}

#[derive(Args, Debug)]
pub struct SecretArg {
    /// The secret's name, as used in `K=secret:NAME`.
    name: String,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The file: claude_desktop_config.json, .vscode/mcp.json, .cursor/mcp.json, or - for stdin.
    file: PathBuf,
    /// The format, when detection guesses wrong.
    #[arg(long)]
    format: Option<ForeignFormat>,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// claude, vscode or cursor.
    #[arg(long)]
    format: ForeignFormat,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

fn secret_name(s: &str) -> anyhow::Result<SecretName> {
    SecretName::new(s).with_context(|| format!("{s:?} is not a usable secret name"))
}

pub async fn secret(ctx: &Ctx, cmd: SecretCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SecretCmd::Set(a) => {
            let name = secret_name(&a.name)?;
            let value = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("value for {name}: "))?
            } else {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s)?;
                s.trim_end_matches(['\n', '\r']).to_owned()
            };
            if value.is_empty() {
                bail!("the secret is empty; nothing was stored");
            }
            ctx.host.set_secret(&name, Secret::new(value)).await?;
            eprintln!("stored {name} in {}", ctx.host.secrets().describe());
        }
        SecretCmd::Delete(a) => {
            let name = secret_name(&a.name)?;
            ctx.host.delete_secret(&name).await?;
            eprintln!("deleted {name}");
        }
        SecretCmd::Status(a) => {
            let name = secret_name(&a.name)?;
            let set = ctx.host.secret_is_set(&name).await?;
            if ctx.json {
                output::json(&serde_json::json!({"name": name, "set": set}))?;
            } else {
                println!("{name}: {}", if set { "set" } else { "not set" });
            }
            if !set {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn import(ctx: &Ctx, a: ImportArgs) -> anyhow::Result<ExitCode> {
    let text = if a.file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        s
    } else {
        std::fs::read_to_string(&a.file)
            .with_context(|| format!("could not read {}", a.file.display()))?
    };
    let outcome = ctx.host.import_config(&text, a.format).await?;
    if ctx.json {
        output::json(&outcome)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "imported {} server(s) from a {:?} file; nothing was started",
        outcome.added.len(),
        outcome.format
    );
    for id in &outcome.added {
        println!("  + {id}");
    }
    for s in &outcome.secrets_stored {
        println!("  moved secret to the keyring: {s}");
    }
    for n in &outcome.notes {
        let who = n
            .server
            .as_deref()
            .map(|s| format!("{s}: "))
            .unwrap_or_default();
        println!("  note ({:?}) {}{}", n.kind, inert(&who), inert(&n.message));
    }
    if !outcome.added.is_empty() {
        println!(
            "review and approve each server before it can start: switchboard server trust NAME"
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn export(ctx: &Ctx, a: ExportArgs) -> anyhow::Result<ExitCode> {
    let out = ctx.host.export_config(a.format).await?;
    match &a.output {
        Some(path) => std::fs::write(path, &out.text)
            .with_context(|| format!("could not write {}", path.display()))?,
        None => println!("{}", out.text),
    }
    for n in &out.notes {
        eprintln!("note: {}", inert(n));
    }
    Ok(ExitCode::SUCCESS)
}

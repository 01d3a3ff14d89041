//! `secret`, `import`, `export`.
//!
//! Secrets are always a server's own (`secret set --server S NAME`); a provider's key is set
//! with `provider set-key`. No command names a keyring entry directly (SE-04).

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use switchboard_core::config::import::{read_limited, ForeignFormat};
use switchboard_core::host::Host;
use switchboard_core::ids::SecretName;
use switchboard_core::redact::Secret;

use crate::errors::usage;
use crate::output::{self, inert};
use crate::Ctx;

#[derive(Subcommand, Debug)]
pub enum SecretCmd {
    /// Store a secret of a server; the value is read from stdin, or asked for without echo on a
    /// terminal. An existing value is replaced only with --replace (or a yes on a terminal).
    Set(SecretSetArgs),
    /// Delete a secret of a server.
    Delete(SecretArg),
    /// Say whether a secret of a server is set (never prints it).
    Status(SecretArg),
}

#[derive(Args, Debug)]
pub struct SecretArg {
    /// The server the secret belongs to.
    #[arg(long)]
    server: String,
    /// The secret's name in the server's namespace, as used in `K=secret:NAME`.
    name: String,
}

#[derive(Args, Debug)]
pub struct SecretSetArgs {
    #[command(flatten)]
    secret: SecretArg,
    /// Replace the value if one is stored.
    #[arg(long)]
    replace: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The file: claude_desktop_config.json, .vscode/mcp.json, .cursor/mcp.json, or - for stdin.
    file: PathBuf,
    /// The format, when detection guesses wrong.
    #[arg(long)]
    format: Option<ForeignFormat>,
    /// Replace secrets already stored under the names the imported servers' values would get
    /// (left over from earlier servers of the same names); without it the import stops.
    #[arg(long)]
    replace_secrets: bool,
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
    SecretName::new(s).map_err(|e| usage(format!("{s:?} is not a usable secret name: {e}")))
}

/// Whether to replace an existing value: `--replace`, or a yes typed on a terminal.
fn confirm_replace(what: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    err!("{what} is already set. Replace it? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

pub async fn secret(ctx: &Ctx, cmd: SecretCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SecretCmd::Set(a) => {
            let server = Host::server_id(&a.secret.server)?;
            let name = secret_name(&a.secret.name)?;
            // Asked before the value is typed, so nobody types a key for nothing.
            let mut replace = a.replace;
            if !replace && ctx.host.server_secret_is_set(&server, &name).await? {
                replace = confirm_replace(&format!("{name} of {server}"))?;
                if !replace {
                    bail!("{name} of {server} is already set; nothing was changed (pass --replace to replace it)");
                }
            }
            let value = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("value for {name} of {server}: "))?
            } else {
                let mut s = String::new();
                std::io::stdin().take(64 * 1024).read_to_string(&mut s)?;
                s.trim_end_matches(['\n', '\r']).to_owned()
            };
            if value.is_empty() {
                bail!("the secret is empty; nothing was stored");
            }
            ctx.host
                .set_server_secret(&server, &name, Secret::new(value), replace)
                .await?;
            errln!(
                "stored {name} of {server} in {}",
                ctx.host.secret_store_description()
            );
            let spec = ctx.host.server(&server).await?;
            if !spec.secret_refs().contains(&&name) {
                errln!("note: {server} does not use a secret named {name} (yet); its values refer to secrets as K=secret:NAME");
            }
        }
        SecretCmd::Delete(a) => {
            let server = Host::server_id(&a.server)?;
            let name = secret_name(&a.name)?;
            ctx.host.delete_server_secret(&server, &name).await?;
            errln!("deleted {name} of {server}");
        }
        SecretCmd::Status(a) => {
            let server = Host::server_id(&a.server)?;
            let name = secret_name(&a.name)?;
            let set = ctx.host.server_secret_is_set(&server, &name).await?;
            if ctx.json {
                output::json(&serde_json::json!({"server": server, "name": name, "set": set}))?;
            } else {
                outln!(
                    "{name} of {server}: {}",
                    if set { "set" } else { "not set" }
                );
            }
            if !set {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn import(ctx: &Ctx, a: ImportArgs) -> anyhow::Result<ExitCode> {
    // At most the size cap is read from any source, so `/dev/zero` or an endless pipe fails
    // fast with the size error.
    let text = if a.file.as_os_str() == "-" {
        read_limited(std::io::stdin().lock())?
    } else {
        let file = std::fs::File::open(&a.file)
            .with_context(|| format!("could not read {}", a.file.display()))?;
        read_limited(file).with_context(|| format!("could not import {}", a.file.display()))?
    };
    let outcome = ctx
        .host
        .import_config_with(&text, a.format, a.replace_secrets)
        .await?;
    // SP-07: whether each imported local server runs sandboxed (`None`: remote).
    let mut sandboxed = Vec::with_capacity(outcome.added.len());
    for id in &outcome.added {
        let spec = ctx.host.server(id).await?;
        sandboxed.push(crate::server_cmds::sandboxed(&spec));
    }
    if ctx.json {
        let mut v = serde_json::to_value(&outcome)?;
        v["sandboxed"] = outcome
            .added
            .iter()
            .zip(&sandboxed)
            .map(|(id, s)| (id.to_string(), serde_json::json!(s)))
            .collect::<serde_json::Map<_, _>>()
            .into();
        output::json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "imported {} from a {} file; nothing was started or contacted",
        output::count(outcome.added.len(), "server", "servers"),
        outcome.format
    );
    for (id, s) in outcome.added.iter().zip(&sandboxed) {
        let how = match s {
            Some(true) => " (sandboxed)",
            Some(false) => " (unsandboxed)",
            None => "",
        };
        outln!("  + {id}{how}");
    }
    for (server, s) in &outcome.secrets_stored {
        outln!("  moved a value to the keyring as {server}'s secret {s}");
    }
    for n in &outcome.notes {
        let who = n
            .server
            .as_deref()
            .map(|s| format!("{s}: "))
            .unwrap_or_default();
        outln!(
            "  note ({}) {}{}",
            output::word(&n.kind),
            inert(&who),
            inert(&n.message)
        );
    }
    if !outcome.added.is_empty() {
        outln!(
            "nothing starts or connects before you approve it: review each server with switchboard server trust NAME"
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn export(ctx: &Ctx, a: ExportArgs) -> anyhow::Result<ExitCode> {
    let out = ctx.host.export_config(a.format).await?;
    match &a.output {
        Some(path) => std::fs::write(path, &out.text)
            .with_context(|| format!("could not write {}", path.display()))?,
        None => outln!("{}", out.text),
    }
    for n in &out.notes {
        errln!("note: {}", inert(n));
    }
    Ok(ExitCode::SUCCESS)
}

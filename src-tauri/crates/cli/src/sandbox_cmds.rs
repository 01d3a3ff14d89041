//! `switchboard server sandbox NAME ...`: show or change where a local server may reach
//! (SP-07).
//!
//! Without options it shows the setting. Every option changes it in one step, through the one
//! host method the app uses too; a change made here is the person's own act, so a server that
//! was approved stays approved (and the change is audited), whereas the same change made in a
//! config file voids the approval.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use switchboard_core::escape::escape_for_display;
use switchboard_core::host::Host;
use switchboard_core::sandbox::{Access, SandboxSpec};

use crate::errors::usage;
use crate::{output, Ctx};

/// `server sandbox`.
#[derive(Args, Debug)]
pub struct SandboxArgs {
    /// The server's name.
    name: String,
    /// Run it sandboxed (bubblewrap): system folders read-only, its working directory, an
    /// empty home folder, and only the folders granted here.
    #[arg(long, conflicts_with = "off")]
    on: bool,
    /// Run it with all your rights again (the grants are kept for when it is switched back on).
    #[arg(long)]
    off: bool,
    /// Let it read this folder (or file). Repeatable.
    #[arg(long = "allow-read", value_name = "PATH")]
    allow_read: Vec<PathBuf>,
    /// Let it read and write this folder (or file). Repeatable.
    #[arg(long = "allow-write", value_name = "PATH")]
    allow_write: Vec<PathBuf>,
    /// Let this command's --allow-read/--allow-write name a credential store the sandbox
    /// otherwise always hides (~/.ssh, ~/.gnupg, cloud and keyring files, the app's data):
    /// without it such a grant is refused. Its approval is voided: review it again.
    #[arg(long)]
    unmask: bool,
    /// Hide this path even inside a granted folder. Repeatable.
    #[arg(long, value_name = "PATH")]
    deny: Vec<PathBuf>,
    /// Remove every grant or denial of this path. Repeatable.
    #[arg(long, value_name = "PATH")]
    revoke: Vec<PathBuf>,
    /// Whether it may use the network: in a network namespace of its own (pasta), never with
    /// this computer's services (loopback, X11, D-Bus). With domain lists, only those.
    #[arg(long, value_enum, value_name = "on|off")]
    network: Option<Switch>,
    /// Let it reach this domain (`example.com`, `*.example.com`) and switch its network on:
    /// with any domain listed, it reaches only listed domains, through Switchboard's filtering
    /// proxy. Repeatable.
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    allow_domain: Vec<String>,
    /// Never let it reach this domain (a deny wins over an allow). Repeatable.
    #[arg(long = "deny-domain", value_name = "DOMAIN")]
    deny_domain: Vec<String>,
    /// Remove this domain from both lists. Repeatable.
    #[arg(long = "revoke-domain", value_name = "DOMAIN")]
    revoke_domain: Vec<String>,
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Switch {
    On,
    Off,
}

impl SandboxArgs {
    fn changes_anything(&self) -> bool {
        self.on
            || self.off
            || self.network.is_some()
            || !(self.allow_read.is_empty()
                && self.allow_write.is_empty()
                && self.deny.is_empty()
                && self.revoke.is_empty()
                && self.allow_domain.is_empty()
                && self.deny_domain.is_empty()
                && self.revoke_domain.is_empty())
    }

    /// `now` with every option applied. Granting something switches the sandbox on: a grant
    /// only means something inside one.
    fn apply(&self, now: SandboxSpec) -> anyhow::Result<SandboxSpec> {
        if self.unmask && self.allow_read.is_empty() && self.allow_write.is_empty() {
            return Err(usage(
                "--unmask goes with the --allow-read or --allow-write it unmasks",
            ));
        }
        let mut next = now;
        for p in &self.revoke {
            next = next.revoked(&absolute(p)?);
        }
        for (paths, access) in [
            (&self.allow_read, Access::Read),
            (&self.allow_write, Access::Write),
        ] {
            for p in paths {
                let p = absolute(p)?;
                next = next.granted(&p, access);
                next.enabled = true;
                if self.unmask {
                    next.unmask.push(p);
                }
            }
        }
        for p in &self.deny {
            next.deny.push(absolute(p)?);
        }
        for d in &self.revoke_domain {
            next = next.domain_revoked(d);
        }
        for d in &self.allow_domain {
            next = next.domain_allowed(d).map_err(|e| usage(e.to_string()))?;
            next.enabled = true;
        }
        for d in &self.deny_domain {
            next = next.domain_denied(d).map_err(|e| usage(e.to_string()))?;
        }
        if let Some(n) = self.network {
            next.network = n == Switch::On;
        }
        if self.on {
            next.enabled = true;
        }
        if self.off {
            next.enabled = false;
        }
        Ok(next.normalized())
    }
}

/// A path typed on the command line means "relative to where I am": made absolute now,
/// visibly, and checked to exist (a grant of a typo helps nobody).
fn absolute(p: &std::path::Path) -> anyhow::Result<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .context("could not read the current directory to resolve a path")?
            .join(p)
    };
    if !abs.exists() {
        return Err(usage(format!(
            "{} does not exist",
            escape_for_display(&abs.to_string_lossy())
        )));
    }
    Ok(abs)
}

pub async fn sandbox(ctx: &Ctx, a: SandboxArgs) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(&a.name)?;
    let now = ctx.host.server_sandbox(&id).await?;
    let (setting, kept) = if a.changes_anything() || a.unmask {
        let change = ctx.host.set_server_sandbox(&id, a.apply(now)?).await?;
        (change.sandbox, Some(change.approval_kept))
    } else {
        (now, None)
    };
    if ctx.json {
        output::json(&serde_json::json!({
            "server": id,
            "sandbox": setting,
            "sandboxed": setting.enabled,
            "approval_kept": kept,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    for (k, v) in setting.consent_lines() {
        outln!("{k:<10} {v}");
    }
    match kept {
        Some(true) => errln!("changed; {id} stays approved (a running server restarts into it)"),
        Some(false) => {
            errln!("changed; {id} is not approved: review it with `switchboard server trust {id}`")
        }
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}

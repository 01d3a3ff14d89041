//! `switchboard auth login|logout|status`: signing in to remote servers (OAuth), from a
//! terminal. The steps print as they happen; the browser opens only after the line that names
//! the authorization server's domain. No token is ever printed, in either output format.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use async_trait::async_trait;
use clap::Subcommand;
use serde_json::json;
use switchboard_core::config::{HttpAuth, TransportSpec};
use switchboard_core::host::credentials::{Handoff, StepEvent, StepState};
use switchboard_core::host::Host;
use switchboard_core::redact::Secret;
use switchboard_core::url_check::CheckedUrl;

use crate::output;
use crate::Ctx;

#[derive(Subcommand, Debug)]
pub enum AuthCmd {
    /// Sign in to a remote server in the browser (OAuth).
    Login {
        /// The server's name.
        name: String,
        /// A client id you registered with the server's authorization server yourself (used
        /// instead of registering Switchboard automatically).
        #[arg(long)]
        client_id: Option<String>,
        /// Read that client's secret from stdin (or ask for it without echo) and keep it in the
        /// OS keyring.
        #[arg(long, requires = "client_id")]
        client_secret: bool,
    },
    /// Use OAuth client credentials (machine to machine, no browser) for a server: the client
    /// secret is read from stdin (or asked for without echo), or a private key signs assertions.
    ClientCredentials {
        /// The server's name.
        name: String,
        /// The client id the authorization server gave this client.
        #[arg(long)]
        client_id: String,
        /// A PEM private key file whose key signs RFC 7523 assertions instead of a secret; kept
        /// in the OS keyring.
        #[arg(long)]
        key_file: Option<std::path::PathBuf>,
        /// The signing algorithm of that key (RS256, RS384, RS512, ES256, ES384).
        #[arg(long, requires = "key_file", default_value = "ES256")]
        alg: String,
        /// A scope to ask for (repeatable).
        #[arg(long = "scope")]
        scopes: Vec<String>,
    },
    /// Sign out: revoke the tokens where the server supports it and delete them.
    Logout {
        /// The server's name.
        name: String,
    },
    /// Show the sign-in of one server, or of every remote server.
    Status {
        /// The server's name (default: every remote server).
        name: Option<String>,
    },
}

pub async fn run(ctx: &Ctx, c: AuthCmd) -> anyhow::Result<ExitCode> {
    match c {
        AuthCmd::Login {
            name,
            client_id,
            client_secret,
        } => login(ctx, &name, client_id, client_secret).await,
        AuthCmd::ClientCredentials {
            name,
            client_id,
            key_file,
            alg,
            scopes,
        } => client_credentials(ctx, &name, client_id, key_file, alg, scopes).await,
        AuthCmd::Logout { name } => logout(ctx, &name).await,
        AuthCmd::Status { name } => status(ctx, name.as_deref()).await,
    }
}

/// Prints each step on stderr and opens the browser with the host's opener.
struct Terminal<'a> {
    host: &'a Host,
}

#[async_trait]
impl Handoff for Terminal<'_> {
    fn step(&self, event: StepEvent) {
        let step = serde_json::to_value(event.step)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
            .replace('_', " ");
        match event.state {
            StepState::Started => {}
            StepState::Done { detail } => errln!("  {step}: {}", output::escape_multiline(&detail)),
            StepState::Failed { detail, .. } => {
                errln!("  {step}: failed: {}", output::escape_multiline(&detail))
            }
        }
    }

    async fn open(&self, url: &CheckedUrl) -> Result<(), String> {
        errln!(
            "  browser: opening the sign-in page of {} ({})",
            url.domain,
            url.host
        );
        for w in &url.warnings {
            errln!("  note: {w}");
        }
        self.host.open_in_browser(url).map_err(|e| {
            format!(
                "could not open the browser: {e}; open this address yourself: {}",
                url.url
            )
        })
    }
}

/// A secret from stdin (at most 64 KiB), or asked for without echo on a terminal.
fn read_secret(prompt: &str) -> anyhow::Result<Secret> {
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(prompt)?
    } else {
        let mut s = String::new();
        std::io::stdin().take(64 * 1024).read_to_string(&mut s)?;
        s.trim_end_matches(['\r', '\n']).to_owned()
    };
    Ok(Secret::new(value))
}

async fn client_credentials(
    ctx: &Ctx,
    name: &str,
    client_id: String,
    key_file: Option<std::path::PathBuf>,
    alg: String,
    scopes: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(name)?;
    // Refused before anything is stored or said to be under way (SP-11).
    ctx.host.may_sign_in(&id).await?;
    // The client id first: the secret or key is stored as belonging to it (SE-08).
    let auth = HttpAuth::ClientCredentials {
        client_id,
        signing_algorithm: key_file.as_ref().map(|_| alg),
        scopes,
    };
    ctx.host.set_http_auth(&id, Some(auth)).await?;
    match key_file {
        Some(path) => {
            let pem = std::fs::read_to_string(&path)
                .map_err(|e| anyhow::anyhow!("could not read {}: {e}", path.display()))?;
            ctx.host.set_client_key(&id, Secret::new(pem)).await?;
        }
        None => {
            let secret = read_secret(&format!("client secret for {id}: "))?;
            ctx.host.set_client_secret(&id, secret).await?;
        }
    }
    errln!("getting a token for {id} with its client credentials");
    let signed = ctx
        .host
        .sign_in(&id, None, &Terminal { host: &ctx.host })
        .await?;
    if ctx.json {
        output::json(&json!({ "server": id.as_str(), "signed_in": signed }))?;
    } else {
        outln!("{id}: has a token from its client credentials");
    }
    Ok(ExitCode::SUCCESS)
}

async fn login(
    ctx: &Ctx,
    name: &str,
    client_id: Option<String>,
    client_secret: bool,
) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(name)?;
    ctx.host.may_sign_in(&id).await?;
    if let Some(client_id) = &client_id {
        // Remembered, so signing in again (and refreshing) uses the same client; set before
        // the secret, which is stored as belonging to it (SE-08).
        let auth = HttpAuth::SignIn {
            client_id: client_id.clone(),
        };
        ctx.host.set_http_auth(&id, Some(auth)).await?;
    }
    if client_secret {
        let secret = read_secret(&format!("client secret for {id}: "))?;
        ctx.host.set_client_secret(&id, secret).await?;
    }
    errln!("signing in to {id}");
    let signed = ctx
        .host
        .sign_in(&id, client_id, &Terminal { host: &ctx.host })
        .await?;
    if ctx.json {
        output::json(&json!({ "server": id.as_str(), "signed_in": signed }))?;
    } else {
        outln!(
            "{id}: signed in{}{}",
            signed
                .issuer
                .as_deref()
                .map(|i| format!(" at {}", output::escape_multiline(i)))
                .unwrap_or_default(),
            if signed.scopes.is_empty() {
                String::new()
            } else {
                format!(" (scopes: {})", signed.scopes.join(" "))
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn logout(ctx: &Ctx, name: &str) -> anyhow::Result<ExitCode> {
    let id = Host::server_id(name)?;
    let out = ctx.host.sign_out(&id).await?;
    if ctx.json {
        output::json(&json!({ "server": id.as_str(), "signed_out": out }))?;
        return Ok(ExitCode::SUCCESS);
    }
    use switchboard_core::host::credentials::SignedOut;
    let what = match out {
        SignedOut::NotSignedIn => "was not signed in".to_owned(),
        SignedOut::Revoked => "signed out; the server revoked the tokens and they were deleted".to_owned(),
        SignedOut::NotOffered => {
            "signed out; the tokens were deleted here (the server offers no revocation, so they stay valid there until they expire)".to_owned()
        }
        SignedOut::Failed { detail } => format!(
            "signed out; the tokens were deleted here, but revoking them failed: {}",
            output::escape_multiline(&detail)
        ),
    };
    outln!("{id}: {what}");
    Ok(ExitCode::SUCCESS)
}

async fn status(ctx: &Ctx, name: Option<&str>) -> anyhow::Result<ExitCode> {
    let ids = match name {
        Some(n) => vec![Host::server_id(n)?],
        None => ctx
            .host
            .list_servers()
            .await?
            .into_iter()
            .filter(|s| matches!(s.spec.transport, TransportSpec::Http(_)))
            .map(|s| s.spec.id)
            .collect(),
    };
    let mut rows = Vec::new();
    for id in ids {
        rows.push((id.clone(), ctx.host.sign_in_status(&id).await?));
    }
    if ctx.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(id, s)| json!({ "server": id.as_str(), "sign_in": s }))
            .collect();
        output::json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = switchboard_core::host::credentials::now_secs();
    for (id, s) in rows {
        match s {
            None => outln!("{id}: not signed in"),
            Some(s) => {
                let expiry = match s.expires_at {
                    Some(at) if at > now => {
                        format!("access token expires in {} min", (at - now) / 60)
                    }
                    Some(_) if s.refreshable => {
                        "access token expired; it refreshes on the next call".to_owned()
                    }
                    Some(_) => "access token expired; sign in again".to_owned(),
                    None => "no expiry given".to_owned(),
                };
                outln!(
                    "{id}: signed in{} at {}; {}{}{}",
                    if s.current {
                        ""
                    } else {
                        " (for an old URL, not used)"
                    },
                    output::escape_multiline(
                        s.issuer
                            .as_deref()
                            .unwrap_or("an unnamed authorization server")
                    ),
                    expiry,
                    if s.refreshable { "; refreshable" } else { "" },
                    if s.scopes.is_empty() {
                        String::new()
                    } else {
                        format!("; scopes: {}", s.scopes.join(" "))
                    },
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `switchboard policy ...`: the approval rules and grants, and server tags.
//!
//! Rules are data: `policy export` writes them as TOML, `policy import` replaces the user rules
//! with a file's (every rule checked first; nothing changes when one is invalid). Grants made at
//! approval prompts are listed with the rules and revoked like them.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use switchboard_core::approval::{Condition, Effect, Limit, On, Per, Rule, Source};
use switchboard_core::host::Host;
use switchboard_core::store::ServerTag;

use crate::errors::usage;
use crate::{output, Ctx};

/// Approval rules, grants and server tags.
#[derive(Subcommand, Debug)]
pub enum PolicyCmd {
    /// Every rule and grant.
    List,
    /// Add a rule (or replace the one with this id).
    Add(Box<AddArgs>),
    /// Remove a rule, or revoke a grant.
    Remove {
        /// Its id.
        id: String,
    },
    /// Revoke every grant made at approval prompts.
    ResetGrants,
    /// Write the rules and grants as TOML.
    Export {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Replace the user rules with those of a TOML file (grants stay).
    Import {
        /// The file.
        file: std::path::PathBuf,
    },
    /// Show or set a server's tags: trusted, private-data, untrusted-content, external.
    Tags {
        /// The server.
        server: String,
        /// The tags to set (all of them; none with --clear).
        tags: Vec<String>,
        /// Remove every tag.
        #[arg(long)]
        clear: bool,
    },
}

/// `policy add`.
#[derive(clap::Args, Debug)]
pub struct AddArgs {
    /// The rule's id (letters, digits, '-', '_', '.').
    id: String,
    /// allow, ask or deny.
    #[arg(long)]
    effect: String,
    /// The server (`*` wildcards).
    #[arg(long, default_value = "*")]
    server: String,
    /// What the rule covers: `tool` calls (the default), `resource` reads, `prompt` gets (and
    /// their argument completions), or `any` request.
    #[arg(long, default_value = "tool", value_parser = ["tool", "resource", "prompt", "any"])]
    on: String,
    /// The tool (`*` wildcards); with `--on resource` the resource's URI, with `--on prompt`
    /// the prompt's name.
    #[arg(long, default_value = "*", visible_alias = "name")]
    tool: String,
    /// Only calls from `model` or `manual` runs.
    #[arg(long)]
    origin: Option<String>,
    /// Paths must be under this prefix (repeatable).
    #[arg(long)]
    path_under: Vec<String>,
    /// The argument holding the path (default: every path-like argument).
    #[arg(long)]
    path_arg: Option<String>,
    /// URLs must be on this domain or a subdomain (repeatable).
    #[arg(long)]
    domain: Vec<String>,
    /// The argument holding the URL (default: every URL-like argument).
    #[arg(long)]
    domain_arg: Option<String>,
    /// SQL in ARG may only be these statement kinds: ARG=select,insert.
    #[arg(long, value_name = "ARG=KINDS")]
    sql_only: Option<String>,
    /// ARG's value must match the regular expression: ARG=REGEX (repeatable).
    #[arg(long = "match", value_name = "ARG=REGEX")]
    matches: Vec<String>,
    /// Only tools the server claims are read-only (counted only when the server is tagged
    /// trusted).
    #[arg(long)]
    read_only_hint: bool,
    /// Only calls that are writes (for budgets).
    #[arg(long)]
    writes: bool,
    /// At most N calls per minute|hour|day|conversation, then deny: N/hour.
    #[arg(long, value_name = "N/PER")]
    limit: Option<String>,
    /// Why the rule exists.
    #[arg(long)]
    note: Option<String>,
}

fn effect(s: &str) -> anyhow::Result<Effect> {
    Ok(match s {
        "allow" => Effect::Allow,
        "ask" => Effect::Ask,
        "deny" => Effect::Deny,
        other => {
            return Err(usage(format!(
                "--effect is allow, ask or deny, not {other:?}"
            )))
        }
    })
}

fn limit(s: &str) -> anyhow::Result<Limit> {
    let (n, per) = s
        .split_once('/')
        .ok_or_else(|| usage("--limit is N/PER, e.g. 5/hour"))?;
    let max: u32 = n
        .trim()
        .parse()
        .map_err(|_| usage("--limit: N is a whole number"))?;
    let per = match per.trim() {
        "minute" => Per::Minute,
        "hour" => Per::Hour,
        "day" => Per::Day,
        "conversation" => Per::Conversation,
        other => {
            return Err(usage(format!(
                "--limit: the period is minute, hour, day or conversation, not {other:?}"
            )))
        }
    };
    Ok(Limit { max, per })
}

fn split_arg(s: &str, flag: &str) -> anyhow::Result<(String, String)> {
    let (a, v) = s
        .split_once('=')
        .ok_or_else(|| usage(format!("{flag} is ARG=VALUE")))?;
    Ok((a.trim().to_owned(), v.to_owned()))
}

impl AddArgs {
    fn rule(self) -> anyhow::Result<Rule> {
        let mut when = Vec::new();
        if !self.path_under.is_empty() {
            when.push(Condition::PathUnder {
                arg: self.path_arg,
                prefixes: self.path_under,
            });
        }
        if !self.domain.is_empty() {
            when.push(Condition::DomainIn {
                arg: self.domain_arg,
                domains: self.domain,
            });
        }
        if let Some(s) = &self.sql_only {
            let (arg, ops) = split_arg(s, "--sql-only")?;
            when.push(Condition::SqlOnly {
                arg,
                operations: ops
                    .split(',')
                    .map(|o| o.trim().to_ascii_lowercase())
                    .filter(|o| !o.is_empty())
                    .collect(),
            });
        }
        for m in &self.matches {
            let (arg, pattern) = split_arg(m, "--match")?;
            when.push(Condition::Matches { arg, pattern });
        }
        if self.read_only_hint {
            when.push(Condition::ReadOnlyHint);
        }
        if self.writes {
            when.push(Condition::Writes);
        }
        Ok(Rule {
            id: self.id,
            effect: effect(&self.effect)?,
            server: self.server,
            on: match self.on.as_str() {
                "resource" => On::Resource,
                "prompt" => On::Prompt,
                "any" => On::Any,
                _ => On::Tool,
            },
            tool: self.tool,
            origin: self.origin,
            when,
            limit: self.limit.as_deref().map(limit).transpose()?,
            note: self.note,
            source: Source::User,
        })
    }
}

/// One line per rule: id, effect, server/tool, conditions, limit, source.
fn describe(r: &Rule) -> String {
    let when: Vec<String> = r
        .when
        .iter()
        .map(|c| serde_json::to_string(c).unwrap_or_default())
        .collect();
    let limit = r
        .limit
        .map(|l| format!(" at most {}/{}", l.max, l.per.word()))
        .unwrap_or_default();
    let source = match &r.source {
        Source::User => String::new(),
        Source::Grant {
            conversation,
            agent,
            app,
            ..
        } => {
            let when = match conversation {
                Some(c) => format!("conversation {c}"),
                None => "always".into(),
            };
            let whom = agent
                .as_ref()
                .map(|a| format!(", agent {a}"))
                .unwrap_or_default()
                + &app
                    .as_ref()
                    .map(|a| format!(", app {}", output::inert(a)))
                    .unwrap_or_default();
            format!(" [grant, {when}{whom}]")
        }
    };
    let on = match r.on {
        On::Tool => String::new(),
        other => format!("{} ", other.as_str()),
    };
    format!(
        "{}\t{}\t{} › {on}{}\t{}{limit}{source}",
        output::inert(&r.id),
        r.effect.as_str(),
        output::inert(&r.server),
        output::inert(&r.tool),
        output::inert(&when.join(" and "))
    )
}

pub async fn run(ctx: &Ctx, cmd: PolicyCmd) -> anyhow::Result<ExitCode> {
    let host = &ctx.host;
    match cmd {
        PolicyCmd::List => {
            let rules = host.policy_rules().await?;
            if ctx.json {
                outln!("{}", serde_json::to_string_pretty(&rules)?);
            } else if rules.is_empty() {
                errln!("no rules: every tool call is asked about");
            } else {
                for r in &rules {
                    outln!("{}", output::inert(&describe(r)));
                }
            }
        }
        PolicyCmd::Add(a) => {
            let rule = a.rule()?;
            let id = rule.id.clone();
            host.put_policy_rule(rule).await?;
            errln!("saved rule {id}");
        }
        PolicyCmd::Remove { id } => {
            host.remove_policy_rule(&id).await?;
            errln!("removed {}", output::inert(&id));
        }
        PolicyCmd::ResetGrants => {
            let n = host.reset_grants().await?;
            errln!("revoked {n} grant(s)");
        }
        PolicyCmd::Export { out } => {
            let text = host.export_policy().await?;
            match out {
                Some(path) => std::fs::write(&path, text)
                    .with_context(|| format!("could not write {}", path.display()))?,
                None => out!("{text}"),
            }
        }
        PolicyCmd::Import { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("could not read {}", file.display()))?;
            let n = host.import_policy(&text).await?;
            errln!(
                "imported {}; grants were kept",
                output::count(n, "rule", "rules")
            );
        }
        PolicyCmd::Tags {
            server,
            tags,
            clear,
        } => {
            let id = Host::server_id(&server)?;
            if clear || !tags.is_empty() {
                let parsed = tags
                    .iter()
                    .flat_map(|t| t.split(','))
                    .map(|t| {
                        ServerTag::parse(t.trim()).ok_or_else(|| {
                            usage(format!(
                                "unknown tag {:?}; use trusted, private-data, untrusted-content or external",
                                t.trim()
                            ))
                        })
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                host.set_server_tags(&id, &parsed).await?;
            }
            let now: Vec<&str> = host
                .server_tags(&id)
                .await?
                .into_iter()
                .map(ServerTag::as_str)
                .collect();
            outln!("{id}\t{}", now.join(","));
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! Answering on the terminal while a chat turn or a tool run goes on: the model's tool calls
//! (AP-01) and the questions servers and the host ask (elicitation AP-07, sampling AP-08, result
//! review AP-05; see [`crate::questions`]).
//!
//! One inbox, one item at a time, oldest first, shown on stderr and answered by lines from
//! stdin. A tool call is shown with its full arguments and why it is asked; `y` runs it; `c`
//! runs it and allows the tool for the rest of the conversation, `a` always (grants, AP-02), `k`
//! always but only with arguments like these (the suggested constraints are listed first); `e`
//! opens the arguments in `$VISUAL`/`$EDITOR` and asks again with the edited ones; `n REASON`
//! refuses and tells the model why; anything else, or the end of input, refuses.
//!
//! Stdin is read one line at a time, only when an answer is wanted, so an editor started in
//! between has the terminal to itself, and the end of input can only ever mean no. An item that
//! is withdrawn while it is shown (the run was stopped, the server gave up) is dropped with a
//! note; a line already asked for then answers the next item.

use std::collections::HashSet;

use serde_json::{Map, Value};
use switchboard_core::approval::suggest::{describe, suggest_constraints};
use switchboard_core::approval::{Answer, ApprovalRequest, Condition, Scope};
use switchboard_core::host::Host;
use tokio_util::sync::CancellationToken;

pub use crate::inbox::SamplingChoice;
use crate::inbox::{prompt, refusal, Heard, Inbox, Item};
use crate::output;

/// One line typed in answer to a tool call.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Yes(Scope),
    /// Always, with the suggested constraints.
    Constrained,
    Edit,
    No(Option<String>),
}

/// Reads an answer: `y`/`yes`, `c`, `a`, `k`, `e`/`edit`, `n REASON`/`no: REASON`; the rest
/// is a plain no.
fn parse_reply(line: Option<&str>) -> Reply {
    let Some(line) = line.map(str::trim) else {
        return Reply::No(None);
    };
    match line.to_ascii_lowercase().as_str() {
        "y" | "yes" => Reply::Yes(Scope::Once),
        "c" | "conversation" => Reply::Yes(Scope::Conversation),
        "a" | "always" => Reply::Yes(Scope::Always),
        "k" | "keep" => Reply::Constrained,
        "e" | "edit" => Reply::Edit,
        _ => Reply::No(refusal(line).flatten()),
    }
}

fn show(req: &ApprovalRequest, arguments: &Value, edited: bool, keep: &[Condition]) {
    let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
    // The tool's name is the server's word inside ours: as is only when it keeps to the
    // characters MCP recommends, else escaped, quoted and flagged (RN-04).
    let tool = output::name(&req.tool);
    if edited {
        errln!("\nRun {tool} on {} with your edit:", req.server);
    } else {
        // Who asks: the model, or the agent whose model asks and for whom (issue 15).
        let who = match (req.origin.app(), req.origin.acting()) {
            (Some(app), _) => output::inert(&app.describe()),
            (None, Some(a)) => format!("The model of {},", a.describe()),
            (None, None) => "The model".to_owned(),
        };
        errln!("\n{who} wants to run {tool} on {} with:", req.server);
    }
    if let Some(flag) = output::name_flag(&req.tool) {
        errln!("{flag}");
    }
    errln!("{}", output::inert(&args));
    if !req.hints.is_empty() {
        errln!(
            "(the server says: {})",
            output::inert(&req.hints.join(", "))
        );
    }
    // The host appends a line per placeholder it put back (issue 16); each gets its own line
    // here. Only lines it wrote that way: a line break elsewhere stays escaped.
    let (why, restored) = split_restored(&req.reason);
    errln!("(asked because {})", output::inert(why));
    for line in restored {
        errln!("{}", output::inert(line));
    }
    if let Some(w) = &req.warning {
        errln!("WARNING: {}", output::inert(w));
    }
    if keep.is_empty() {
        prompt(
            "Run it? [y/N/e(dit)/c(onversation)/a(lways)] (or \"n REASON\" to tell the model why) ",
        );
    } else {
        errln!("k allows it always, but only while:");
        for c in keep {
            errln!("  - {}", output::inert(&describe(c)));
        }
        prompt("Run it? [y/N/e(dit)/c(onversation)/a(lways)/k(eep to these arguments)] (or \"n REASON\" to tell the model why) ");
    }
}

/// The reason, and the host's "The model wrote [REDACTED_…]" lines after it.
fn split_restored(reason: &str) -> (&str, Vec<&str>) {
    let marker = format!("\n{}", switchboard_core::outbound::RESTORED_LINE);
    match reason.find(&marker) {
        Some(at) => (
            &reason[..at],
            reason[at + 1..]
                .split('\n')
                .filter(|l| !l.is_empty())
                .collect(),
        ),
        None => (reason, Vec::new()),
    }
}

/// Asks about one tool call until it is answered.
async fn answer_approval(inbox: &mut Inbox, req: &ApprovalRequest) {
    let home = std::env::home_dir();
    let mut arguments = req.arguments.clone();
    let mut edited: Option<Map<String, Value>> = None;
    loop {
        let keep = match &arguments {
            Value::Object(map) => suggest_constraints(map, home.as_deref()),
            _ => Vec::new(),
        };
        show(req, &arguments, edited.is_some(), &keep);
        let heard = inbox.read(req.nonce.as_str()).await;
        if let Heard::Gone = heard {
            errln!(
                "\n(withdrawn: the call to {} is no longer waiting)",
                output::name(&req.tool)
            );
            return;
        }
        let answer = match parse_reply(heard.text()) {
            Reply::Yes(scope) => Answer::Allow {
                arguments: edited.clone(),
                scope,
                constraints: Vec::new(),
            },
            Reply::Constrained if keep.is_empty() => {
                errln!("there is nothing to keep these arguments to; answer y, c or a instead");
                continue;
            }
            Reply::Constrained => Answer::Allow {
                arguments: edited.clone(),
                scope: Scope::Always,
                constraints: keep,
            },
            Reply::No(reason) => Answer::Deny { reason },
            Reply::Edit => {
                let current = arguments.clone();
                let result = tokio::task::spawn_blocking(move || {
                    crate::editor::edit_json::<Map<String, Value>>(
                        &current.as_object().cloned().unwrap_or_default(),
                        "arguments",
                    )
                })
                .await;
                match result {
                    Ok(Ok(map)) => {
                        arguments = Value::Object(map.clone());
                        edited = Some(map);
                    }
                    Ok(Err(why)) => errln!("{why}; the arguments are unchanged"),
                    Err(e) => errln!("the editor failed: {e}"),
                }
                continue;
            }
        };
        let said = match &answer {
            Answer::Allow {
                scope: Scope::Always,
                constraints,
                ..
            } if !constraints.is_empty() => {
                "allowed, and always allowed while the arguments stay as listed"
            }
            Answer::Allow { .. } => "allowed",
            Answer::Deny { .. } => "denied",
        };
        let allow = answer.is_allow();
        match inbox.host.answer_approval(req.nonce.as_str(), answer).await {
            Ok(()) => {
                errln!("{said}");
                return;
            }
            Err(e) if allow && edited.is_some() => {
                // Still pending: the person can fix the edit or refuse.
                errln!("not run: {}", output::inert(&e.to_string()));
            }
            Err(e) => {
                // Withdrawn meanwhile (the turn was stopped).
                errln!("{}", output::inert(&e.to_string()));
                return;
            }
        }
    }
}

/// How the policy's questions about requests are answered (servers' own questions are always
/// read from stdin, where the end of input means no).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Shown and answered line by line (a terminal, or a chat whose answers are piped in).
    Prompt,
    /// Allowed once without a prompt: the person approved on the command line (`--yes`).
    AllowOnce,
    /// Refused: no terminal to ask on and no approval on the command line.
    Refuse,
}

/// What the person is told when a request is refused for want of a terminal.
const NO_TERMINAL: &str = "the policy asks about this request and there is no terminal to ask \
on; run it on a terminal, or pass --yes to approve it";

/// Answers the policy's questions about one request without reading stdin.
async fn settle_unasked(host: &Host, req: &ApprovalRequest, mode: ApprovalMode) {
    let answer = match mode {
        ApprovalMode::AllowOnce => Answer::Allow {
            arguments: None,
            scope: Scope::Once,
            constraints: Vec::new(),
        },
        _ => Answer::Deny {
            reason: Some(NO_TERMINAL.into()),
        },
    };
    if let Err(e) = host.answer_approval(req.nonce.as_str(), answer).await {
        errln!("{}", output::inert(&e.to_string()));
    } else if mode == ApprovalMode::AllowOnce {
        errln!(
            "approved on the command line (--yes): {} on {}",
            output::name(&req.tool),
            req.server
        );
    } else {
        errln!("refused: {NO_TERMINAL}");
    }
}

/// Answers tool calls and questions from stdin until `done` fires.
pub fn spawn_approver(
    host: Host,
    done: CancellationToken,
    sampling: SamplingChoice,
    mode: ApprovalMode,
) -> tokio::task::JoinHandle<()> {
    // Subscribed before this returns, as the caller expects: nothing announced after is missed.
    let mut inbox = Inbox::new(host, done.clone(), sampling);
    tokio::spawn(async move {
        let mut asked: HashSet<String> = HashSet::new();
        loop {
            while let Some(item) = inbox.next_item(&asked) {
                if done.is_cancelled() {
                    return;
                }
                match item {
                    Item::Approval(req) => {
                        asked.insert(req.nonce.to_string());
                        match mode {
                            ApprovalMode::Prompt => answer_approval(&mut inbox, &req).await,
                            _ => settle_unasked(&inbox.host, &req, mode).await,
                        }
                    }
                    Item::Question(q) => {
                        asked.insert(q.nonce.to_string());
                        crate::questions::answer(&mut inbox, &q).await;
                    }
                }
            }
            if !inbox.changed().await {
                return;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_put_back_lines_come_apart_from_the_reason() {
        let reason = "no rule matches a model's call\nThe model wrote [REDACTED_EMAIL_1] (in `to`); \
                      Switchboard put back the real value before running.\nThe model wrote \
                      [REDACTED_KEY_1] (in `auth`); Switchboard put back the real value before running.";
        let (why, lines) = split_restored(reason);
        assert_eq!(why, "no rule matches a model's call");
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("The model wrote [REDACTED_EMAIL_1] (in `to`)"));
        assert!(lines[1].starts_with("The model wrote [REDACTED_KEY_1]"));
        // Any other line break is not split off (it is printed escaped).
        assert_eq!(split_restored("a\nb"), ("a\nb", Vec::new()));
    }

    #[test]
    fn replies() {
        assert_eq!(parse_reply(Some("y\n")), Reply::Yes(Scope::Once));
        assert_eq!(parse_reply(Some(" YES ")), Reply::Yes(Scope::Once));
        assert_eq!(parse_reply(Some("c")), Reply::Yes(Scope::Conversation));
        assert_eq!(parse_reply(Some("always")), Reply::Yes(Scope::Always));
        assert_eq!(parse_reply(Some("k")), Reply::Constrained);
        assert_eq!(parse_reply(Some("e")), Reply::Edit);
        assert_eq!(parse_reply(Some("")), Reply::No(None));
        assert_eq!(parse_reply(None), Reply::No(None));
        assert_eq!(parse_reply(Some("n")), Reply::No(None));
        assert_eq!(
            parse_reply(Some("yep")),
            Reply::No(None),
            "only y/yes allow"
        );
        assert_eq!(
            parse_reply(Some("n Not My Home dir")),
            Reply::No(Some("Not My Home dir".into()))
        );
        assert_eq!(
            parse_reply(Some("No: too broad")),
            Reply::No(Some("too broad".into()))
        );
        assert_eq!(parse_reply(Some("nonsense")), Reply::No(None));
    }
}

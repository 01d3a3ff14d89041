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
use std::io::{BufRead, Write};

use serde_json::{Map, Value};
use switchboard_core::approval::questions::QuestionRequest;
use switchboard_core::approval::suggest::{describe, suggest_constraints};
use switchboard_core::approval::{Answer, ApprovalRequest, Condition, Scope};
use switchboard_core::events::HostEvent;
use switchboard_core::host::Host;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::output;

/// Which model answers a server's sampling request when the person says yes: in a chat, the
/// conversation's; for a tool run, `--sampling-provider`; else the only configured provider,
/// else the person is asked.
#[derive(Clone, Debug, Default)]
pub struct SamplingChoice {
    /// The provider's name.
    pub provider: Option<String>,
    /// The model; the provider's default when absent.
    pub model: Option<String>,
}

impl SamplingChoice {
    /// Reads `PROVIDER` or `PROVIDER:MODEL`.
    pub fn parse(text: Option<&str>) -> Self {
        match text.map(str::trim).filter(|t| !t.is_empty()) {
            None => Self::default(),
            Some(t) => match t.split_once(':') {
                Some((p, m)) => Self {
                    provider: Some(p.to_owned()),
                    model: Some(m.to_owned()).filter(|m| !m.is_empty()),
                },
                None => Self {
                    provider: Some(t.to_owned()),
                    model: None,
                },
            },
        }
    }
}

/// One line typed in answer to a tool call.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Yes(Scope),
    /// Always, with the suggested constraints.
    Constrained,
    Edit,
    No(Option<String>),
}

/// `n REASON`, `no: REASON`, `n`: a refusal and the reason the person gave, if any.
pub(crate) fn refusal(line: &str) -> Option<Option<String>> {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    if lower == "n" || lower == "no" {
        return Some(None);
    }
    for word in ["no", "n"] {
        if let Some(rest) = lower.strip_prefix(word) {
            if rest.starts_with([' ', ':', ',']) {
                // Cut from the original line, keeping the person's capitals.
                let reason = line[word.len()..]
                    .trim_start_matches([' ', ':', ','])
                    .trim();
                return Some((!reason.is_empty()).then(|| reason.to_owned()));
            }
        }
    }
    None
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

/// Lines from stdin, read only on demand.
struct Lines {
    want: std::sync::mpsc::Sender<()>,
    got: mpsc::UnboundedReceiver<Option<String>>,
    /// A line was asked for and has not arrived (its reader gave up waiting); the next read
    /// takes it instead of asking for another.
    waiting: bool,
    eof: bool,
}

impl Lines {
    fn spawn() -> Self {
        let (want, wanted) = std::sync::mpsc::channel::<()>();
        let (tx, got) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            while wanted.recv().is_ok() {
                let mut line = String::new();
                let read = match stdin.lock().read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                };
                let end = read.is_none();
                if tx.send(read).is_err() || end {
                    return;
                }
            }
        });
        Self {
            want,
            got,
            waiting: false,
            eof: false,
        }
    }

    /// The next line; cancel-safe (a line asked for and not taken waits for the next call).
    async fn next(&mut self) -> Option<String> {
        if self.eof {
            return None;
        }
        if !self.waiting {
            if self.want.send(()).is_err() {
                self.eof = true;
                return None;
            }
            self.waiting = true;
        }
        let line = self.got.recv().await.flatten();
        self.waiting = false;
        self.eof = line.is_none();
        line
    }
}

/// What came of waiting for a line.
#[derive(Debug)]
pub(crate) enum Heard {
    /// A line, without its line break.
    Said(String),
    /// The end of input (or stdin failed): the safe default answer.
    End,
    /// The item was withdrawn (or the run ended) while waiting.
    Gone,
}

impl Heard {
    /// The line, or `None` at the end of input.
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Self::Said(s) => Some(s),
            _ => None,
        }
    }
}

/// The terminal's inbox of tool calls and questions.
pub(crate) struct Inbox {
    pub(crate) host: Host,
    lines: Lines,
    events: broadcast::Receiver<HostEvent>,
    done: CancellationToken,
    pub(crate) sampling: SamplingChoice,
}

/// One waiting item.
enum Item {
    Approval(ApprovalRequest),
    Question(QuestionRequest),
}

impl Inbox {
    /// Whether the item named by `nonce` still waits.
    fn waiting(host: &Host, nonce: &str) -> bool {
        host.pending_questions()
            .iter()
            .any(|q| q.nonce.as_str() == nonce)
            || host
                .pending_approvals()
                .iter()
                .any(|r| r.nonce.as_str() == nonce)
    }

    /// Waits for a line in answer to the item named by `nonce`, unless it is withdrawn first.
    pub(crate) async fn read(&mut self, nonce: &str) -> Heard {
        let Self {
            host,
            lines,
            events,
            done,
            ..
        } = self;
        let gone = async {
            loop {
                if !Self::waiting(host, nonce) {
                    return;
                }
                tokio::select! {
                    () = done.cancelled() => return,
                    ev = events.recv() => {
                        if let Err(broadcast::error::RecvError::Closed) = ev {
                            std::future::pending::<()>().await;
                        }
                    }
                }
            }
        };
        tokio::select! {
            biased;
            line = lines.next() => match line {
                Some(l) => Heard::Said(l.trim_end_matches(['\n', '\r']).to_owned()),
                None => Heard::End,
            },
            () = gone => Heard::Gone,
        }
    }

    /// Whether a line was asked for and not yet typed (a hidden-input prompt must not race it).
    pub(crate) fn reading(&self) -> bool {
        self.lines.waiting
    }

    /// The oldest item not asked about yet.
    fn next_item(&self, asked: &HashSet<String>) -> Option<Item> {
        let approvals = self
            .host
            .pending_approvals()
            .into_iter()
            .filter(|r| !asked.contains(r.nonce.as_str()))
            .map(|r| (r.requested_at_ms, Item::Approval(r)));
        let questions = self
            .host
            .pending_questions()
            .into_iter()
            .filter(|q| !asked.contains(q.nonce.as_str()))
            .map(|q| (q.asked_at_ms, Item::Question(q)));
        approvals
            .chain(questions)
            .min_by_key(|(at, _)| *at)
            .map(|(_, item)| item)
    }
}

/// Writes a prompt on stderr and flushes it.
pub(crate) fn prompt(text: &str) {
    let mut err = std::io::stderr();
    let _ = write!(err, "{text}");
    let _ = err.flush();
}

fn show(req: &ApprovalRequest, arguments: &Value, edited: bool, keep: &[Condition]) {
    let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
    // The tool's name is the server's word inside ours: as is only when it keeps to the
    // characters MCP recommends, else escaped, quoted and flagged (RN-04).
    let tool = output::name(&req.tool);
    if edited {
        errln!("\nRun {tool} on {} with your edit:", req.server);
    } else {
        errln!("\nThe model wants to run {tool} on {} with:", req.server);
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
    errln!("(asked because {})", output::inert(&req.reason));
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
    let events = host.subscribe();
    tokio::spawn(async move {
        let mut inbox = Inbox {
            host,
            lines: Lines::spawn(),
            events,
            done: done.clone(),
            sampling,
        };
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
            tokio::select! {
                () = done.cancelled() => return,
                ev = inbox.events.recv() => {
                    if let Err(broadcast::error::RecvError::Closed) = ev {
                        return;
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn sampling_choice() {
        let c = SamplingChoice::parse(Some("work:gpt-x"));
        assert_eq!(
            (c.provider.as_deref(), c.model.as_deref()),
            (Some("work"), Some("gpt-x"))
        );
        let c = SamplingChoice::parse(Some("work"));
        assert_eq!((c.provider.as_deref(), c.model), (Some("work"), None));
        assert!(SamplingChoice::parse(Some(" ")).provider.is_none());
        assert!(SamplingChoice::parse(None).provider.is_none());
    }
}

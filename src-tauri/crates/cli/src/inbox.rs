//! The terminal's inbox: the items waiting for a person (the policy's questions about tool
//! calls, the servers' and host's own questions), stdin read one line at a time on demand, and
//! the small pieces of a reply both kinds of answer share.
//!
//! It sits below both `approve` (tool calls, and the loop that walks the inbox) and
//! `questions` (elicitation, sampling, result review), which used each other's pieces until
//! this file held them: the CLI's modules form no import cycle.
//!
//! Stdin is read one line at a time, only when an answer is wanted, so an editor started in
//! between has the terminal to itself, and the end of input can only ever mean no.

use std::collections::HashSet;
use std::io::{BufRead, Write};

use switchboard_core::approval::questions::QuestionRequest;
use switchboard_core::approval::ApprovalRequest;
use switchboard_core::events::HostEvent;
use switchboard_core::host::Host;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

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
pub(crate) enum Item {
    /// A tool call (or another request) the policy asks about.
    Approval(ApprovalRequest),
    /// A server's or the host's question.
    Question(QuestionRequest),
}

impl Inbox {
    /// An inbox reading stdin for `host`'s waiting items until `done` fires.
    pub(crate) fn new(host: Host, done: CancellationToken, sampling: SamplingChoice) -> Self {
        let events = host.subscribe();
        Self {
            host,
            lines: Lines::spawn(),
            events,
            done,
            sampling,
        }
    }

    /// Waits until something changes (an item arrives or goes); `false` once `done` fired or
    /// the host is gone, when the inbox should stop.
    pub(crate) async fn changed(&mut self) -> bool {
        tokio::select! {
            () = self.done.cancelled() => false,
            ev = self.events.recv() => !matches!(ev, Err(broadcast::error::RecvError::Closed)),
        }
    }

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
    pub(crate) fn next_item(&self, asked: &HashSet<String>) -> Option<Item> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_keep_the_persons_reason() {
        assert_eq!(refusal("n"), Some(None));
        assert_eq!(refusal(" NO "), Some(None));
        assert_eq!(
            refusal("no: Not My Home dir"),
            Some(Some("Not My Home dir".into()))
        );
        assert_eq!(refusal("n, "), Some(None));
        assert_eq!(refusal("nonsense"), None);
        assert_eq!(refusal("y"), None);
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

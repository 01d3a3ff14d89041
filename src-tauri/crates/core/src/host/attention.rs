//! What waits for the person (approvals and servers' questions), decided here so the desktop
//! shell only shows it: the count for the window title and the tray, which requests are new
//! since it last looked (each is announced once), and the words of a desktop notification.
//!
//! Server names, tool names and URIs are server-chosen text: a notification carries them
//! escaped and cut short (a newline or a megabyte "tool name" must not shape the message), and
//! escaped again for the notification markup some daemons render (`<b>`, `&amp;`). Nonces
//! never leave this module's callers: notifications say who asks and what, not how to answer.

use std::collections::HashSet;

use crate::approval::policy::RequestKind;
use crate::approval::questions::Question;
use crate::escape::short_for_display;
use crate::ids::ServerId;

use super::Host;

/// The longest server or tool name a notification quotes.
const NAME_MAX: usize = 64;

/// What kind of request waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// A tool call, read or prompt for the person to allow or deny.
    Approval,
    /// A server's question (a form, a link, a sampling request, a result to review).
    Question,
}

/// One request waiting for the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// Identifies the request between two looks; never shown.
    key: String,
    /// Approval or question.
    pub kind: WaitKind,
    /// The server that asks.
    pub server: ServerId,
    /// What it asks, as a short phrase ("wants to run echo").
    pub what: String,
    /// The agent whose model asks, and for whom ("agent researcher, for agent planner"); `None`
    /// for a request of the person's own chat or of a server. Agent names are validated names.
    pub asker: Option<String>,
}

/// Everything that waits, oldest first within each kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attention {
    /// The waiting requests.
    pub waiting: Vec<Waiter>,
}

/// A desktop notification's text, plain and already escaped for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The headline.
    pub summary: String,
    /// The line under it.
    pub body: String,
}

impl Attention {
    /// How many requests wait.
    pub fn count(&self) -> usize {
        self.waiting.len()
    }

    /// The window title: the app's name, and how many wait when any do.
    pub fn title(&self) -> String {
        match self.count() {
            0 => "Switchboard".to_owned(),
            n => format!("Switchboard — {n} waiting"),
        }
    }

    /// The tray's line: how many wait, in words.
    pub fn status_line(&self) -> String {
        match self.count() {
            0 => "Nothing waiting".to_owned(),
            1 => "1 request waiting".to_owned(),
            n => format!("{n} requests waiting"),
        }
    }
}

impl Waiter {
    /// The notification for this request.
    pub fn notice(&self) -> Notice {
        let server = short_for_display(self.server.as_str(), NAME_MAX);
        let summary = match self.kind {
            WaitKind::Approval => format!("{server} needs your approval"),
            WaitKind::Question => format!("{server} asks you something"),
        };
        let by = self
            .asker
            .as_ref()
            .map(|a| format!(", asked by {a}"))
            .unwrap_or_default();
        Notice {
            summary,
            body: format!(
                "{server} {}{by}. Click to review it in Switchboard.",
                self.what
            ),
        }
    }
}

impl Notice {
    /// The text with `&`, `<` and `>` escaped, for daemons that render body markup.
    pub fn markup_escaped(s: &str) -> String {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    }
}

/// Remembers which requests were already announced, so each is notified once.
#[derive(Debug, Default)]
pub struct Announced {
    seen: HashSet<String>,
}

impl Announced {
    /// The requests in `now` not seen before; forgets the ones no longer waiting.
    pub fn fresh<'a>(&mut self, now: &'a Attention) -> Vec<&'a Waiter> {
        let keys: HashSet<&str> = now.waiting.iter().map(|w| w.key.as_str()).collect();
        self.seen.retain(|k| keys.contains(k.as_str()));
        now.waiting
            .iter()
            .filter(|w| self.seen.insert(w.key.clone()))
            .collect()
    }
}

fn name(s: &str) -> String {
    short_for_display(s, NAME_MAX)
}

fn approval_what(kind: RequestKind, tool: &str) -> String {
    match kind {
        RequestKind::Tool => format!("wants to run {}", name(tool)),
        RequestKind::Resource => format!("wants to read {}", name(tool)),
        RequestKind::Prompt | RequestKind::Completion => {
            format!("wants to use the prompt {}", name(tool))
        }
        RequestKind::Pipeline => format!("wants to run the pipeline {}", name(tool)),
    }
}

fn question_what(q: &Question) -> String {
    match q {
        Question::Form(_) => "asks you to fill in a form".to_owned(),
        Question::Url(_) => "asks you to open a link".to_owned(),
        Question::Sampling(_) => "asks to use your model".to_owned(),
        Question::SamplingResponse(_) => "wants the model's answer sent back".to_owned(),
        Question::ToolResult(_) => "has a tool result for you to review".to_owned(),
    }
}

impl Host {
    /// Everything waiting for the person now: approvals first, then questions.
    pub fn attention(&self) -> Attention {
        let approvals = self.pending_approvals().into_iter().map(|a| Waiter {
            key: format!("a:{}", a.nonce),
            kind: WaitKind::Approval,
            what: approval_what(a.kind, &a.tool),
            asker: a.origin.acting().map(|x| x.describe()),
            server: a.server,
        });
        let questions = self.pending_questions().into_iter().map(|q| Waiter {
            key: format!("q:{}", q.nonce),
            kind: WaitKind::Question,
            what: question_what(&q.question),
            asker: None,
            server: q.server,
        });
        Attention {
            waiting: approvals.chain(questions).collect(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code: a panic is a failed test
mod tests {
    use super::*;

    fn waiter(key: &str, server: &str, what: &str) -> Waiter {
        Waiter {
            key: key.into(),
            kind: WaitKind::Approval,
            server: ServerId::new(server).unwrap(),
            what: what.into(),
            asker: None,
        }
    }

    #[test]
    fn the_title_counts_what_waits() {
        let mut a = Attention::default();
        assert_eq!(a.title(), "Switchboard");
        assert_eq!(a.status_line(), "Nothing waiting");
        a.waiting.push(waiter("1", "s", "wants to run x"));
        assert_eq!(a.title(), "Switchboard — 1 waiting");
        assert_eq!(a.status_line(), "1 request waiting");
        a.waiting.push(waiter("2", "s", "wants to run y"));
        assert_eq!(a.title(), "Switchboard — 2 waiting");
        assert_eq!(a.status_line(), "2 requests waiting");
    }

    #[test]
    fn each_request_is_announced_once() {
        let mut seen = Announced::default();
        let one = Attention {
            waiting: vec![waiter("1", "s", "x")],
        };
        assert_eq!(seen.fresh(&one).len(), 1);
        assert!(seen.fresh(&one).is_empty());
        let two = Attention {
            waiting: vec![waiter("1", "s", "x"), waiter("2", "s", "y")],
        };
        let fresh = seen.fresh(&two);
        assert_eq!(fresh.len(), 1);
        assert_eq!(fresh[0].key, "2");
        // Answered, then a new request under a new nonce: announced.
        let later = Attention {
            waiting: vec![waiter("3", "s", "z")],
        };
        assert_eq!(seen.fresh(&later).len(), 1);
        assert_eq!(seen.seen.len(), 1, "answered requests are forgotten");
    }

    #[test]
    fn a_notice_names_the_server_and_the_tool_escaped() {
        let w = Waiter {
            key: "k".into(),
            kind: WaitKind::Approval,
            server: ServerId::new("everything").unwrap(),
            what: approval_what(RequestKind::Tool, "echo\nFAKE: all approved"),
            asker: None,
        };
        let n = w.notice();
        assert_eq!(n.summary, "everything needs your approval");
        assert!(
            n.body.starts_with("everything wants to run echo"),
            "{}",
            n.body
        );
        assert!(!n.body.contains('\n'), "{}", n.body);
        let long = approval_what(RequestKind::Tool, &"t".repeat(10_000));
        assert!(long.len() < 200, "{long}");
        assert_eq!(
            Notice::markup_escaped("<b>a & b</b>"),
            "&lt;b&gt;a &amp; b&lt;/b&gt;"
        );
    }

    #[test]
    fn a_notice_names_the_agent_that_asks_and_for_whom() {
        let w = Waiter {
            key: "k".into(),
            kind: WaitKind::Approval,
            server: ServerId::new("fs").unwrap(),
            what: approval_what(RequestKind::Tool, "write_file"),
            asker: Some("agent researcher, for agent planner".into()),
        };
        assert_eq!(
            w.notice().body,
            "fs wants to run write_file, asked by agent researcher, for agent planner. \
             Click to review it in Switchboard."
        );
    }
}

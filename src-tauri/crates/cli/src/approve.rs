//! Answering the model's tool calls on the terminal during `switchboard chat`.
//!
//! Each request is shown on stderr with its full arguments and why it is asked (AP-01), and
//! answered by one line from stdin: `y` runs it; `c` runs it and allows the tool for the rest
//! of the conversation, `a` always (grants, AP-02); `e` opens the arguments in
//! `$VISUAL`/`$EDITOR` and asks again with the edited ones; `n REASON` refuses and tells the
//! model why; anything else, or the end of input, refuses. Stdin is read one line at a time, only when an answer is wanted, so an
//! editor started in between has the terminal to itself.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Map, Value};
use switchboard_core::approval::{Answer, ApprovalRequest, Scope};
use switchboard_core::events::HostEvent;
use switchboard_core::host::Host;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::output;

/// One line typed in answer to a request.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Yes(Scope),
    Edit,
    No(Option<String>),
}

/// Reads an answer: `y`/`yes`, `e`/`edit`, `n REASON`/`no: REASON`; the rest is a plain no.
fn parse_reply(line: Option<&str>) -> Reply {
    let Some(line) = line.map(str::trim) else {
        return Reply::No(None);
    };
    let lower = line.to_ascii_lowercase();
    match lower.as_str() {
        "y" | "yes" => return Reply::Yes(Scope::Once),
        "c" | "conversation" => return Reply::Yes(Scope::Conversation),
        "a" | "always" => return Reply::Yes(Scope::Always),
        "e" | "edit" => return Reply::Edit,
        _ => {}
    }
    for word in ["no", "n"] {
        if let Some(rest) = lower.strip_prefix(word) {
            if rest.starts_with([' ', ':', ',']) {
                // Cut from the original line, keeping the person's capitals.
                let reason = line[word.len()..]
                    .trim_start_matches([' ', ':', ','])
                    .trim();
                return Reply::No((!reason.is_empty()).then(|| reason.to_owned()));
            }
        }
    }
    Reply::No(None)
}

/// Lines from stdin, read only on demand.
struct Lines {
    want: std::sync::mpsc::Sender<()>,
    got: mpsc::UnboundedReceiver<Option<String>>,
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
            eof: false,
        }
    }

    async fn next(&mut self) -> Option<String> {
        if self.eof || self.want.send(()).is_err() {
            self.eof = true;
            return None;
        }
        let line = self.got.recv().await.flatten();
        self.eof = line.is_none();
        line
    }
}

fn show(err: &mut impl Write, req: &ApprovalRequest, arguments: &Value, edited: bool) {
    let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
    let _ = if edited {
        writeln!(err, "\nRun {} on {} with your edit:", req.tool, req.server)
    } else {
        writeln!(
            err,
            "\nThe model wants to run {} on {} with:",
            req.tool, req.server
        )
    };
    let _ = writeln!(err, "{}", output::inert(&args));
    if !req.hints.is_empty() {
        let _ = writeln!(err, "(the server says: {})", req.hints.join(", "));
    }
    let _ = writeln!(err, "(asked because {})", output::inert(&req.reason));
    if let Some(w) = &req.warning {
        let _ = writeln!(err, "WARNING: {}", output::inert(w));
    }
    let _ = write!(
        err,
        "Run it? [y/N/e(dit)/c(onversation)/a(lways)] (or \"n REASON\" to tell the model why) "
    );
    let _ = err.flush();
}

/// Opens `arguments` in the person's editor and reads the result back as a JSON object.
fn edit(arguments: &Value) -> Result<Map<String, Value>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("could not make a temporary file: {e}"))?;
    let path = dir.path().join("arguments.json");
    let text = serde_json::to_string_pretty(arguments).unwrap_or_default();
    std::fs::write(&path, text + "\n").map_err(|e| format!("could not write {path:?}: {e}"))?;
    run_editor(&path)?;
    let edited =
        std::fs::read_to_string(&path).map_err(|e| format!("could not read {path:?}: {e}"))?;
    match serde_json::from_str::<Value>(&edited) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("the arguments must be a JSON object".into()),
        Err(e) => Err(format!("the edited arguments are not JSON: {e}")),
    }
}

/// Runs `$VISUAL`, else `$EDITOR`, else `vi`, through `sh` so a command with flags works.
fn run_editor(path: &Path) -> Result<(), String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("switchboard-edit")
        .arg(path)
        .status()
        .map_err(|e| format!("could not start the editor {editor:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor {editor:?} exited with {status}"))
    }
}

/// Asks about one request until it is answered.
async fn answer_one(host: &Host, lines: &mut Lines, req: &ApprovalRequest) {
    let mut err = std::io::stderr();
    let mut arguments = req.arguments.clone();
    let mut edited: Option<Map<String, Value>> = None;
    loop {
        show(&mut err, req, &arguments, edited.is_some());
        let line = lines.next().await;
        let answer = match parse_reply(line.as_deref()) {
            Reply::Yes(scope) => Answer::Allow {
                arguments: edited.clone(),
                scope,
                constraints: Vec::new(),
            },
            Reply::No(reason) => Answer::Deny { reason },
            Reply::Edit => {
                let current = arguments.clone();
                match tokio::task::spawn_blocking(move || edit(&current)).await {
                    Ok(Ok(map)) => {
                        arguments = Value::Object(map.clone());
                        edited = Some(map);
                    }
                    Ok(Err(why)) => {
                        let _ = writeln!(err, "{why}; the arguments are unchanged");
                    }
                    Err(e) => {
                        let _ = writeln!(err, "the editor failed: {e}");
                    }
                }
                continue;
            }
        };
        let allow = answer.is_allow();
        match host.answer_approval(req.nonce.as_str(), answer).await {
            Ok(()) => {
                let _ = writeln!(err, "{}", if allow { "allowed" } else { "denied" });
                return;
            }
            Err(e) if allow && edited.is_some() => {
                // Still pending: the person can fix the edit or refuse.
                let _ = writeln!(err, "not run: {}", output::inert(&e.to_string()));
            }
            Err(e) => {
                // Withdrawn meanwhile (the turn was stopped).
                let _ = writeln!(err, "{}", output::inert(&e.to_string()));
                return;
            }
        }
    }
}

/// Answers approval requests from stdin until `done` fires.
pub fn spawn_approver(host: Host, done: CancellationToken) -> tokio::task::JoinHandle<()> {
    let mut events = host.subscribe();
    tokio::spawn(async move {
        let mut lines = Lines::spawn();
        let mut asked: HashSet<String> = HashSet::new();
        loop {
            for req in host.pending_approvals() {
                if asked.insert(req.nonce.to_string()) {
                    answer_one(&host, &mut lines, &req).await;
                }
            }
            tokio::select! {
                () = done.cancelled() => return,
                ev = events.recv() => match ev {
                    Ok(HostEvent::ApprovalsChanged) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Ok(_) => {}
                    Err(_) => return,
                },
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

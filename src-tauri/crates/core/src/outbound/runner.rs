//! [`Restoring`]: a [`ToolRunner`] that puts the real values back into a call's arguments
//! before the call reaches the governed seam.
//!
//! The placeholders replaced travel to the approval prompt as a task-local note
//! ([`restored_in_this_call`]): the runner seam (`chat::ToolRunner::run`) has no field for
//! it, and the call's future is polled inside the scope the note is set in, down to the
//! seam's `Ask`. With each placeholder travel its kind, the places its value came from (a
//! tool's result named by the tool, resolved here to its server), the value's digest and the
//! value as a [`crate::redact::Secret`], for the seam to decide whether the put-back crosses
//! origins and to keep the value out of the audit log (RD-01, `host::putback`). What the
//! prompt's reason says names placeholders only.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::provider::Session;
use super::{Restored, Source};
use crate::chat::{ToolCall, ToolError, ToolRunner};
use crate::escape::short_for_display;
use crate::ids::ToolRef;
use crate::llm::ToolSpec;
use crate::mcp::catalog::ToolResult;

tokio::task_local! {
    static RESTORED: Vec<Restored>;
}

/// The placeholders replaced by real values in the call being run, and where, when it came
/// from a model through [`Restoring`] (empty otherwise).
pub fn restored_in_this_call() -> Vec<Restored> {
    RESTORED.try_with(Clone::clone).unwrap_or_default()
}

/// The line that starts each restored placeholder's sentence in an approval prompt's reason
/// (the window finds these lines and shows them next to the real values).
pub const RESTORED_LINE: &str = "The model wrote ";

/// `reason` (why a person is asked) followed, on lines of their own, by one sentence per
/// placeholder put back in the call being asked about: "The model wrote `[REDACTED_EMAIL_1]`
/// (in `to`); Switchboard put back the real value before running." The prompt shows the real
/// values in the arguments; these lines say which placeholder each one replaced. Names and
/// argument paths only, never a value (a reason may end up in logs).
pub fn with_restored_note(reason: String) -> String {
    let restored = restored_in_this_call();
    if restored.is_empty() {
        return reason;
    }
    let mut by_placeholder: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in &restored {
        match by_placeholder.iter_mut().find(|(p, _)| *p == r.placeholder) {
            Some((_, at)) => at.push(&r.at),
            None => by_placeholder.push((&r.placeholder, vec![&r.at])),
        }
    }
    let mut out = reason;
    for (placeholder, at) in by_placeholder {
        // Argument names are the model's text: escaped (no line breaks, no backquotes), so
        // a name cannot forge a line of its own.
        let at: Vec<String> = at
            .iter()
            .map(|a| format!("`{}`", short_for_display(a, 80).replace('`', "'")))
            .collect();
        out.push_str(&format!(
            "\n{RESTORED_LINE}{placeholder} (in {}); Switchboard put back the real value \
             before running.",
            at.join(", ")
        ));
    }
    out
}

/// A turn's runner with placeholders restored in every call.
pub struct Restoring<R> {
    inner: R,
    session: Arc<Session>,
}

impl<R: ToolRunner> Restoring<R> {
    /// Restores `session`'s placeholders in the calls `inner` runs.
    pub fn new(inner: R, session: Arc<Session>) -> Self {
        Self { inner, session }
    }

    /// `arguments` restored, with each tool a value came from resolved to its server (a tool
    /// the runner no longer knows stays a name: no server is its origin).
    fn restore(&self, arguments: &Map<String, Value>) -> (Map<String, Value>, Vec<Restored>) {
        let (arguments, mut restored) = self.session.restore(arguments);
        for r in &mut restored {
            for source in &mut r.sources {
                if let Source::Tool(name) = source {
                    if let Some(tool) = self.inner.resolve(name) {
                        *source = Source::Server(tool.server);
                    }
                }
            }
            r.sources.sort();
            r.sources.dedup();
        }
        (arguments, restored)
    }
}

impl<R: ToolRunner> ToolRunner for Restoring<R> {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.specs()
    }

    fn resolve(&self, llm_name: &str) -> Option<ToolRef> {
        self.inner.resolve(llm_name)
    }

    fn run(&self, mut call: ToolCall) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        let restored;
        (call.arguments, restored) = self.restore(&call.arguments);
        Box::pin(RESTORED.scope(restored, self.inner.run(call)))
    }

    fn is_local(&self, llm_name: &str) -> bool {
        self.inner.is_local(llm_name)
    }

    fn calls_in(&self, llm_name: &str) -> usize {
        self.inner.calls_in(llm_name)
    }

    fn run_local(
        &self,
        llm_name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ToolResult, String>> {
        let (arguments, restored) = self.restore(&arguments);
        let call = self.inner.run_local(llm_name, arguments, cancel);
        Box::pin(RESTORED.scope(restored, call))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn restored(placeholder: &str, at: &str) -> Restored {
        Restored {
            placeholder: placeholder.into(),
            at: at.into(),
            kind: super::super::Kind::Email,
            sources: vec![Source::Message],
            digest: String::new(),
            value: crate::redact::Secret::new("a@example.org"),
        }
    }

    #[tokio::test]
    async fn each_placeholder_gets_a_line_and_a_name_cannot_forge_one() {
        let note = RESTORED
            .scope(
                vec![
                    restored("[REDACTED_EMAIL_1]", "to"),
                    restored("[REDACTED_EMAIL_1]", "cc[0]"),
                    restored(
                        "[REDACTED_API_KEY_1]",
                        "x\nThe model wrote `[REDACTED_JWT_1]`",
                    ),
                ],
                async { with_restored_note("no rule allows it".into()) },
            )
            .await;
        let lines: Vec<&str> = note.lines().collect();
        assert_eq!(lines.len(), 3, "{note}");
        assert_eq!(lines[0], "no rule allows it");
        assert_eq!(
            lines[1],
            "The model wrote [REDACTED_EMAIL_1] (in `to`, `cc[0]`); Switchboard put back the \
             real value before running."
        );
        assert!(lines[2].starts_with("The model wrote [REDACTED_API_KEY_1] (in `x"));
        assert!(!lines[2].contains("`[REDACTED_JWT_1]`"), "{note}");
        // Outside a restoring call, the reason is as it was.
        assert_eq!(with_restored_note("r".into()), "r");
    }
}

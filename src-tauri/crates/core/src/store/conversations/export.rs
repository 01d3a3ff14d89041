//! Export of one conversation as Markdown (to read) or JSON (to keep or import elsewhere).
//!
//! The renderers are pure functions of a [`ConversationExport`], so their output is tested
//! exactly; the `Store` methods only load one. Both show the visible branch (what the user
//! sees); superseded messages stay in the database. JSON carries everything of those messages:
//! parts, status, usage, and each tool call with its arguments, full (uncapped) result and
//! approvals. Markdown shows the transcript as the model saw it (tool results as in the
//! `ToolResult` parts) plus each call's server, tool, outcome and decisions; images are named,
//! not embedded. Nothing exported is a secret: these tables hold none (SE-01).
//!
//! All of it is outside text, so the Markdown keeps its structure whatever it holds: tool
//! results and arguments sit in fences longer than any backtick run inside; text parts stay
//! Markdown, but a code fence one leaves open (an answer cut off mid-block) is closed; and
//! single-line fields (titles, tool names, call ids, models, errors) are collapsed to one line,
//! so none can start a heading of its own.

use std::fmt::Write as _;

use serde::Serialize;

use super::{
    ApprovalDecision, Conversation, DecidedBy, MessageStatus, StoredMessage, StoredToolCall,
    UsageTotals,
};
use crate::ids::{ConversationId, MessageId};
use crate::store::{Store, StoreError};
use crate::transcript::{Part, ResultPart, Role, StopReason, Usage};

/// The version of the JSON export format (`"version"`); bumped on incompatible changes.
pub const EXPORT_FORMAT_VERSION: u32 = 1;

/// Everything an export shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversationExport {
    /// The conversation.
    pub conversation: Conversation,
    /// Its visible messages, in order.
    pub messages: Vec<StoredMessage>,
    /// The tool calls of those messages.
    pub tool_calls: Vec<StoredToolCall>,
    /// What it spent.
    pub usage: UsageTotals,
}

#[derive(Serialize)]
struct JsonExport<'a> {
    format: &'static str,
    version: u32,
    conversation: &'a Conversation,
    usage: &'a UsageTotals,
    messages: Vec<JsonMessage<'a>>,
}

#[derive(Serialize)]
struct JsonMessage<'a> {
    id: MessageId,
    seq: i64,
    role: Role,
    status: MessageStatus,
    provider: &'a Option<String>,
    model: &'a Option<String>,
    created_at_ms: i64,
    usage: &'a Option<Usage>,
    stop_reason: &'a Option<StopReason>,
    error: &'a Option<String>,
    parts: &'a [Part],
    tool_calls: Vec<&'a StoredToolCall>,
}

impl Store {
    /// Loads what an export of `id` shows.
    pub async fn export_conversation(
        &self,
        id: &ConversationId,
    ) -> Result<ConversationExport, StoreError> {
        let conversation = self
            .get_conversation(id)
            .await?
            .ok_or_else(|| super::not_found(id))?;
        let messages = self.load_messages(id).await?;
        let mut tool_calls = self.tool_calls(id).await?;
        tool_calls.retain(|t| messages.iter().any(|m| m.id == t.message));
        let usage = self.usage_totals(id).await?;
        Ok(ConversationExport {
            conversation,
            messages,
            tool_calls,
            usage,
        })
    }

    /// The conversation as Markdown ([`render_markdown`]).
    pub async fn export_markdown(&self, id: &ConversationId) -> Result<String, StoreError> {
        Ok(render_markdown(&self.export_conversation(id).await?))
    }

    /// The conversation as JSON ([`render_json`]).
    pub async fn export_json(&self, id: &ConversationId) -> Result<String, StoreError> {
        Ok(render_json(&self.export_conversation(id).await?))
    }
}

/// The export as pretty-printed JSON: `{format: "switchboard.conversation", version,
/// conversation, usage, messages: [{id, seq, role, status, provider, model, created_at_ms,
/// usage, stop_reason, error, parts, tool_calls: [{.., arguments, result, approvals}]}]}`.
pub fn render_json(export: &ConversationExport) -> String {
    let doc = JsonExport {
        format: "switchboard.conversation",
        version: EXPORT_FORMAT_VERSION,
        conversation: &export.conversation,
        usage: &export.usage,
        messages: export
            .messages
            .iter()
            .map(|m| JsonMessage {
                id: m.id,
                seq: m.seq,
                role: m.message.role,
                status: m.status,
                provider: &m.provider,
                model: &m.model,
                created_at_ms: m.created_at_ms,
                usage: &m.usage,
                stop_reason: &m.stop,
                error: &m.error,
                parts: &m.message.parts,
                tool_calls: export
                    .tool_calls
                    .iter()
                    .filter(|t| t.message == m.id)
                    .collect(),
            })
            .collect(),
    };
    // Serializing plain data with string keys cannot fail.
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The export as Markdown: a title, a short metadata list, then one `##` section per message
/// (blocks separated by one blank line).
pub fn render_markdown(export: &ConversationExport) -> String {
    let c = &export.conversation;
    let mut meta = format!(
        "- Conversation: `{}`\n- Created: {}",
        c.id,
        iso_utc(c.created_at_ms)
    );
    if let (Some(p), Some(m)) = (&c.provider, &c.model) {
        let _ = write!(meta, "\n- Model: {} / {}", one_line(p), one_line(m));
    }
    if let Some(from) = &c.forked_from_conversation {
        let _ = write!(meta, "\n- Forked from: `{from}`");
        if let Some(m) = c.forked_from_message {
            let _ = write!(meta, " at message {m}");
        }
    }
    let u = export.usage.total;
    let _ = write!(
        meta,
        "\n- Usage: {} input tokens ({} cached), {} output tokens",
        u.input_tokens, u.cached_input_tokens, u.output_tokens
    );
    let mut blocks = vec![format!("# {}", one_line(&c.title)), meta];
    for m in &export.messages {
        message_blocks(&mut blocks, m, &export.tool_calls);
    }
    let mut out = blocks.join("\n\n");
    out.push('\n');
    out
}

fn message_blocks(blocks: &mut Vec<String>, m: &StoredMessage, calls: &[StoredToolCall]) {
    let only_results = !m.message.parts.is_empty()
        && m.message
            .parts
            .iter()
            .all(|p| matches!(p, Part::ToolResult { .. }));
    let mut header = match (m.message.role, only_results) {
        (Role::User, true) => "## Tool results".to_owned(),
        (Role::User, false) => "## User".to_owned(),
        (Role::Assistant, _) => "## Assistant".to_owned(),
    };
    if let (Some(p), Some(model)) = (&m.provider, &m.model) {
        let _ = write!(header, " ({} / {})", one_line(p), one_line(model));
    }
    if m.status != MessageStatus::Complete {
        let _ = write!(header, " — {}", m.status.as_str());
    }
    blocks.push(header);
    if let Some(e) = &m.error {
        blocks.push(format!("> Error: {}", one_line(e)));
    }
    for part in &m.message.parts {
        match part {
            Part::Text { text } => blocks.push(close_open_fence(text.trim_end())),
            Part::Image { mime_type, .. } => {
                blocks.push(format!("*[image: {}]*", one_line(mime_type)));
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                blocks.push(format!(
                    "**Tool call `{}`** (`{}`)",
                    one_line(name),
                    one_line(id)
                ));
                if let Some(t) = calls.iter().find(|t| t.message == m.id && t.call_id == *id) {
                    blocks.push(call_outcome(t));
                }
                let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
                blocks.push(fenced("json", &args));
            }
            Part::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                blocks.push(format!(
                    "**Result of `{}`**{}",
                    one_line(call_id),
                    if *is_error { " (error)" } else { "" }
                ));
                for c in content {
                    blocks.push(match c {
                        ResultPart::Text { text } => fenced("text", text),
                        ResultPart::Image { mime_type, .. } => {
                            format!("*[image: {}]*", one_line(mime_type))
                        }
                    });
                }
            }
        }
    }
}

/// "Ran `tool` on server `s`: done; allowed by the user (reason)."
fn call_outcome(t: &StoredToolCall) -> String {
    let mut line = format!(
        "Ran `{}` on server `{}`: {}{}",
        one_line(&t.tool),
        t.server,
        t.status.as_str(),
        if t.is_error { " (error)" } else { "" }
    );
    for a in &t.approvals {
        let decision = match a.decision {
            ApprovalDecision::Allow => "allowed",
            ApprovalDecision::Deny => "denied",
        };
        let by = match &a.decided_by {
            DecidedBy::User => "the user".to_owned(),
            DecidedBy::Policy => "the policy".to_owned(),
            DecidedBy::Grant { grant_id } => format!("grant `{}`", one_line(grant_id)),
        };
        let _ = write!(line, "; {decision} by {by}");
        if let Some(r) = &a.reason {
            let _ = write!(line, " ({})", one_line(r));
        }
    }
    line.push('.');
    line
}

/// A code block whose fence is longer than any backtick run inside, so content cannot end it.
fn fenced(lang: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    // Trailing line ends go, `\r` too: a `\r` left before the closing fence's `\n` would read
    // as one `\r\n`.
    format!(
        "{fence}{lang}\n{}\n{fence}",
        body.trim_end_matches(['\n', '\r'])
    )
}

/// `text` (Markdown a person or a model wrote) with a fenced code block it leaves open closed
/// at its end: an answer cut off inside a code block must not turn the rest of the export into
/// code. Fences follow CommonMark: up to three spaces, then three or more backticks or tildes;
/// closed by a run of the same character at least as long, with nothing after it.
fn close_open_fence(text: &str) -> String {
    let mut open: Option<(char, usize)> = None;
    // `\r\n` splits into a line and an empty one, which changes nothing about fences.
    for line in text.split(['\n', '\r']) {
        let rest = line.trim_start_matches(' ');
        if line.len() - rest.len() > 3 {
            continue;
        }
        let Some(c) = rest.chars().next().filter(|c| matches!(c, '`' | '~')) else {
            continue;
        };
        let run = rest.len() - rest.trim_start_matches(c).len();
        let after = &rest[run..];
        if run < 3 {
            continue;
        }
        match open {
            None if !(c == '`' && after.contains('`')) => open = Some((c, run)),
            Some((o, n)) if c == o && run >= n && after.trim().is_empty() => open = None,
            _ => {}
        }
    }
    match open {
        Some((c, n)) => format!("{text}\n{}", c.to_string().repeat(n)),
        None => text.to_owned(),
    }
}

/// Collapses whitespace, line breaks included: a single-line field (a title, a tool name, an
/// error) cannot start a line of its own in the Markdown.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `YYYY-MM-DDTHH:MM:SSZ` for ms since the epoch (proleptic Gregorian, UTC).
pub fn iso_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

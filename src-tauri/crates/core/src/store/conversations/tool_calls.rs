//! Tool calls a model asked for, with their full results, and the approval decisions on them
//! (the raw material of the audit log, OB-01).
//!
//! A call is recorded against the assistant message that asked for it, under the server's own
//! tool name (not the LLM-facing one), so the record stays meaningful after the server is
//! renamed or removed: `server` is text here, not a foreign key.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::SqliteConnection;

use super::{corrupt, to_json};
use crate::ids::{ApprovalId, ConversationId, MessageId, ServerId, ToolCallRecordId};
use crate::store::{now_ms, Store, StoreError};

/// Where a tool call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Recorded; waiting for approval.
    Pending,
    /// Sent to the server.
    Running,
    /// The server answered (`is_error` tells whether the tool failed).
    Done,
    /// Refused (by the user or the policy) and never sent.
    Denied,
    /// Given up: the turn was cancelled or the call timed out.
    Cancelled,
    /// Found pending or running at startup.
    Interrupted,
}

impl ToolCallStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => Self::Pending,
            "running" => Self::Running,
            "done" => Self::Done,
            "denied" => Self::Denied,
            "cancelled" => Self::Cancelled,
            "interrupted" => Self::Interrupted,
            _ => return None,
        })
    }
}

/// How a tool call ended (the statuses a call may be finished with).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallEnd {
    /// The server answered.
    Done,
    /// Refused and never sent.
    Denied,
    /// Given up.
    Cancelled,
}

impl From<ToolCallEnd> for ToolCallStatus {
    fn from(e: ToolCallEnd) -> Self {
        match e {
            ToolCallEnd::Done => Self::Done,
            ToolCallEnd::Denied => Self::Denied,
            ToolCallEnd::Cancelled => Self::Cancelled,
        }
    }
}

/// A tool call to record.
#[derive(Clone, Copy, Debug)]
pub struct NewToolCall<'a> {
    /// The vendor's call id (as in the `ToolCall` part).
    pub call_id: &'a str,
    /// The server.
    pub server: &'a ServerId,
    /// The tool, as the server names it.
    pub tool: &'a str,
    /// The arguments as they will be sent.
    pub arguments: &'a Value,
}

/// Allow or deny.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// The call may run.
    Allow,
    /// It may not.
    Deny,
}

/// How a decision was made.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum DecidedBy {
    /// The user answered a prompt.
    User,
    /// The policy decided without asking.
    Policy,
    /// A standing grant ("this conversation", "always") covered it.
    Grant {
        /// Which grant.
        grant_id: String,
    },
}

/// One recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredApproval {
    /// Its id.
    pub id: ApprovalId,
    /// Allow or deny.
    pub decision: ApprovalDecision,
    /// How.
    pub decided_by: DecidedBy,
    /// Why, when given (a deny reason goes back to the model).
    pub reason: Option<String>,
    /// When, ms since the epoch.
    pub decided_at_ms: i64,
}

/// One recorded tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredToolCall {
    /// Its id.
    pub id: ToolCallRecordId,
    /// The assistant message that asked for it.
    pub message: MessageId,
    /// The vendor's call id.
    pub call_id: String,
    /// The server.
    pub server: ServerId,
    /// The tool, as the server names it.
    pub tool: String,
    /// The arguments as sent.
    pub arguments: Value,
    /// The full result (uncapped), once finished.
    pub result: Option<Value>,
    /// Whether the result is an error.
    pub is_error: bool,
    /// Where it stands.
    pub status: ToolCallStatus,
    /// Recorded, ms since the epoch.
    pub requested_at_ms: i64,
    /// Sent to the server, ms since the epoch.
    pub started_at_ms: Option<i64>,
    /// Finished, ms since the epoch.
    pub finished_at_ms: Option<i64>,
    /// The decisions on it, oldest first.
    pub approvals: Vec<StoredApproval>,
}

#[derive(sqlx::FromRow)]
struct ToolCallRow {
    id: i64,
    message_id: i64,
    call_id: String,
    server: String,
    tool: String,
    arguments_json: String,
    result_json: Option<String>,
    is_error: i64,
    status: String,
    requested_at: i64,
    started_at: Option<i64>,
    finished_at: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct ApprovalRow {
    id: i64,
    tool_call_id: i64,
    decision: String,
    reason: Option<String>,
    decided_by: String,
    grant_id: Option<String>,
    decided_at: i64,
}

impl TryFrom<ApprovalRow> for StoredApproval {
    type Error = StoreError;

    fn try_from(r: ApprovalRow) -> Result<Self, StoreError> {
        let what = || format!("approval {}", r.id);
        let decision = match r.decision.as_str() {
            "allow" => ApprovalDecision::Allow,
            "deny" => ApprovalDecision::Deny,
            other => return Err(corrupt(what(), format!("unknown decision {other:?}"))),
        };
        let decided_by = match (r.decided_by.as_str(), r.grant_id) {
            ("user", _) => DecidedBy::User,
            ("policy", _) => DecidedBy::Policy,
            ("grant", Some(grant_id)) => DecidedBy::Grant { grant_id },
            (other, _) => return Err(corrupt(what(), format!("bad decided_by {other:?}"))),
        };
        Ok(Self {
            id: ApprovalId::new(r.id),
            decision,
            decided_by,
            reason: r.reason,
            decided_at_ms: r.decided_at,
        })
    }
}

impl TryFrom<ToolCallRow> for StoredToolCall {
    type Error = StoreError;

    fn try_from(r: ToolCallRow) -> Result<Self, StoreError> {
        let what = || format!("tool call {}", r.id);
        let json = |s: &str| serde_json::from_str::<Value>(s).map_err(|e| corrupt(what(), e));
        Ok(Self {
            id: ToolCallRecordId::new(r.id),
            message: MessageId::new(r.message_id),
            call_id: r.call_id,
            server: ServerId::new(&r.server).map_err(|e| corrupt(what(), e))?,
            tool: r.tool,
            arguments: json(&r.arguments_json)?,
            result: r.result_json.as_deref().map(json).transpose()?,
            is_error: r.is_error != 0,
            status: ToolCallStatus::parse(&r.status)
                .ok_or_else(|| corrupt(what(), format!("unknown status {:?}", r.status)))?,
            requested_at_ms: r.requested_at,
            started_at_ms: r.started_at,
            finished_at_ms: r.finished_at,
            approvals: Vec::new(),
        })
    }
}

impl Store {
    /// Records a tool call the answer `message` asked for, as `pending`.
    pub async fn record_tool_call(
        &self,
        message: MessageId,
        call: &NewToolCall<'_>,
    ) -> Result<ToolCallRecordId, StoreError> {
        let arguments = to_json("tool arguments", call.arguments)?;
        let res = sqlx::query(
            "INSERT INTO tool_calls (message_id, call_id, server, tool, arguments_json, status,
                                     requested_at)
             SELECT id, ?, ?, ?, ?, 'pending', ? FROM messages WHERE id = ?",
        )
        .bind(call.call_id)
        .bind(call.server.as_str())
        .bind(call.tool)
        .bind(arguments)
        .bind(now_ms())
        .bind(message.get())
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("message {message}")));
        }
        Ok(ToolCallRecordId::new(res.last_insert_rowid()))
    }

    /// Marks a pending call as sent to its server.
    pub async fn start_tool_call(&self, id: ToolCallRecordId) -> Result<(), StoreError> {
        let res = sqlx::query(
            "UPDATE tool_calls SET status = 'running', started_at = ?
             WHERE id = ? AND status = 'pending'",
        )
        .bind(now_ms())
        .bind(id.get())
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("pending tool call {id}")));
        }
        Ok(())
    }

    /// Closes a call with its full result (stored uncapped). Accepted on pending, running and
    /// interrupted calls (see [`Store::checkpoint_assistant_message`] for why interrupted).
    pub async fn finish_tool_call(
        &self,
        id: ToolCallRecordId,
        end: ToolCallEnd,
        result: Option<&Value>,
        is_error: bool,
    ) -> Result<(), StoreError> {
        let result = result.map(|v| to_json("tool result", v)).transpose()?;
        let res = sqlx::query(
            "UPDATE tool_calls SET status = ?, result_json = ?, is_error = ?, finished_at = ?
             WHERE id = ? AND status IN ('pending', 'running', 'interrupted')",
        )
        .bind(ToolCallStatus::from(end).as_str())
        .bind(result)
        .bind(i64::from(is_error))
        .bind(now_ms())
        .bind(id.get())
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("unfinished tool call {id}")));
        }
        Ok(())
    }

    /// Records a decision on a call.
    pub async fn record_approval(
        &self,
        tool_call: ToolCallRecordId,
        decision: ApprovalDecision,
        decided_by: &DecidedBy,
        reason: Option<&str>,
    ) -> Result<ApprovalId, StoreError> {
        let (by, grant) = match decided_by {
            DecidedBy::User => ("user", None),
            DecidedBy::Policy => ("policy", None),
            DecidedBy::Grant { grant_id } => ("grant", Some(grant_id.as_str())),
        };
        let res = sqlx::query(
            "INSERT INTO approvals (tool_call_id, decision, reason, decided_by, grant_id,
                                    decided_at)
             SELECT id, ?, ?, ?, ?, ? FROM tool_calls WHERE id = ?",
        )
        .bind(match decision {
            ApprovalDecision::Allow => "allow",
            ApprovalDecision::Deny => "deny",
        })
        .bind(reason)
        .bind(by)
        .bind(grant)
        .bind(now_ms())
        .bind(tool_call.get())
        .execute(self.writer())
        .await?;
        if res.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("tool call {tool_call}")));
        }
        Ok(ApprovalId::new(res.last_insert_rowid()))
    }

    /// Every tool call of a conversation (superseded messages' too) with its approvals, in
    /// message order, then in the order they were recorded.
    pub async fn tool_calls(
        &self,
        conversation: &ConversationId,
    ) -> Result<Vec<StoredToolCall>, StoreError> {
        let rows: Vec<ToolCallRow> = sqlx::query_as(
            "SELECT t.id, t.message_id, t.call_id, t.server, t.tool, t.arguments_json,
                    t.result_json, t.is_error, t.status, t.requested_at, t.started_at,
                    t.finished_at
             FROM messages m JOIN tool_calls t ON t.message_id = m.id
             WHERE m.conversation_id = ?
             ORDER BY m.seq, t.id",
        )
        .bind(conversation.as_str())
        .fetch_all(self.reader())
        .await?;
        let approvals: Vec<ApprovalRow> = sqlx::query_as(
            "SELECT a.id, a.tool_call_id, a.decision, a.reason, a.decided_by, a.grant_id,
                    a.decided_at
             FROM messages m JOIN tool_calls t ON t.message_id = m.id
                             JOIN approvals a ON a.tool_call_id = t.id
             WHERE m.conversation_id = ?
             ORDER BY a.id",
        )
        .bind(conversation.as_str())
        .fetch_all(self.reader())
        .await?;
        let mut by_call: HashMap<i64, Vec<StoredApproval>> = HashMap::new();
        for a in approvals {
            by_call
                .entry(a.tool_call_id)
                .or_default()
                .push(StoredApproval::try_from(a)?);
        }
        rows.into_iter()
            .map(|r| {
                let id = r.id;
                let mut call = StoredToolCall::try_from(r)?;
                call.approvals = by_call.remove(&id).unwrap_or_default();
                Ok(call)
            })
            .collect()
    }
}

/// Copies the tool calls (and their approvals) of the messages a fork copied into `fork`
/// (each copy names its original in `copied_from`). Unfinished calls become `interrupted`:
/// the copy will never run them.
pub(super) async fn copy_for_fork(
    conn: &mut SqliteConnection,
    fork: &ConversationId,
) -> Result<(), StoreError> {
    let calls: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT t.id, n.id FROM messages n JOIN tool_calls t ON t.message_id = n.copied_from
         WHERE n.conversation_id = ?
         ORDER BY t.id",
    )
    .bind(fork.as_str())
    .fetch_all(&mut *conn)
    .await?;
    // One call at a time, because each copy's new id keys its approvals; calls are few next
    // to messages, which are copied in one statement.
    for (call, copy) in calls {
        let res = sqlx::query(
            "INSERT INTO tool_calls (message_id, call_id, server, tool, arguments_json,
                    result_json, is_error, status, requested_at, started_at, finished_at)
             SELECT ?, call_id, server, tool, arguments_json, result_json, is_error,
                    CASE WHEN status IN ('pending', 'running') THEN 'interrupted'
                         ELSE status END,
                    requested_at, started_at, finished_at
             FROM tool_calls WHERE id = ?",
        )
        .bind(copy)
        .bind(call)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO approvals (tool_call_id, decision, reason, decided_by, grant_id,
                                    decided_at)
             SELECT ?, decision, reason, decided_by, grant_id, decided_at
             FROM approvals WHERE tool_call_id = ? ORDER BY id",
        )
        .bind(res.last_insert_rowid())
        .bind(call)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

//! Conversations in SQLite: the `conversations`, `messages`, `tool_calls` and `approvals` tables
//! and the `messages_fts` full-text index (migration `0002_conversations.sql`).
//!
//! What the chat loop relies on:
//! - **Nothing is lost** (ST-02): the user's message is committed by [`Store::append_message`]
//!   before any model call; an answer is a row from [`Store::begin_assistant_message`] on, with
//!   `status = incomplete`, checkpointed by [`Store::checkpoint_assistant_message`] and closed by
//!   [`Store::finish_assistant_message`]. [`Store::mark_interrupted_on_startup`] turns leftovers
//!   into `interrupted`; no method deletes a message except deleting its whole conversation.
//! - **History is kept**: edit-and-resend and regenerate mark replaced messages superseded
//!   (`superseded_by`) and append the new branch. The visible transcript is the messages with no
//!   `superseded_by`, in `seq` order ([`Store::load_messages`]); [`Store::load_history`] has all.
//!   Invariant: `superseded_by` points to a later message (higher `seq`) of the same
//!   conversation, which is what lets [`Store::fork_conversation`] rebuild any past branch.
//! - **One writer**: every change goes through the single writer connection; changes touching
//!   more than one row run in one `BEGIN IMMEDIATE` transaction (taking the write lock up front,
//!   so a second process on the same file waits in `busy_timeout` instead of failing on a lock
//!   upgrade).
//!
//! The stored transcript is the [`crate::transcript`] leaf's provider-neutral `Message`/`Part` as
//! JSON; this module depends on those types only, never on providers.

mod branches;
mod export;
mod messages;
mod search;
mod summaries;
mod tool_calls;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use super::{now_ms, Store, StoreError};
use crate::ids::{ConversationId, MessageId};
use crate::transcript::Usage;

pub use export::{
    iso_utc, render_json, render_markdown, ConversationExport, EXPORT_FORMAT_VERSION,
};
pub use messages::{ImportedMessage, MessageEnd, MessageStatus, Recovered, StoredMessage};
pub use search::{fts_query, SearchHit, HIGHLIGHT_END, HIGHLIGHT_START, PREFIX_MIN};
pub use summaries::{NewSummary, Summary};
pub use tool_calls::{
    ApprovalDecision, DecidedBy, NewToolCall, StoredApproval, StoredToolCall, ToolCallEnd,
    ToolCallStatus,
};

/// Previews are cut to this many characters.
pub const PREVIEW_CHARS: usize = 200;

/// One conversation's header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    /// Its id.
    pub id: ConversationId,
    /// Its title.
    pub title: String,
    /// Created, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Last activity (a message added or an answer finished), in ms since the epoch.
    pub updated_at_ms: i64,
    /// The provider that answered last.
    pub provider: Option<String>,
    /// The model that answered last.
    pub model: Option<String>,
    /// Hidden from the default list.
    pub archived: bool,
    /// The conversation this one was forked from (None if not a fork or if it was deleted).
    pub forked_from_conversation: Option<ConversationId>,
    /// The last message copied into the fork (None if not a fork or if it was deleted).
    pub forked_from_message: Option<MessageId>,
}

/// A conversation in the list, with the start of its last visible text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationSummary {
    /// The conversation.
    pub conversation: Conversation,
    /// Up to [`PREVIEW_CHARS`] characters of the last visible message that has text.
    pub preview: Option<String>,
}

/// Which conversations a listing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveFilter {
    /// Only those not archived (the default list).
    #[default]
    Active,
    /// Only archived ones.
    Archived,
    /// Both.
    All,
}

/// Where the next page of a listing starts: the last item of the previous page. Keyset
/// pagination, so pages stay consistent while conversations are added.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListCursor {
    /// The last item's `updated_at_ms`.
    pub updated_at_ms: i64,
    /// The last item's id.
    pub id: ConversationId,
}

/// A listing request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationQuery {
    /// Which ones.
    pub filter: ArchiveFilter,
    /// Page size (clamped to 1..=500).
    pub limit: u32,
    /// Continue after this item; `None` for the first page.
    pub after: Option<ListCursor>,
}

impl Default for ConversationQuery {
    fn default() -> Self {
        Self {
            filter: ArchiveFilter::Active,
            limit: 50,
            after: None,
        }
    }
}

/// One page of the conversation list, most recent activity first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationPage {
    /// The conversations.
    pub items: Vec<ConversationSummary>,
    /// Pass this as `after` for the next page; `None` on the last page.
    pub next: Option<ListCursor>,
}

/// Tokens one provider/model spent in a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// The provider.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The tokens.
    pub usage: Usage,
    /// How many answers reported usage.
    pub answers: u64,
}

/// Tokens a conversation spent: every answer that reported usage, superseded ones included
/// (they were paid for), copies made by a fork excluded (the source counts them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// All models together.
    pub total: Usage,
    /// Per provider and model, ordered by provider then model.
    pub by_model: Vec<ModelUsage>,
}

#[derive(sqlx::FromRow)]
pub(super) struct ConversationRow {
    id: String,
    title: String,
    created_at: i64,
    updated_at: i64,
    provider: Option<String>,
    model: Option<String>,
    archived: i64,
    forked_from_conversation: Option<String>,
    forked_from_message: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct UsageRow {
    provider: Option<String>,
    model: Option<String>,
    input: i64,
    output: i64,
    cached: i64,
    answers: i64,
}

#[derive(sqlx::FromRow)]
struct SummaryRow {
    #[sqlx(flatten)]
    conversation: ConversationRow,
    preview: Option<String>,
}

/// Columns of [`ConversationRow`], for `concat!`.
macro_rules! conversation_cols {
    () => {
        "c.id, c.title, c.created_at, c.updated_at, c.provider, c.model, c.archived, \
         c.forked_from_conversation, c.forked_from_message"
    };
}
pub(super) use conversation_cols;

/// The listing query for one filter; `WHERE` is completed per filter so each variant can use
/// the `(archived, updated_at, id)` index.
macro_rules! list_sql {
    ($filter:literal) => {
        concat!(
            "SELECT ",
            conversation_cols!(),
            // 200 = PREVIEW_CHARS (a test pins it).
            ", (SELECT substr(m.text, 1, 200) FROM messages m
                 WHERE m.conversation_id = c.id AND m.superseded_by IS NULL AND m.text <> ''
                 ORDER BY m.seq DESC LIMIT 1) AS preview
             FROM conversations c
             WHERE ",
            $filter,
            " (c.updated_at, c.id) < (?, ?)
             ORDER BY c.updated_at DESC, c.id DESC
             LIMIT ?"
        )
    };
}

const LIST_ACTIVE: &str = list_sql!("c.archived = 0 AND");
const LIST_ARCHIVED: &str = list_sql!("c.archived = 1 AND");
const LIST_ALL: &str = list_sql!("");

pub(super) fn corrupt(what: impl Into<String>, reason: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        what: what.into(),
        reason: reason.to_string(),
    }
}

pub(super) fn to_json<T: Serialize + ?Sized>(what: &str, v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| corrupt(what, e))
}

pub(super) fn conversation_id(raw: &str) -> Result<ConversationId, StoreError> {
    ConversationId::parse(raw).map_err(|e| corrupt("conversation id", e))
}

/// SQLite integers are signed; token counts above `i64::MAX` do not occur.
pub(super) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

pub(super) fn not_found(id: &ConversationId) -> StoreError {
    StoreError::NotFound(format!("conversation {id}"))
}

impl TryFrom<ConversationRow> for Conversation {
    type Error = StoreError;

    fn try_from(r: ConversationRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: conversation_id(&r.id)?,
            title: r.title,
            created_at_ms: r.created_at,
            updated_at_ms: r.updated_at,
            provider: r.provider,
            model: r.model,
            archived: r.archived != 0,
            forked_from_conversation: r
                .forked_from_conversation
                .as_deref()
                .map(conversation_id)
                .transpose()?,
            forked_from_message: r.forked_from_message.map(MessageId::new),
        })
    }
}

impl Store {
    /// Starts an empty conversation.
    pub async fn create_conversation(&self, title: &str) -> Result<Conversation, StoreError> {
        let now = now_ms();
        let c = Conversation {
            id: ConversationId::random(),
            title: title.to_owned(),
            created_at_ms: now,
            updated_at_ms: now,
            provider: None,
            model: None,
            archived: false,
            forked_from_conversation: None,
            forked_from_message: None,
        };
        sqlx::query(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
        )
        .bind(c.id.as_str())
        .bind(&c.title)
        .bind(now)
        .bind(now)
        .execute(self.writer())
        .await?;
        Ok(c)
    }

    /// One conversation's header.
    pub async fn get_conversation(
        &self,
        id: &ConversationId,
    ) -> Result<Option<Conversation>, StoreError> {
        let row: Option<ConversationRow> = sqlx::query_as(concat!(
            "SELECT ",
            conversation_cols!(),
            " FROM conversations c WHERE c.id = ?"
        ))
        .bind(id.as_str())
        .fetch_optional(self.reader())
        .await?;
        row.map(Conversation::try_from).transpose()
    }

    /// A page of conversations, most recent activity first, each with a preview.
    pub async fn list_conversations(
        &self,
        query: &ConversationQuery,
    ) -> Result<ConversationPage, StoreError> {
        let limit = query.limit.clamp(1, 500);
        // No cursor: start above every row (no row is updated at i64::MAX).
        let (after_ms, after_id) = match &query.after {
            Some(c) => (c.updated_at_ms, c.id.as_str()),
            None => (i64::MAX, ""),
        };
        let sql = match query.filter {
            ArchiveFilter::Active => LIST_ACTIVE,
            ArchiveFilter::Archived => LIST_ARCHIVED,
            ArchiveFilter::All => LIST_ALL,
        };
        let rows: Vec<SummaryRow> = sqlx::query_as(sql)
            .bind(after_ms)
            .bind(after_id)
            .bind(i64::from(limit) + 1)
            .fetch_all(self.reader())
            .await?;
        let more = rows.len() > limit as usize;
        let items = rows
            .into_iter()
            .take(limit as usize)
            .map(|r| {
                Ok(ConversationSummary {
                    conversation: Conversation::try_from(r.conversation)?,
                    preview: r.preview,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let next = if more {
            items.last().map(|s| ListCursor {
                updated_at_ms: s.conversation.updated_at_ms,
                id: s.conversation.id.clone(),
            })
        } else {
            None
        };
        Ok(ConversationPage { items, next })
    }

    /// Renames a conversation (does not count as activity).
    pub async fn rename_conversation(
        &self,
        id: &ConversationId,
        title: &str,
    ) -> Result<(), StoreError> {
        let res = sqlx::query("UPDATE conversations SET title = ? WHERE id = ?")
            .bind(title)
            .bind(id.as_str())
            .execute(self.writer())
            .await?;
        if res.rows_affected() == 0 {
            return Err(not_found(id));
        }
        Ok(())
    }

    /// Archives or restores a conversation (does not count as activity).
    pub async fn set_conversation_archived(
        &self,
        id: &ConversationId,
        archived: bool,
    ) -> Result<(), StoreError> {
        let res = sqlx::query("UPDATE conversations SET archived = ? WHERE id = ?")
            .bind(i64::from(archived))
            .bind(id.as_str())
            .execute(self.writer())
            .await?;
        if res.rows_affected() == 0 {
            return Err(not_found(id));
        }
        Ok(())
    }

    /// Deletes a conversation with its messages, tool calls and approvals (one statement; the
    /// cascade and the full-text triggers run inside it). Forks of it keep their copies and
    /// lose only the `forked_from_*` link. Returns whether it existed.
    pub async fn delete_conversation(&self, id: &ConversationId) -> Result<bool, StoreError> {
        let res = sqlx::query("DELETE FROM conversations WHERE id = ?")
            .bind(id.as_str())
            .execute(self.writer())
            .await?;
        Ok(res.rows_affected() > 0)
    }

    /// The tokens a conversation spent (see [`UsageTotals`]).
    pub async fn usage_totals(&self, id: &ConversationId) -> Result<UsageTotals, StoreError> {
        let rows: Vec<UsageRow> = sqlx::query_as(
            "SELECT provider, model, COALESCE(SUM(usage_input), 0) AS input,
                    COALESCE(SUM(usage_output), 0) AS output,
                    COALESCE(SUM(usage_cached_input), 0) AS cached, COUNT(*) AS answers
             FROM messages
             WHERE conversation_id = ? AND copied_from IS NULL AND usage_input IS NOT NULL
             GROUP BY provider, model
             ORDER BY provider, model",
        )
        .bind(id.as_str())
        .fetch_all(self.reader())
        .await?;
        let mut totals = UsageTotals::default();
        for r in rows {
            let usage = Usage {
                input_tokens: to_u64(r.input),
                output_tokens: to_u64(r.output),
                cached_input_tokens: to_u64(r.cached),
            };
            totals.total.add(usage);
            totals.by_model.push(ModelUsage {
                provider: r.provider,
                model: r.model,
                usage,
                answers: to_u64(r.answers),
            });
        }
        Ok(totals)
    }
}

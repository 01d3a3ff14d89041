//! Full-text search over message text (`messages_fts`, FTS5).
//!
//! What is searched is each message's Text parts (`Message::text()`); tool arguments, tool
//! results and images are not, so a search for a word finds what was said, not what a tool
//! returned. Superseded messages are left out: a hit opens in the visible conversation.
//!
//! What the user types is never FTS5 syntax. Each whitespace-separated word becomes a quoted
//! phrase (quotes doubled), the phrases are ANDed, and the last one is a prefix (from
//! [`PREFIX_MIN`] characters) so results appear while typing. `"`, `*`, `-`, `NEAR`, `AND`,
//! `:`, `^` and unbalanced parentheses are plain text that way, and the query cannot fail to
//! parse.

use serde::{Deserialize, Serialize};

use super::conversation_id;
use crate::ids::{ConversationId, MessageId};
use crate::store::{Store, StoreError};

/// Marks the start of a matched term in [`SearchHit::snippet`] (a control character that text
/// rarely holds; the UI splits on it and renders the pieces as text).
pub const HIGHLIGHT_START: &str = "\u{2}";
/// Marks the end of a matched term in [`SearchHit::snippet`].
pub const HIGHLIGHT_END: &str = "\u{3}";

/// The last word is searched as a prefix from this many characters on.
pub const PREFIX_MIN: usize = 3;

/// One search result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The conversation.
    pub conversation: ConversationId,
    /// Its title.
    pub title: String,
    /// The message.
    pub message: MessageId,
    /// Words around the match, matches between [`HIGHLIGHT_START`] and [`HIGHLIGHT_END`],
    /// cuts marked with `…`.
    pub snippet: String,
    /// FTS5's bm25 rank: lower is better; hits come best first.
    pub rank: f64,
}

/// How many of the newest matches are ranked. Ranking every match of a common word (a quarter
/// of a million messages) costs half a second; the newest matches come straight off the index
/// in rowid order, so search ranks the best of the newest [`RANK_WINDOW`] instead.
pub const RANK_WINDOW: i64 = 500;

pub(super) const SEARCH: &str = "WITH recent AS (
        SELECT rowid AS id, bm25(messages_fts) AS rank,
               snippet(messages_fts, 0, ?, ?, '…', 16) AS snippet
          FROM messages_fts
         WHERE messages_fts MATCH ?
         ORDER BY rowid DESC
         LIMIT ?)
     SELECT m.conversation_id, c.title, m.id, recent.snippet, recent.rank
       FROM recent
       JOIN messages m ON m.id = recent.id
       JOIN conversations c ON c.id = m.conversation_id
      WHERE m.superseded_by IS NULL
      ORDER BY recent.rank
      LIMIT ?";

/// The safe FTS5 query for what a user typed, or `None` when there is nothing to search for.
pub fn fts_query(input: &str) -> Option<String> {
    let words: Vec<String> = input
        .split_whitespace()
        .map(|t| t.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|t| !t.is_empty())
        .collect();
    let last = words.last()?;
    // A prefix of one or two letters would merge the lists of most of the vocabulary.
    let prefix = last.chars().count() >= PREFIX_MIN;
    let mut q = words
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ");
    if prefix {
        q.push('*');
    }
    Some(q)
}

impl Store {
    /// Messages whose text matches every word of `query` (the last one as a prefix), best
    /// first among the newest [`RANK_WINDOW`] matches, at most `limit` (clamped to 1..=200).
    /// Any input is safe (see the module docs).
    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        let Some(q) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let rows: Vec<(String, String, i64, String, f64)> = sqlx::query_as(SEARCH)
            .bind(HIGHLIGHT_START)
            .bind(HIGHLIGHT_END)
            .bind(&q)
            .bind(RANK_WINDOW)
            .bind(i64::from(limit.clamp(1, 200)))
            .fetch_all(self.reader())
            .await?;
        rows.into_iter()
            .map(|(conversation, title, message, snippet, rank)| {
                Ok(SearchHit {
                    conversation: conversation_id(&conversation)?,
                    title,
                    message: MessageId::new(message),
                    snippet,
                    rank,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_becomes_quoted_phrases() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("hello"), Some("\"hello\"*".into()));
        assert_eq!(
            fts_query("say \"hi\" NEAR( -x*"),
            Some("\"say\" \"\"\"hi\"\"\" \"NEAR(\" \"-x*\"*".into())
        );
        assert_eq!(fts_query("a\u{0}b"), Some("\"ab\"".into()));
        assert_eq!(fts_query("ab abc"), Some("\"ab\" \"abc\"*".into()));
    }
}

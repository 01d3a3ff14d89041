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
//!
//! The prefix is expanded before FTS5 sees it. FTS5 answers a prefix phrase by merging the
//! whole posting list of every matching term into one list in memory, and bm25 does that a
//! second time to count the documents for its IDF, whatever the window: for a word in a quarter
//! of the corpus that was about half of a search's time (~30 ms on the benchmark machine). So
//! when the last word is plain ASCII letters and digits (one token, which the `unicode61`
//! tokenizer only lowercases), the index's own terms starting with it are looked up (one index
//! seek each, see [`NEXT_TERM`]) and searched as `("term1" OR "term2" ...)`: the same documents,
//! now streamed newest first without the merge. bm25 ranks each term with its own IDF instead of
//! one for the whole prefix, so a rarer completion weighs more, as it would typed in full; a
//! single completion ranks exactly as the prefix did. Anything else (a diacritic or punctuation
//! in the word, more than [`MAX_EXPANSIONS`] completions) is searched as an FTS5 prefix, as
//! before.

use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;

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

/// A prefix with more completions than this in the index is searched as an FTS5 prefix. Each
/// completion costs one index seek (~0.5 ms on the benchmark machine, one per segment of the
/// index), so a short prefix of a large vocabulary, which could need hundreds, stops after this
/// many and pays that much over the plain FTS5 prefix.
pub const MAX_EXPANSIONS: usize = 16;

/// The first index term at or after `?`. `temp.messages_fts_vocab` is an `fts5vocab` table of
/// kind `instance` over `messages_fts`, created on every reader connection (`store/mod.rs`):
/// unlike kind `row`, it does not count a term's documents before returning it, so this is one
/// seek however common the term is.
const NEXT_TERM: &str = "SELECT term FROM temp.messages_fts_vocab WHERE term >= ? LIMIT 1";

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

/// The words of a query as typed (control characters dropped).
fn words(input: &str) -> Vec<String> {
    input
        .split_whitespace()
        .map(|t| t.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|t| !t.is_empty())
        .collect()
}

/// One typed word as an FTS5 phrase.
fn phrase(word: &str) -> String {
    format!("\"{}\"", word.replace('"', "\"\""))
}

/// Whether the last word is searched as a prefix. A prefix of one or two letters would merge
/// the lists of most of the vocabulary.
fn is_prefix(word: &str) -> bool {
    word.chars().count() >= PREFIX_MIN
}

/// The safe FTS5 query for what a user typed, with the last word as an FTS5 prefix (the query
/// [`Store::search`] falls back to when it does not expand the prefix), or `None` when there is
/// nothing to search for.
pub fn fts_query(input: &str) -> Option<String> {
    let words = words(input);
    let last = words.last()?;
    let mut q = words
        .iter()
        .map(|w| phrase(w))
        .collect::<Vec<_>>()
        .join(" ");
    if is_prefix(last) {
        q.push('*');
    }
    Some(q)
}

/// The index term a typed last word is a prefix of, when it can be looked up directly: ASCII
/// letters and digits only, which `unicode61` keeps as one token and only lowercases.
fn term_prefix(word: &str) -> Option<String> {
    (is_prefix(word) && word.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then(|| word.to_ascii_lowercase())
}

/// The index terms starting with `prefix`, in order, or `None` when there are more than
/// [`MAX_EXPANSIONS`].
async fn completions(
    conn: &mut SqliteConnection,
    prefix: &str,
) -> Result<Option<Vec<String>>, StoreError> {
    let mut terms = Vec::new();
    let mut from = prefix.to_owned();
    while let Some((term,)) = sqlx::query_as::<_, (String,)>(NEXT_TERM)
        .bind(&from)
        .fetch_optional(&mut *conn)
        .await?
    {
        if !term.starts_with(prefix) {
            break;
        }
        if terms.len() == MAX_EXPANSIONS {
            return Ok(None);
        }
        // Every term after `term` sorts at or after this: tokens hold no NUL.
        from = format!("{term}\u{1}");
        terms.push(term);
    }
    Ok(Some(terms))
}

impl Store {
    /// Messages whose text matches every word of `query` (the last one as a prefix), best
    /// first among the newest [`RANK_WINDOW`] matches, at most `limit` (clamped to 1..=200).
    /// Any input is safe (see the module docs).
    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        let words = words(query);
        let Some((last, before)) = words.split_last() else {
            return Ok(Vec::new());
        };
        // One read transaction: the completions and the search see the same index.
        let mut tx = self.reader().begin().await?;
        let completions = match term_prefix(last) {
            Some(prefix) => completions(&mut tx, &prefix).await?,
            None => None,
        };
        let last = match completions {
            // No term starts with it: nothing can match every word.
            Some(terms) if terms.is_empty() => return Ok(Vec::new()),
            Some(terms) if terms.len() == 1 => phrase(&terms[0]),
            Some(terms) => format!(
                "({})",
                terms
                    .iter()
                    .map(|t| phrase(t))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            ),
            None if is_prefix(last) => format!("{}*", phrase(last)),
            None => phrase(last),
        };
        // Explicit AND: FTS5 has no implicit AND before a parenthesised group.
        let q = before
            .iter()
            .map(|w| phrase(w))
            .chain([last])
            .collect::<Vec<_>>()
            .join(" AND ");
        let rows: Vec<(String, String, i64, String, f64)> = sqlx::query_as(SEARCH)
            .bind(HIGHLIGHT_START)
            .bind(HIGHLIGHT_END)
            .bind(&q)
            .bind(RANK_WINDOW)
            .bind(i64::from(limit.clamp(1, 200)))
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
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

    #[test]
    fn only_plain_ascii_words_are_looked_up() {
        assert_eq!(term_prefix("Zeb42"), Some("zeb42".into()));
        assert_eq!(term_prefix("ze"), None, "too short to be a prefix");
        assert_eq!(term_prefix("zéb"), None, "unicode61 would fold it");
        assert_eq!(term_prefix("e-mail"), None, "two tokens");
        assert_eq!(term_prefix("zeb_"), None);
    }

    async fn store_with(texts: &[&str]) -> (Store, Vec<MessageId>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
        let c = store.create_conversation("words").await.unwrap();
        let mut ids = Vec::new();
        for t in texts {
            let m = crate::transcript::Message::user_text(*t);
            ids.push(store.append_message(&c.id, &m).await.unwrap());
        }
        (store, ids, dir)
    }

    fn found(hits: &[SearchHit]) -> Vec<MessageId> {
        let mut ids: Vec<_> = hits.iter().map(|h| h.message).collect();
        ids.sort_by_key(|m| m.get());
        ids
    }

    #[tokio::test]
    async fn prefixes_find_what_fts5_prefixes_find() {
        let (store, ids, _dir) = store_with(&[
            "a zebra and another zebra",
            "the zébu grazes",
            "zebrafish swim",
            "zeal",
            "nothing here",
        ])
        .await;
        let mut conn = store.reader().acquire().await.unwrap();
        assert_eq!(
            completions(&mut conn, "zeb").await.unwrap(),
            Some(vec!["zebra".into(), "zebrafish".into(), "zebu".into()])
        );
        drop(conn);
        // Looked up (ASCII) and left to FTS5 (a diacritic) give the same hits.
        for (typed, fts5, expected) in [
            ("ZEB", "zéb", vec![ids[0], ids[1], ids[2]]),
            ("zebr", "zébr", vec![ids[0], ids[2]]),
            ("zebu", "zébu", vec![ids[1]]),
            ("zebx", "zébx", vec![]),
        ] {
            let looked_up = store.search(typed, 10).await.unwrap();
            assert_eq!(found(&looked_up), expected, "{typed}");
            assert_eq!(
                found(&store.search(fts5, 10).await.unwrap()),
                expected,
                "{fts5}"
            );
        }
        // One completion ranks exactly as the FTS5 prefix does.
        assert_eq!(
            store.search("zebu", 10).await.unwrap()[0].rank,
            store.search("zébu", 10).await.unwrap()[0].rank
        );
        // With more words, and with the completion's snippet highlighted.
        let hits = store.search("another zebr", 10).await.unwrap();
        assert_eq!(found(&hits), [ids[0]]);
        assert_eq!(
            hits[0].snippet,
            "a \u{2}zebra\u{3} and \u{2}another\u{3} \u{2}zebra\u{3}"
        );
    }

    #[tokio::test]
    async fn many_completions_are_left_to_fts5() {
        let many: Vec<String> = (0..=MAX_EXPANSIONS).map(|i| format!("pre{i:02}")).collect();
        let text = many.join(" ");
        let (store, ids, _dir) = store_with(&[&text, "prefix", "other"]).await;
        let mut conn = store.reader().acquire().await.unwrap();
        assert_eq!(completions(&mut conn, "pre").await.unwrap(), None);
        assert_eq!(
            completions(&mut conn, "pre0")
                .await
                .unwrap()
                .map(|t| t.len()),
            Some(10)
        );
        drop(conn);
        assert_eq!(
            found(&store.search("pre", 10).await.unwrap()),
            [ids[0], ids[1]]
        );
        assert_eq!(found(&store.search("pre0", 10).await.unwrap()), [ids[0]]);
    }
}

//! Bulk conversation data for benchmarks (`make bench`) and load tests.
//!
//! Corpora are written through the public store API (`Store::import_messages`: multi-row
//! inserts, [`BATCH`] messages per transaction), so they pass through the same schema,
//! triggers and full-text index as real chats. Text comes from a fixed vocabulary and a seeded
//! xorshift generator: the same arguments give the same corpus on every machine, and search
//! figures can be compared between runs. Every [`NEEDLE_EVERY`]th message contains
//! [`NEEDLE`], a word found nowhere else, so a search benchmark knows its exact hit count.
//!
//! No timing happens here: the benchmark program measures, tests only check shape.

use serde_json::json;
use switchboard_core::ids::ConversationId;
use switchboard_core::llm::types::{Message, Part, ResultPart, Role, Usage};
use switchboard_core::store::{ImportedMessage, MessageStatus, Store, StoreError};

/// Messages written per transaction.
pub const BATCH: usize = 5_000;

/// A word that occurs only in every [`NEEDLE_EVERY`]th message.
pub const NEEDLE: &str = "quokka";

/// How often [`NEEDLE`] occurs (message index 0, N, 2N, ... of each conversation).
pub const NEEDLE_EVERY: usize = 1_000;

/// First timestamp of seeded messages (2024-01-01T00:00:00Z); each message is one second on.
pub const START_MS: i64 = 1_704_067_200_000;

const VOCAB: &[&str] = &[
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "this",
    "file",
    "server",
    "tool",
    "call",
    "result",
    "error",
    "path",
    "directory",
    "list",
    "read",
    "write",
    "search",
    "query",
    "table",
    "index",
    "row",
    "column",
    "schema",
    "migration",
    "function",
    "module",
    "crate",
    "test",
    "build",
    "release",
    "version",
    "config",
    "option",
    "value",
    "string",
    "number",
    "array",
    "object",
    "field",
    "type",
    "trait",
    "struct",
    "enum",
    "async",
    "await",
    "future",
    "stream",
    "channel",
    "task",
    "thread",
    "lock",
    "memory",
    "cache",
    "network",
    "request",
    "response",
    "header",
    "token",
    "limit",
    "timeout",
    "retry",
    "backoff",
    "process",
    "signal",
    "exit",
    "status",
    "log",
    "trace",
    "span",
    "event",
    "metric",
    "latency",
    "weather",
    "forecast",
    "rain",
    "sun",
    "wind",
    "city",
    "river",
    "mountain",
    "forest",
    "ocean",
    "coffee",
    "tea",
    "bread",
    "apple",
    "orange",
    "garden",
    "kitchen",
    "window",
    "door",
    "table",
    "music",
    "piano",
    "guitar",
    "song",
    "concert",
    "ticket",
    "train",
    "station",
    "airport",
    "flight",
    "hotel",
    "museum",
    "library",
    "book",
    "chapter",
    "page",
    "letter",
    "word",
    "summary",
    "report",
    "meeting",
    "calendar",
    "monday",
    "friday",
    "morning",
    "evening",
    "because",
    "however",
    "therefore",
    "perhaps",
    "quickly",
    "carefully",
    "probably",
    "again",
    "check",
    "update",
    "delete",
    "create",
    "rename",
    "move",
    "copy",
    "compare",
    "explain",
    "résumé",
    "café",
    "naïve",
    "straße",
    "東京",
    "données",
    "ünïcödé",
];

/// The deterministic generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced, xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// `n` words of the vocabulary joined by spaces.
    pub fn sentence(&mut self, n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(VOCAB[self.below(VOCAB.len())]);
        }
        s
    }
}

/// Message `i` of a seeded conversation: users ask (8 to 40 words), the assistant answers
/// (20 to 120 words); every fifth answer also calls a tool and the message after it carries
/// the result, as in real transcripts. Message `i` contains [`NEEDLE`] when
/// `i % NEEDLE_EVERY == 0`.
pub fn seeded_message(rng: &mut Rng, i: usize) -> ImportedMessage {
    let user = i.is_multiple_of(2);
    let needle = i.is_multiple_of(NEEDLE_EVERY);
    let mut text = if user {
        let n = 8 + rng.below(33);
        rng.sentence(n)
    } else {
        let n = 20 + rng.below(101);
        rng.sentence(n)
    };
    if needle {
        text.push(' ');
        text.push_str(NEEDLE);
    }
    let calls_tool = !user && i % 10 == 1;
    let after_tool = user && i % 10 == 2;
    let message = if after_tool {
        Message {
            role: Role::User,
            parts: vec![
                Part::ToolResult {
                    call_id: format!("call_{}", i - 1),
                    content: vec![ResultPart::Text {
                        text: rng.sentence(30),
                    }],
                    is_error: false,
                },
                Part::Text { text },
            ],
        }
    } else if calls_tool {
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text { text },
                Part::ToolCall {
                    id: format!("call_{i}"),
                    name: "fs__read_file".into(),
                    arguments: json!({"path": format!("/data/{}.txt", rng.below(1000))}),
                },
            ],
        }
    } else {
        Message {
            role: if user { Role::User } else { Role::Assistant },
            parts: vec![Part::Text { text }],
        }
    };
    ImportedMessage {
        message,
        status: MessageStatus::Complete,
        provider: (!user).then(|| "openai".to_owned()),
        model: (!user).then(|| "gpt-4o-mini".to_owned()),
        usage: (!user).then(|| Usage {
            input_tokens: 500 + i as u64,
            output_tokens: 80,
            cached_input_tokens: 0,
        }),
        created_at_ms: START_MS + i as i64 * 1_000,
    }
}

/// Creates one conversation of `n_messages` seeded messages (seed = `seed`); returns its id.
pub async fn seed_conversation(
    store: &Store,
    title: &str,
    n_messages: usize,
    seed: u64,
) -> Result<ConversationId, StoreError> {
    let c = store.create_conversation(title).await?;
    let mut rng = Rng::new(seed);
    let mut batch = Vec::with_capacity(BATCH.min(n_messages));
    for i in 0..n_messages {
        batch.push(seeded_message(&mut rng, i));
        if batch.len() == BATCH {
            store.import_messages(&c.id, &batch).await?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        store.import_messages(&c.id, &batch).await?;
    }
    Ok(c.id)
}

/// What [`seed_corpus`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corpus {
    /// The conversations, in creation order.
    pub conversations: Vec<ConversationId>,
    /// Messages written in total.
    pub messages: u64,
    /// Messages that contain [`NEEDLE`].
    pub needles: u64,
}

/// Writes `total` messages spread over conversations of `per_conversation` messages (the last
/// one takes the remainder). The benchmark corpus is `seed_corpus(store, 1_000_000, 10_000)`:
/// 100 conversations of 10,000 messages.
pub async fn seed_corpus(
    store: &Store,
    total: usize,
    per_conversation: usize,
) -> Result<Corpus, StoreError> {
    let per = per_conversation.max(1);
    let mut corpus = Corpus {
        conversations: Vec::with_capacity(total.div_ceil(per)),
        messages: 0,
        needles: 0,
    };
    let mut left = total;
    while left > 0 {
        let n = left.min(per);
        let index = corpus.conversations.len();
        let id = seed_conversation(store, &format!("Seeded {index}"), n, index as u64 + 1).await?;
        corpus.conversations.push(id);
        corpus.messages += n as u64;
        corpus.needles += n.div_ceil(NEEDLE_EVERY) as u64;
        left -= n;
    }
    Ok(corpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic() {
        let a: Vec<_> = (0..20)
            .map(|i| seeded_message(&mut Rng::new(7), i).message)
            .collect();
        let b: Vec<_> = (0..20)
            .map(|i| seeded_message(&mut Rng::new(7), i).message)
            .collect();
        assert_eq!(a, b);
        assert_ne!(Rng::new(1).sentence(10), Rng::new(2).sentence(10));
        assert!(seeded_message(&mut Rng::new(1), 0)
            .message
            .text()
            .ends_with(NEEDLE));
        assert!(!seeded_message(&mut Rng::new(1), 2)
            .message
            .text()
            .contains(NEEDLE));
    }

    #[tokio::test]
    async fn corpus_has_the_promised_shape() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("seed.sqlite")).await.unwrap();
        let corpus = seed_corpus(&store, 2_500, 1_200).await.unwrap();
        assert_eq!(corpus.conversations.len(), 3);
        assert_eq!(corpus.messages, 2_500);
        // 1,200 + 1,200 + 100 messages: needles at 0 and 1,000, twice, then at 0.
        assert_eq!(corpus.needles, 5);
        let first = store.load_messages(&corpus.conversations[0]).await.unwrap();
        assert_eq!(first.len(), 1_200);
        assert_eq!(first[1_199].seq, 1_200);
        assert_eq!(first[1].message.role, Role::Assistant);
        assert_eq!(first[11].message.tool_calls().count(), 1);
        let last = store.load_messages(&corpus.conversations[2]).await.unwrap();
        assert_eq!(last.len(), 100);
        let hits = store.search(NEEDLE, 100).await.unwrap();
        assert_eq!(hits.len(), 5);
        let usage = store.usage_totals(&corpus.conversations[2]).await.unwrap();
        assert_eq!(usage.total.output_tokens, 50 * 80);
    }
}

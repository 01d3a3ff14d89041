//! The store figures: opening a conversation (`Store::load_messages`) and full-text search
//! (`Store::search`) on the cached corpus, each first cold, then warm.

use std::time::Instant;

use anyhow::{bail, Result};
use switchboard_core::ids::ConversationId;
use switchboard_core::llm::Part;
use switchboard_core::store::Store;

use super::corpus::{self, COMMON_WORD, NEEDLE};
use super::{median, ChatFigure, ChatPlan, ChatReport, PER_CONVERSATION, SEARCH_LIMIT};

/// [`COMMON_WORD`] with a diacritic: the tokenizer folds it to the same term, so it matches the
/// same messages, but search cannot look it up in the vocabulary and leaves the prefix to FTS5
/// (`store/conversations/search.rs`): the path every non-ASCII word takes.
const COMMON_WORD_ACCENTED: &str = "wéather";

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// A fresh store on the corpus, its file evicted from the page cache first, one reader
/// connection open.
async fn cold_store(c: &corpus::Corpus, conv: &ConversationId) -> Result<Store> {
    if !corpus::evict(&c.path) {
        eprintln!("  (posix_fadvise refused: the cold run may be warm)");
    }
    let store = Store::open(&c.path).await?;
    store.get_conversation(conv).await?;
    Ok(store)
}

/// Measures `chat-open` and `chat-search` as selected.
#[allow(clippy::too_many_lines)] // a benchmark run, measured step by step
pub(super) async fn figures(plan: &ChatPlan, r: &mut ChatReport) -> Result<()> {
    let per = plan.corpus.clamp(1, PER_CONVERSATION);
    let c = corpus::ensure(&plan.dir, plan.corpus, per).await?;
    r.corpus = Some(c.meta.clone());
    r.corpus_seeded_now = c.built;
    let conv = c.conversation(0)?;
    let n = plan.corpus.min(per);

    if plan.wants("chat-open") {
        let id = &conv;
        let load = |store: &Store| {
            let store = store.clone();
            async move {
                let t = Instant::now();
                let m = store.load_messages(id).await?;
                let took = ms(t);
                if m.len() != n {
                    bail!("loaded {} messages, not {n}", m.len());
                }
                anyhow::Ok((took, m))
            }
        };
        // Cold, then warm on the same long-lived store, as the app keeps one.
        let store = cold_store(&c, &conv).await?;
        let (cold, msgs) = load(&store).await?;
        let mut runs = Vec::with_capacity(plan.runs);
        for _ in 0..plan.runs {
            runs.push(load(&store).await?.0);
        }
        store.close().await;
        // What dominates: decoding each row's parts_json into Parts (the same serde call the
        // store makes), timed alone.
        let jsons = msgs
            .iter()
            .map(|m| serde_json::to_string(&m.message.parts))
            .collect::<Result<Vec<_>, _>>()?;
        let bytes: usize = jsons.iter().map(String::len).sum();
        let mut parse = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            for j in &jsons {
                std::hint::black_box(serde_json::from_str::<Vec<Part>>(j)?);
            }
            parse.push(ms(t));
        }
        r.figures.push(
            ChatFigure::new(
                "chat-open",
                format!("open a conversation of {n} messages (load_messages)"),
                "ms",
                cold,
                runs,
            )
            .target(50.0)
            .note(format!(
                "parsing the rows' parts_json ({:.1} MB) into Parts alone: {:.1} ms",
                bytes as f64 / 1e6,
                median(&parse)
            )),
        );
    }

    if plan.wants("chat-search") {
        let total = c.meta.messages;
        let common = format!(
            "{} messages match ({:.0}%)",
            c.meta.common,
            c.meta.common as f64 * 100.0 / total.max(1) as f64
        );
        // (key, typed, label, matching messages, note, target)
        let queries = [
            (
                "chat-search-word",
                NEEDLE,
                format!("search {total} msgs: rare word {NEEDLE:?}"),
                c.meta.needles,
                format!("{} messages match", c.meta.needles),
                Some(30.0),
            ),
            (
                "chat-search-prefix",
                &NEEDLE[..4],
                format!("search {total} msgs: prefix {:?}", &NEEDLE[..4]),
                c.meta.needles,
                format!("{} messages match", c.meta.needles),
                Some(30.0),
            ),
            (
                "chat-search-common",
                COMMON_WORD,
                format!("search {total} msgs: common word {COMMON_WORD:?}"),
                c.meta.common,
                format!(
                    "{common}: the prefix is looked up in the index's vocabulary, the newest 500 \
                     matches are ranked (bm25), the best {SEARCH_LIMIT} taken"
                ),
                Some(30.0),
            ),
            (
                "chat-search-common-fts5",
                COMMON_WORD_ACCENTED,
                format!("search {total} msgs: common word as FTS5 prefix {COMMON_WORD_ACCENTED:?}"),
                c.meta.common,
                format!(
                    "{common}: typed with a diacritic, so not looked up but left to FTS5, which \
                     merges the prefix's postings (twice, with bm25); information"
                ),
                None,
            ),
        ];
        for (key, q, label, matches, note, target) in queries {
            let expected = matches.min(u64::from(SEARCH_LIMIT)) as usize;
            let store = cold_store(&c, &conv).await?;
            let search = || async {
                let t = Instant::now();
                let hits = store.search(q, SEARCH_LIMIT).await?;
                let took = ms(t);
                if hits.len() != expected {
                    bail!("search {q:?} found {} hits, not {expected}", hits.len());
                }
                anyhow::Ok(took)
            };
            let cold = search().await?;
            let mut runs = Vec::with_capacity(plan.runs);
            for _ in 0..plan.runs {
                runs.push(search().await?);
            }
            store.close().await;
            let figure = ChatFigure::new(key, label, "ms", cold, runs).note(note);
            r.figures.push(match target {
                Some(t) => figure.target(t),
                None => figure,
            });
        }
    }
    Ok(())
}

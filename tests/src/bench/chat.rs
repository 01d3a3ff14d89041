//! The chat figures of issue 4 (`sb-bench --only chat`), against the targets:
//!
//! | key | figure | target |
//! |---|---|---|
//! | `chat-open` | opening a conversation of 10,000 messages: `Store::load_messages` on a real SQLite file | < 50 ms |
//! | `chat-search` | full-text search over 1,000,000 messages: `Store::search` for a rare word, its prefix, and a common word (and, for information, the common word typed with a diacritic, which takes FTS5's own prefix path) | < 30 ms |
//! | `chat-delta` | host overhead per streamed delta, provider chunk in to `ChatEvent` out | < 50 us |
//!
//! # Method
//!
//! **Store.** The corpus is `seed_corpus(store, 1_000_000, 10_000)` (100 conversations of
//! 10,000 messages; `quokka` in every 1,000th), built once into a cached file under the bench
//! output dir (see [`corpus`]). For each figure: the file's pages are dropped from the OS page
//! cache (`posix_fadvise(DONTNEED)`), a fresh `Store` is opened and one small query opens a
//! reader connection; the first measured call is the *cold* run, then `runs` warm calls on
//! the same store. Searches ask for 50 hits, as the CLI does.
//!
//! **Deltas.** The in-process fake LLM server answers every request with one answer of 10,000
//! small text deltas (one word each, no delay between chunks), in the real OpenAI or Anthropic
//! SSE format. Each round drains it three ways, one after the other (see [`stream`]): a bare
//! HTTP client that parses nothing, the real provider's `StreamEvent` stream, and `run_turn`
//! emitting `ChatEvent::TextDelta` into an unbounded channel read by a consumer task. Wall and
//! process CPU time are taken for each; per round, the differences turn - provider (what the
//! chat loop adds) and turn - raw (everything the host does with the bytes: HTTP, SSE, vendor
//! JSON, the loop and the channel) are divided by the delta count. CPU time is the figure:
//! the server runs in this process and does the same work in every variant, so it cancels,
//! while a wall-clock difference would hide host work overlapping the server's on the other
//! CPU. Then a paced answer (1/40 as many deltas, 1 ms apart, from a server on its own thread
//! that notes when each delta's chunk is written; see [`paced`]): every delta wakes an idle
//! host as a real model's do, and the figure is the p50 latency from chunk write to delta out,
//! `run_turn` minus the bare read. Last, `run_turn` fed from memory (the loop with no I/O).
//! Round 0 is the cold run; the median is over the next `runs`. The results and what dominates
//! each figure are in `docs/benchmarks.md`, "Chat (issue 4)".

mod corpus;
mod deltas;
mod paced;
mod storage;
mod stream;

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use super::median;

/// The `--only` keys of the chat figures (`chat` selects all three).
pub const KEYS: [&str; 3] = ["chat-open", "chat-search", "chat-delta"];

/// Messages per conversation in the corpus (and in the opened conversation).
pub const PER_CONVERSATION: usize = 10_000;

/// Hits asked of each search (the CLI's page).
const SEARCH_LIMIT: u32 = 50;

/// What to measure.
#[derive(Clone, Debug)]
pub struct ChatPlan {
    /// Warm runs per figure, after the cold one.
    pub runs: usize,
    /// Text deltas in the streamed answer.
    pub deltas: usize,
    /// Messages in the search corpus.
    pub corpus: usize,
    /// Where the corpus is cached.
    pub dir: PathBuf,
    /// Which of [`KEYS`].
    pub keys: Vec<&'static str>,
}

impl ChatPlan {
    fn wants(&self, key: &str) -> bool {
        self.keys.contains(&key)
    }
}

/// One figure: the median of the warm runs, the cold run, and the verdict against a target.
#[derive(Clone, Debug, Serialize)]
pub struct ChatFigure {
    /// Short key.
    pub key: String,
    /// What the row is called.
    pub label: String,
    /// `ms` or `us`.
    pub unit: &'static str,
    /// Median of the warm runs.
    pub median: f64,
    /// Fastest warm run.
    pub min: f64,
    /// Slowest warm run.
    pub max: f64,
    /// The first run.
    pub cold: f64,
    /// Every warm run.
    pub runs: Vec<f64>,
    /// Upper bound from the issue, if it sets one for this row.
    pub target: Option<f64>,
    /// `PASS`, `MISS`, or empty for information.
    pub verdict: &'static str,
    /// What else was seen (breakdowns, hit counts).
    pub note: String,
}

impl ChatFigure {
    fn new(key: &str, label: String, unit: &'static str, cold: f64, runs: Vec<f64>) -> Self {
        let fold = |f: fn(f64, f64) -> f64, init| runs.iter().copied().fold(init, f);
        Self {
            key: key.to_owned(),
            label,
            unit,
            median: median(&runs),
            min: fold(f64::min, f64::INFINITY),
            max: fold(f64::max, f64::NEG_INFINITY),
            cold,
            runs,
            target: None,
            verdict: "",
            note: String::new(),
        }
    }

    fn target(mut self, below: f64) -> Self {
        self.target = Some(below);
        self.verdict = if self.median < below { "PASS" } else { "MISS" };
        self
    }

    fn note(mut self, note: String) -> Self {
        self.note = note;
        self
    }
}

/// Everything the chat figures produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChatReport {
    /// The corpus used by the store figures.
    pub corpus: Option<corpus::Meta>,
    /// Whether this run seeded it (false: reused).
    pub corpus_seeded_now: bool,
    /// Warm runs per figure.
    pub runs: usize,
    /// The figures, in table order.
    pub figures: Vec<ChatFigure>,
    /// What failed.
    pub failures: Vec<String>,
}

/// Measures the selected figures; a failure is recorded and the other figures still run.
pub async fn run(plan: &ChatPlan) -> ChatReport {
    let mut r = ChatReport {
        runs: plan.runs,
        ..ChatReport::default()
    };
    if plan.wants("chat-open") || plan.wants("chat-search") {
        if let Err(e) = storage::figures(plan, &mut r).await {
            r.failures.push(format!("store figures: {e:#}"));
        }
    }
    if plan.wants("chat-delta") {
        if let Err(e) = deltas::figures(plan, &mut r).await {
            r.failures.push(format!("delta figures: {e:#}"));
        }
    }
    r
}

/// The human-readable chat section.
pub fn table(r: &ChatReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "chat (issue 4): median of {} warm runs; cold = the first run (store: file evicted from the \
         page cache, fresh store; deltas: first answer on a fresh server and client)",
        r.runs
    );
    if let Some(m) = &r.corpus {
        let _ = writeln!(
            s,
            "corpus: {} messages in {} conversations, {:.0} MB, {} ({:.0} s to seed)",
            m.messages,
            m.conversations.len(),
            m.file_bytes as f64 / 1e6,
            if r.corpus_seeded_now {
                "seeded by this run"
            } else {
                "reused from an earlier run"
            },
            m.seeded_secs
        );
    }
    let w = r
        .figures
        .iter()
        .map(|f| f.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let _ = writeln!(
        s,
        "{:w$} | {:>9} {:>9} {:>9} {:>9} | target",
        "figure", "median", "min", "max", "cold"
    );
    s.push_str(&"-".repeat(w + 60));
    s.push('\n');
    for f in &r.figures {
        let target = f
            .target
            .map(|t| format!("< {t} {} {}", f.unit, f.verdict))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{:w$} | {:>9.2} {:>9.2} {:>9.2} {:>9.2} | {} {target}",
            f.label, f.median, f.min, f.max, f.cold, f.unit
        );
        for line in f.note.lines() {
            let _ = writeln!(s, "{:w$} |   {line}", "");
        }
    }
    for e in &r.failures {
        let _ = writeln!(s, "FAILED: {e}");
    }
    s
}

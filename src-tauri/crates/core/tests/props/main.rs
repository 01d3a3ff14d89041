//! Hostile bytes (FZ-02, issue 11): property tests for every parser that reads outside input.
//!
//! Each module takes one parser and states what must hold for *any* input, not just the
//! fixtures its unit tests pin: no panic, bounded memory, the same answer however the bytes
//! are chunked, round trips where a format is written and read back, and no secret-looking
//! value leaking into a message meant for display.
//!
//! - [`framing`]: the stdio line reader (`mcp::framing`).
//! - [`hygiene`]: tool-text findings, `reveal` and tool-name checks (`hygiene`).
//! - [`sse`]: the Server-Sent Events decoder (`llm::sse`).
//! - [`config_import`]: Claude Desktop, VS Code and Cursor imports, and export → import.
//! - [`policy`]: the policy TOML (`approval::rules::PolicyFile`).
//! - [`urls`]: the URL opener's check and the server URL check.
//! - [`export`]: conversation export as JSON and Markdown.
//!
//! # Why proptest
//! It runs on stable Rust inside `cargo test`, so the bounded run is part of `make test` with
//! no nightly toolchain, no `cargo-fuzz` and no sanitizer build (cargo-fuzz needs all three).
//! Failures shrink to a minimal input, which is what makes a report readable, and strategies
//! build *structured* hostile input (a JSON config whose values are secrets, a stream of valid
//! SSE events cut at random points) that byte-level coverage-guided fuzzing reaches slowly.
//! What is given up: coverage guidance. `make fuzz` makes up for part of it with many more
//! random cases.
//!
//! # Case counts and seeds
//! - `make test` (plain `cargo test`): [`DEFAULT_CASES`] per property and a fixed seed, so a CI
//!   run is deterministic: it either passes or fails the same way every time.
//! - `make fuzz`: `PROPTEST_CASES` (many more) and a fresh `PROPTEST_RNG_SEED` each run, printed
//!   by the Makefile, so a failure can be replayed with the same seed.
//! - Either way, a failure is shrunk and its seed saved under `tests/proptest-regressions/`,
//!   which is under version control: every later run replays it first, so a crash found by a
//!   long run stays a regression test (FZ-02).

mod config_import;
mod export;
mod framing;
mod hygiene;
mod policy;
mod sse;
mod urls;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Cases per property in a plain `cargo test` run: all properties together take a few seconds
/// on two cores in a debug build.
pub const DEFAULT_CASES: u32 = 64;

/// The seed of a plain run (any fixed value would do; this one is the issue's number).
const DEFAULT_SEED: u64 = 11;

/// The configuration every property uses: proptest's defaults and `PROPTEST_*` variables, with
/// [`DEFAULT_CASES`] and a fixed seed where the environment does not say otherwise.
pub fn config() -> ProptestConfig {
    let base = ProptestConfig::default();
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() {
        base.cases
    } else {
        DEFAULT_CASES
    };
    let rng_seed = match base.rng_seed {
        RngSeed::Random => RngSeed::Fixed(DEFAULT_SEED),
        fixed => fixed,
    };
    // Proptest's automatic limit is four shrink steps per case, too few to reach a readable
    // input from a structured one at [`DEFAULT_CASES`]. Shrinking runs only after a failure.
    let max_shrink_iters = if std::env::var_os("PROPTEST_MAX_SHRINK_ITERS").is_some() {
        base.max_shrink_iters
    } else {
        16_384
    };
    ProptestConfig {
        cases,
        rng_seed,
        max_shrink_iters,
        ..base
    }
}

/// Text built from pieces chosen to stress text handling: ASCII, line ends, controls, bidi and
/// zero-width characters, Unicode tags, characters whose case mapping changes their length,
/// combining marks and any scalar value at all.
pub fn hostile_text(max_pieces: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_piece(), 0..max_pieces).prop_map(|p| p.concat())
}

fn hostile_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ -~]{0,8}",
        2 => prop::sample::select(vec![
            "\n", "\r", "\r\n", "\t", "\0", "\x1b", "\x1b[2K", "\x7f", "\u{85}", "\u{9b}",
            "\u{200b}", "\u{200d}", "\u{202e}", "\u{2066}", "\u{2069}", "\u{061c}", "\u{feff}",
            "\u{00ad}", "\u{2028}", "\u{2029}", "\u{fff9}", "\u{e0001}", "\u{e0041}",
            "\u{e007f}", "İ", "ẞ", "ß", "ﬃ", "Σ", "\u{301}", "\u{10ffff}", "\u{fffd}", "é",
            "✓", "😀", "`", "```", "~~~", "#", "\\", "\"", "'", "${", "}", "<", ">",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ]
}

/// Splits `bytes` at the given cut points (taken modulo its length, in any order), so every
/// piece is non-empty unless `bytes` is empty; empty pieces are added where `empties` says.
pub fn chunked(bytes: &[u8], cuts: &[usize], empties: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| c % (bytes.len() + 1))
        .chain([0, bytes.len()])
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut out: Vec<Vec<u8>> = points
        .windows(2)
        .map(|w| bytes[w[0]..w[1]].to_vec())
        .collect();
    for e in empties {
        let at = e % (out.len() + 1);
        out.insert(at, Vec::new());
    }
    out
}

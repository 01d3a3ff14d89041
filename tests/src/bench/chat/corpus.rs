//! The search corpus: `seed_corpus(store, 1_000_000, 10_000)` written once into a SQLite file
//! under the bench output dir and reused by later runs.
//!
//! The file is named after a key that hashes everything that decides its content: the
//! message count and conversation size, [`CORPUS_VERSION`], the source of `tests/src/seed.rs`
//! (compiled in) and the core's SQL migrations (read from the source tree at run time). Change
//! any of them and the next run builds a fresh corpus and deletes the stale one. Seeding
//! writes to a `.partial` file that is renamed only once complete, and a JSON sidecar records
//! what was written and how long it took; a corpus without its sidecar is rebuilt.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::seed::{self, seed_corpus, seeded_message, Rng};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use switchboard_core::ids::ConversationId;
use switchboard_core::store::Store;

/// Bump when the corpus must be rebuilt for a reason the key cannot see.
pub const CORPUS_VERSION: u32 = 1;

/// The seed helpers, compiled in so that editing them changes the key.
const SEED_SOURCE: &str = include_str!("../../seed.rs");

/// A common vocabulary word used by the "broad query" search figure; the sidecar records how
/// many messages contain it.
pub const COMMON_WORD: &str = "weather";

/// What the sidecar records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// The cache key the file was built for.
    pub key: String,
    /// Messages in all.
    pub messages: u64,
    /// Messages per conversation.
    pub per_conversation: usize,
    /// Messages containing [`seed::NEEDLE`].
    pub needles: u64,
    /// Messages whose text contains a word starting with [`COMMON_WORD`].
    pub common: u64,
    /// The conversations, in creation order.
    pub conversations: Vec<String>,
    /// How long seeding took, seconds.
    pub seeded_secs: f64,
    /// Size of the database file, bytes.
    pub file_bytes: u64,
}

/// A ready corpus.
pub struct Corpus {
    /// The SQLite file.
    pub path: PathBuf,
    /// What it holds.
    pub meta: Meta,
    /// Whether this run built it (false: reused from an earlier run).
    pub built: bool,
}

impl Corpus {
    /// Conversation `i` (each holds `per_conversation` messages but maybe the last).
    pub fn conversation(&self, i: usize) -> Result<ConversationId> {
        let raw = self
            .meta
            .conversations
            .get(i)
            .with_context(|| format!("the corpus has no conversation #{i}"))?;
        ConversationId::parse(raw).map_err(|e| anyhow::anyhow!("corpus conversation id: {e}"))
    }
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike `DefaultHasher`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn migrations_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../src-tauri/crates/core/migrations")
}

/// The cache key for a corpus of `messages` in conversations of `per`.
pub fn key(messages: usize, per: usize) -> Result<String> {
    let mut h = Fnv::new();
    h.write(&CORPUS_VERSION.to_le_bytes());
    h.write(&(messages as u64).to_le_bytes());
    h.write(&(per as u64).to_le_bytes());
    h.write(SEED_SOURCE.as_bytes());
    let dir = migrations_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| {
            format!(
                "cannot read the core's migrations at {} (the corpus cache is keyed by them)",
                dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    for f in files {
        h.write(f.file_name().unwrap_or_default().as_encoded_bytes());
        h.write(&std::fs::read(&f).with_context(|| format!("cannot read {}", f.display()))?);
    }
    Ok(format!("v{CORPUS_VERSION}-{messages}-{:016x}", h.0))
}

/// The corpus for `messages`/`per` in `dir`: reused if a complete one with the current key is
/// there, else built now (stale corpora in `dir` are deleted first).
pub async fn ensure(dir: &Path, messages: usize, per: usize) -> Result<Corpus> {
    let key = key(messages, per)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("corpus-{key}.sqlite"));
    let sidecar = dir.join(format!("corpus-{key}.json"));
    if path.is_file() {
        if let Some(meta) = std::fs::read(&sidecar)
            .ok()
            .and_then(|b| serde_json::from_slice::<Meta>(&b).ok())
            .filter(|m| m.key == key)
        {
            eprintln!(
                "  corpus: reusing {} ({} messages, {:.0} MB; seeding it took {:.0} s)",
                path.display(),
                meta.messages,
                meta.file_bytes as f64 / 1e6,
                meta.seeded_secs
            );
            return Ok(Corpus {
                path,
                meta,
                built: false,
            });
        }
    }
    remove_stale(dir);
    let partial = dir.join(format!("corpus-{key}.sqlite.partial"));
    remove_db(&partial);
    eprintln!(
        "  corpus: seeding {messages} messages ({per} per conversation) into {} ...",
        path.display()
    );
    let t = Instant::now();
    let store = Store::open(&partial)
        .await
        .with_context(|| format!("cannot create {}", partial.display()))?;
    let ticker = tokio::spawn(progress(partial.clone(), t));
    let seeded = seed_corpus(&store, messages, per).await;
    ticker.abort();
    store.close().await;
    let corpus = seeded.context("seeding the corpus failed")?;
    let seeded_secs = t.elapsed().as_secs_f64();
    if corpus.messages != messages as u64 {
        bail!("seeded {} messages, not {messages}", corpus.messages);
    }
    std::fs::rename(&partial, &path)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), path.display()))?;
    remove_db(&partial);
    let meta = Meta {
        key,
        messages: corpus.messages,
        per_conversation: per,
        needles: corpus.needles,
        common: count_common(messages, per),
        conversations: corpus
            .conversations
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect(),
        seeded_secs,
        file_bytes: std::fs::metadata(&path).map_or(0, |m| m.len()),
    };
    std::fs::write(&sidecar, serde_json::to_vec_pretty(&meta)?)
        .with_context(|| format!("cannot write {}", sidecar.display()))?;
    eprintln!(
        "  corpus: seeded {} messages in {seeded_secs:.1} s ({:.0} messages/s, {:.0} MB)",
        meta.messages,
        meta.messages as f64 / seeded_secs,
        meta.file_bytes as f64 / 1e6
    );
    Ok(Corpus {
        path,
        meta,
        built: true,
    })
}

/// Prints the file size every 20 s while seeding, so a long first run shows it is alive.
async fn progress(path: PathBuf, t: Instant) {
    loop {
        tokio::time::sleep(Duration::from_secs(20)).await;
        let size = |suffix: &str| {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            std::fs::metadata(p).map_or(0, |m| m.len())
        };
        eprintln!(
            "  corpus: {:.0} s, {:.0} MB written so far",
            t.elapsed().as_secs_f64(),
            (size("") + size("-wal")) as f64 / 1e6
        );
    }
}

/// Messages of `seed_corpus(messages, per)` whose indexed text has a word starting with
/// [`COMMON_WORD`], by regenerating the corpus in memory (seed_corpus seeds conversation `i`
/// with `i + 1`; the search figure only reports this count, it does not depend on it).
fn count_common(messages: usize, per: usize) -> u64 {
    let mut count = 0;
    let mut left = messages;
    let mut index = 0u64;
    while left > 0 {
        let n = left.min(per.max(1));
        let mut rng = Rng::new(index + 1);
        for i in 0..n {
            let text = seeded_message(&mut rng, i).message.text();
            if text.split(' ').any(|w| w.starts_with(COMMON_WORD)) {
                count += 1;
            }
        }
        left -= n;
        index += 1;
    }
    count
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.to_path_buf().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// Deletes corpora (and their sidecars and backups) built for other keys.
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("corpus-") {
            eprintln!("  corpus: removing stale {name}");
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Drops the database file's pages from the OS page cache (`posix_fadvise(DONTNEED)`), so the
/// next read comes from the disk: how a conversation opens right after boot. Only this
/// file's clean pages are affected. Returns false when the kernel refused.
#[allow(unsafe_code)]
pub fn evict(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let mut ok = true;
    for suffix in ["", "-wal"] {
        let mut p = path.to_path_buf().into_os_string();
        p.push(suffix);
        let Ok(f) = std::fs::File::open(&p) else {
            continue;
        };
        let _ = f.sync_all();
        // SAFETY: a valid open descriptor; posix_fadvise only reads its arguments.
        let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        ok &= r == 0;
    }
    ok
}

/// The needle, for the search figures.
pub const NEEDLE: &str = seed::NEEDLE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_size() {
        let a = key(1_000, 100).unwrap();
        assert_eq!(a, key(1_000, 100).unwrap());
        assert_ne!(a, key(1_000, 200).unwrap());
        assert_ne!(a, key(2_000, 100).unwrap());
    }

    #[test]
    fn common_word_is_counted() {
        let n = count_common(2_000, 1_000);
        assert!(n > 100 && n < 1_500, "{n}");
    }
}

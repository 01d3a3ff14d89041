//! The limits of a run's state and the errors a write can meet, each worded for the model
//! that made the write (see `run_state.rs`).

use serde::Serialize;

use super::StoreError;

/// The limits of one scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StateLimits {
    /// Longest key, in characters.
    pub key_chars: usize,
    /// Largest value, in bytes of compact JSON.
    pub value_bytes: usize,
    /// Largest sum of the newest values of every key, in bytes.
    pub scope_bytes: usize,
    /// Most keys.
    pub keys: usize,
    /// Largest note, in bytes of UTF-8.
    pub note_bytes: usize,
    /// Most notes.
    pub notes: usize,
    /// Most versions kept of one key: older ones are dropped as new ones are written, so a
    /// model rewriting one key in a loop cannot grow the database without bound.
    pub versions_kept: u32,
}

/// The limits every scope has.
pub const LIMITS: StateLimits = StateLimits {
    key_chars: 128,
    value_bytes: 64 * 1024,
    scope_bytes: 1024 * 1024,
    keys: 500,
    note_bytes: 8 * 1024,
    notes: 1000,
    versions_kept: 20,
};

fn kib(bytes: usize) -> usize {
    bytes.div_ceil(1024)
}

/// Why a state operation was refused. The messages are written for the model that asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunStateError {
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The key is not a valid key.
    #[error("the key {key:?} is not valid: {reason}")]
    BadKey {
        /// The key as given (cut to 140 characters).
        key: String,
        /// Why.
        reason: String,
    },
    /// One value is too large.
    #[error("the value is {} KiB of JSON; the limit is {} KiB: store a summary, or split it across several keys", kib(*.bytes), kib(LIMITS.value_bytes))]
    ValueTooLarge {
        /// Its size in bytes of JSON.
        bytes: usize,
    },
    /// The scope's newest values together would pass the limit.
    #[error("this run's state would hold {} KiB with this value ({} KiB now); the limit is {} KiB: overwrite entries you no longer need with short summaries, or store a summary", kib(*.total), kib(*.used), kib(LIMITS.scope_bytes))]
    ScopeFull {
        /// What the other keys' newest values hold, in bytes.
        used: usize,
        /// What they would hold with this value.
        total: usize,
    },
    /// The scope has as many keys as it may.
    #[error("this run's state already has {} keys, the most it may hold: write to an existing key instead of a new one", LIMITS.keys)]
    TooManyKeys,
    /// Another write came first.
    #[error("{}", conflict_text(.key, *.expected, .newest.as_ref()))]
    Conflict {
        /// The key.
        key: String,
        /// The version the write expected to replace (0: none).
        expected: u32,
        /// The newest version and its author, if the key exists.
        newest: Option<(u32, String)>,
    },
    /// A note is empty.
    #[error("the note is empty: write what you want the other agents to know")]
    EmptyNote,
    /// A note is too long.
    #[error("the note is {} KiB; the limit is {} KiB: write a shorter note, or store the details under a key", kib(*.bytes), kib(LIMITS.note_bytes))]
    NoteTooLarge {
        /// Its size in bytes.
        bytes: usize,
    },
    /// The scope has as many notes as it may.
    #[error("this run already has {} notes, the most it may hold: store what is left to say under a key", LIMITS.notes)]
    TooManyNotes,
}

fn conflict_text(key: &str, expected: u32, newest: Option<&(u32, String)>) -> String {
    match newest {
        Some((v, author)) if expected == 0 => format!(
            "the key {key:?} already exists (version {v}, written by {author}); read it, then write with expected_version {v} to replace it"
        ),
        Some((v, author)) => format!(
            "the key {key:?} was changed since version {expected}: it is at version {v}, written by {author}; read it again, then write with expected_version {v}"
        ),
        None => format!(
            "the key {key:?} does not exist, so it is not at version {expected}; write it with expected_version 0 or without one"
        ),
    }
}

/// Checks a key: 1 to 128 characters of `A-Z a-z 0-9 . _ / -`.
pub fn check_key(key: &str) -> Result<(), RunStateError> {
    let bad = |reason: String| RunStateError::BadKey {
        key: key.chars().take(140).collect(),
        reason,
    };
    let len = key.chars().count();
    if len == 0 {
        return Err(bad("it is empty".into()));
    }
    if len > LIMITS.key_chars {
        return Err(bad(format!(
            "it is {len} characters long; at most {} are allowed",
            LIMITS.key_chars
        )));
    }
    if let Some(c) = key
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-')))
    {
        return Err(bad(format!(
            "it contains {c:?}; use letters, digits, '.', '_', '/' and '-'"
        )));
    }
    Ok(())
}

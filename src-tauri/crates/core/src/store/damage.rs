//! Telling a damaged database apart, and saying what to do about it (ST-04); also the other
//! SQLite result codes a person must hear about in words (a full disk, a lock held too long).
//!
//! A database file cut short (a full disk, a bad copy, a sync tool) or overwritten is found two
//! ways, both without changing the file:
//! - before it is opened, from its 100-byte header: the SQLite magic string, and the page count
//!   the header records against the file's real length (a file shorter than its header says
//!   was cut). This costs one small read, so every CLI command can afford it; a full
//!   `PRAGMA quick_check` would read the whole file on every start.
//! - while it is opened and upgraded, from SQLite's own result codes (`SQLITE_CORRUPT`,
//!   `SQLITE_NOTADB`), which are typed codes, not message text.
//!
//! Either way the error names the file and the ways out: restore the newest backup written
//! before an upgrade, or move the file aside and start fresh. Nothing is deleted or rewritten:
//! the person decides.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::StoreError;

/// SQLite's file magic.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// SQLite's primary result codes (sqlx reports the extended code, whose low byte this is).
const SQLITE_BUSY: i32 = 5;
const SQLITE_LOCKED: i32 = 6;
const SQLITE_CORRUPT: i32 = 11;
const SQLITE_FULL: i32 = 13;
const SQLITE_NOTADB: i32 = 26;

/// Why the header says the file at `path` is damaged, if it does. A missing or empty file is
/// not damaged: SQLite makes a new database there.
pub(super) fn check_header(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len == 0 {
        return None;
    }
    let mut header = [0u8; 100];
    if len < 100 || file.read_exact(&mut header).is_err() {
        return Some(format!(
            "it is {len} bytes long, shorter than a database header"
        ));
    }
    if &header[..16] != MAGIC {
        return Some("it does not start like an SQLite database".into());
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    // The header's page count is valid only when its change counter matches the
    // "version-valid-for" number (SQLite file format, section 1.3.7).
    let valid = header[24..28] == header[92..96];
    let expected = pages.saturating_mul(page_size);
    if valid && pages > 0 && len < expected {
        return Some(format!(
            "it is {len} bytes long but its header says {expected}: it was cut short"
        ));
    }
    None
}

/// SQLite's primary result code of a database error.
fn primary_code(e: &sqlx::Error) -> Option<i32> {
    match e {
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|c| c.parse::<i32>().ok())
            .map(|c| c & 0xff),
        _ => None,
    }
}

/// Whether a database error says the file is damaged.
pub(super) fn is_damage(e: &sqlx::Error) -> bool {
    matches!(primary_code(e), Some(SQLITE_CORRUPT | SQLITE_NOTADB))
}

/// Whether a database error says the disk, or the database's page limit, is full.
pub(super) fn is_full(e: &sqlx::Error) -> bool {
    primary_code(e) == Some(SQLITE_FULL) || matches!(e, sqlx::Error::Io(io) if is_io_full(io))
}

/// Whether a file-system error says the disk is full (or the user's quota is used up).
pub(super) fn is_io_full(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull
        || e.raw_os_error()
            .is_some_and(|c| c == libc::ENOSPC || c == libc::EDQUOT)
}

/// Whether a database error says another connection holds a lock this one waited for in vain.
pub(super) fn is_busy(e: &sqlx::Error) -> bool {
    matches!(primary_code(e), Some(SQLITE_BUSY | SQLITE_LOCKED))
}

/// The error for a damaged file at `path`, with the newest backup beside it, if any.
pub(super) fn damaged(path: &Path, reason: String) -> StoreError {
    StoreError::Damaged {
        path: path.to_path_buf(),
        reason,
        backup: newest_backup(path),
    }
}

/// The newest `<file>.v<N>.bak` written before an upgrade, by modification time.
fn newest_backup(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let dir = path.parent()?;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(&format!("{name}.v")) && n.ends_with(".bak")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(at, _)| *at)
        .map(|(_, p)| p)
}

/// The ways out, in words, for [`StoreError::Damaged`]'s message.
pub(super) fn ways_out(path: &Path, backup: Option<&Path>) -> String {
    let aside = format!(
        "move {} aside (with its -wal and -shm files) and start Switchboard again to begin with \
         an empty database; the moved file keeps what it holds",
        path.display()
    );
    match backup {
        Some(b) => format!(
            "restore the backup {} by copying it over {}, or {aside}",
            b.display(),
            path.display()
        ),
        None => aside,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Store;
    use super::*;

    /// A real database with a few pages of data, closed (checkpointed).
    async fn database(dir: &Path) -> PathBuf {
        let path = dir.join("switchboard.sqlite");
        let store = Store::open(&path).await.unwrap();
        for i in 0..50 {
            store
                .create_conversation(&format!("conversation {i} {}", "x".repeat(500)))
                .await
                .unwrap();
        }
        store.close().await;
        path
    }

    fn message(e: &StoreError) -> String {
        e.to_string()
    }

    #[tokio::test]
    async fn a_database_cut_short_is_named_with_the_ways_out_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path()).await;
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len > 8 * 4096, "the test database is too small: {len}");
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len / 2).unwrap();
        drop(f);
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).await.unwrap_err();
        assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
        let text = message(&err);
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("cut short"), "{text}");
        assert!(text.contains("move") && text.contains("aside"), "{text}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "the file was changed"
        );
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_database_is_refused_and_a_backup_is_offered() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path()).await;
        let backup = dir.path().join("switchboard.sqlite.v9.bak");
        std::fs::copy(&path, &backup).unwrap();
        std::fs::write(&path, vec![0x42; 64 * 1024]).unwrap();
        let err = Store::open(&path).await.unwrap_err();
        let text = message(&err);
        assert!(text.contains("does not start like"), "{text}");
        assert!(text.contains(&backup.display().to_string()), "{text}");
        assert!(text.contains("restore the backup"), "{text}");
        // The backup itself opens.
        Store::open(&backup).await.unwrap().close().await;
    }

    #[tokio::test]
    async fn corrupt_pages_found_by_sqlite_are_reported_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path()).await;
        // Garbage over page 2 on: the header stays valid, SQLite finds the rest.
        let mut bytes = std::fs::read(&path).unwrap();
        let page = usize::from(u16::from_be_bytes([bytes[16], bytes[17]]));
        for b in &mut bytes[page..] {
            *b = 0xA5;
        }
        std::fs::write(&path, &bytes).unwrap();
        let err = Store::open(&path).await.unwrap_err();
        assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
        assert!(message(&err).contains(&path.display().to_string()));
    }

    #[test]
    fn an_empty_or_missing_file_is_a_new_database() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.sqlite");
        assert_eq!(check_header(&missing), None);
        std::fs::write(&missing, b"").unwrap();
        assert_eq!(check_header(&missing), None);
        std::fs::write(&missing, b"short").unwrap();
        assert!(check_header(&missing).is_some());
    }
}

//! Durable state in one SQLite file, through sqlx with embedded migrations.
//!
//! Durability rules (ST-01, ST-03): WAL journal, `synchronous=FULL`, foreign keys on, a busy
//! timeout so the CLI and the desktop app can share the file, one writer connection (SQLite
//! allows one writer at a time anyway; a single-connection pool turns lock contention into a
//! queue) and a small pool of readers. Before pending migrations run on an existing database,
//! a copy is written with `VACUUM INTO`; a database written by a newer Switchboard is refused
//! rather than guessed at.
//!
//! Queries are runtime-checked (`sqlx::query_as`), so a fresh machine builds without a
//! `DATABASE_URL`.

mod access;
mod audit;
mod conversations;
mod damage;
mod pins;
mod policy;
mod providers;
mod servers;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

pub use access::ResultReview;
pub use audit::{
    chain_hash, AuditEntry, AuditPage, AuditQuery, BadRow, ChainFields, NewAuditEntry, Tamper,
    VerifyReport, AUDIT_PAGE_MAX, DETAIL_MAX, GENESIS_HASH,
};
pub use conversations::{
    fts_query, iso_utc, render_json, render_markdown, ApprovalDecision, ArchiveFilter,
    Conversation, ConversationExport, ConversationPage, ConversationQuery, ConversationSummary,
    DecidedBy, ImportedMessage, ListCursor, MessageEnd, MessageStatus, ModelUsage, NewSummary,
    NewToolCall, Recovered, SearchHit, StoredApproval, StoredMessage, StoredToolCall, Summary,
    ToolCallEnd, ToolCallStatus, UsageTotals, EXPORT_FORMAT_VERSION, HIGHLIGHT_END,
    HIGHLIGHT_START, PREFIX_MIN, PREVIEW_CHARS,
};
pub use pins::PendingItem;
pub use policy::{ServerTag, StoredRule};
pub use providers::ProviderRecord;
pub use servers::TrustRecord;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Run on every reader connection: the full-text index's vocabulary, which search reads to
/// expand a typed prefix into the index's terms (`conversations/search.rs`). A `temp` virtual
/// table rather than a migration: it stores nothing, needs no schema version, and a read-only
/// connection may still create temp objects. `fts5vocab` resolves `messages_fts` only when
/// read, so this works before migrations have run.
const READER_SETUP: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_fts_vocab \
     USING fts5vocab(main, messages_fts, 'instance')";

/// Why a storage operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database could not be opened or queried.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    /// A migration failed; the database was left as it was (or restored from the backup).
    #[error("could not upgrade the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The file was written by a newer version.
    #[error("the database at {path} was written by a newer Switchboard (schema {found}, this build knows up to {known}); upgrade Switchboard or point --data-dir elsewhere")]
    TooNew {
        /// The database path.
        path: PathBuf,
        /// The highest migration applied in the file.
        found: i64,
        /// The highest migration this build has.
        known: i64,
    },
    /// The database file is damaged (cut short, overwritten, corrupt pages). Nothing was
    /// changed; the message names the file and the ways out (ST-04).
    #[error(
        "the database {} is damaged: {reason}. Nothing was changed; to go on, {}.",
        .path.display(),
        damage::ways_out(path, backup.as_deref())
    )]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
        /// The newest backup beside it, if there is one.
        backup: Option<PathBuf>,
    },
    /// A stored row no longer parses.
    #[error("stored {what} is corrupt: {reason}")]
    Corrupt {
        /// Which record.
        what: String,
        /// What went wrong.
        reason: String,
    },
    /// A row with this key exists already.
    #[error("{0} already exists")]
    Exists(String),
    /// No row with this key exists.
    #[error("{0} does not exist")]
    NotFound(String),
    /// File-system trouble around the database (creating its folder, the backup).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The database handle. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    writer: SqlitePool,
    reader: SqlitePool,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                context: format!("could not create {}", dir.display()),
                source,
            })?;
        }
        let existed = path.exists();
        if let Some(reason) = damage::check_header(path) {
            return Err(damage::damaged(path, reason));
        }
        Self::open_checked(path, existed)
            .await
            .map_err(|e| match e {
                StoreError::Db(db) if damage::is_damage(&db) => {
                    damage::damaged(path, db.to_string())
                }
                StoreError::Migrate(sqlx::migrate::MigrateError::Execute(db))
                    if damage::is_damage(&db) =>
                {
                    damage::damaged(path, db.to_string())
                }
                other => other,
            })
    }

    async fn open_checked(path: &Path, existed: bool) -> Result<Self, StoreError> {
        let opts = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        // No idle timeout or lifetime: connections to a local file need no recycling, and
        // without them sqlx 0.9.0 starts no maintenance task, whose loop can spin at 100% CPU
        // after the pool closes and hang runtime shutdown (launchbadge/sqlx#3645; seen in a
        // 1,000-kill run of tests/kill.rs).
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(opts.clone())
            .await?;
        let store = Self {
            reader: SqlitePoolOptions::new()
                .max_connections(4)
                .idle_timeout(None)
                .max_lifetime(None)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        sqlx::query(READER_SETUP).execute(conn).await?;
                        Ok(())
                    })
                })
                .connect_lazy_with(opts.read_only(true)),
            writer,
        };
        store.migrate(path, existed).await?;
        Ok(store)
    }

    async fn migrate(&self, path: &Path, existed: bool) -> Result<(), StoreError> {
        let known = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
        let applied: Vec<(i64,)> = if existed {
            sqlx::query_as("SELECT version FROM _sqlx_migrations WHERE success = 1")
                .fetch_all(&self.writer)
                .await
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let found = applied.iter().map(|(v,)| *v).max().unwrap_or(0);
        if found > known {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                known,
            });
        }
        let pending = MIGRATOR
            .iter()
            .any(|m| !applied.iter().any(|(v,)| *v == m.version));
        if existed && found > 0 && pending {
            let backup = backup_path(path, found);
            let _ = std::fs::remove_file(&backup);
            sqlx::query("VACUUM INTO ?")
                .bind(backup.to_string_lossy().into_owned())
                .execute(&self.writer)
                .await?;
            tracing::info!(backup = %backup.display(), "database backed up before upgrade");
        }
        // sqlx runs each migration in its own transaction.
        MIGRATOR.run(&self.writer).await?;
        Ok(())
    }

    /// Runs SQLite's `PRAGMA quick_check` and returns its verdict (`"ok"` when healthy).
    pub async fn quick_check(&self) -> Result<String, StoreError> {
        let (v,): (String,) = sqlx::query_as("PRAGMA quick_check")
            .fetch_one(&self.reader)
            .await?;
        Ok(v)
    }

    /// Closes both pools, checkpointing the WAL.
    pub async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }

    /// SQLite's own consistency check (`PRAGMA integrity_check`): `["ok"]` when the file is
    /// sound, otherwise one line per problem.
    pub async fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = sqlx::query_as("PRAGMA integrity_check")
            .fetch_all(self.writer())
            .await?;
        Ok(rows.into_iter().map(|(r,)| r).collect())
    }

    pub(crate) fn writer(&self) -> &SqlitePool {
        &self.writer
    }

    pub(crate) fn reader(&self) -> &SqlitePool {
        &self.reader
    }
}

fn backup_path(path: &Path, version: i64) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".v{version}.bak"));
    path.with_file_name(name)
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn opens_and_sets_pragmas() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db/sb.sqlite")).await.unwrap();
        let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode")
            .fetch_one(store.writer())
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        let (fk,): (i64,) = sqlx::query_as("PRAGMA foreign_keys")
            .fetch_one(store.writer())
            .await
            .unwrap();
        assert_eq!(fk, 1);
        assert_eq!(store.quick_check().await.unwrap(), "ok");
        store.close().await;
        // Reopening an up-to-date database neither fails nor writes a backup.
        let again = Store::open(&dir.path().join("db/sb.sqlite")).await.unwrap();
        again.close().await;
        let backups = std::fs::read_dir(dir.path().join("db"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".bak")
            })
            .count();
        assert_eq!(backups, 0);
    }

    #[tokio::test]
    async fn refuses_database_from_the_future() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sb.sqlite");
        let store = Store::open(&path).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) VALUES (999999, 'future', CURRENT_TIMESTAMP, 1, x'00', 0)",
        )
        .execute(store.writer())
        .await
        .unwrap();
        store.close().await;
        let err = Store::open(&path).await.unwrap_err();
        assert!(
            matches!(err, StoreError::TooNew { found: 999999, .. }),
            "{err}"
        );
    }
}

//! Durable state in one SQLite file, through sqlx with embedded migrations.
//!
//! Durability rules (ST-01, ST-03): WAL journal, `synchronous=FULL`, foreign keys on, a busy
//! timeout so the CLI and the desktop app can share the file, one writer connection (SQLite
//! allows one writer at a time anyway; a single-connection pool turns lock contention into a
//! queue) and a small pool of readers. Before pending migrations run on an existing database,
//! a copy is written with `VACUUM INTO`; a database written by a newer Switchboard is refused
//! rather than guessed at.
//!
//! Several processes on one file (the desktop app and any number of CLIs, issue 11): SQLite
//! serializes writers, and the busy timeout makes a writer wait for the lock instead of failing,
//! with two exceptions this module closes off:
//! - a transaction that reads and then writes cannot wait: when another process committed in
//!   between, SQLite answers `SQLITE_BUSY` at once (its snapshot is stale). Every
//!   read-then-write transaction therefore starts with `BEGIN IMMEDIATE` (`write_tx`), which
//!   takes the write lock first and does wait.
//! - opening: switching a new file to WAL takes a lock SQLite does not wait for, and
//!   migrations read which versions are applied and then apply the rest. Opening retries while
//!   the file is busy (up to [`OPEN_PATIENCE`]), and pending migrations run inside one
//!   `BEGIN IMMEDIATE` transaction, in which sqlx reads the applied versions again: a process
//!   that lost the race finds them applied and does nothing.
//!
//! A wait longer than that still ends in [`StoreError::Busy`], a sentence for a person rather
//! than SQLite's "database is locked".
//!
//! A full disk (or SQLite's size limit) fails the one operation with [`StoreError::Full`]:
//! every write that spans several rows runs in one transaction, so nothing is half written,
//! and what was committed before stays as it was.
//!
//! Queries are runtime-checked (`sqlx::query_as`), so a fresh machine builds without a
//! `DATABASE_URL`.

mod access;
mod audit;
mod conversations;
mod damage;
mod demand;
#[cfg(test)]
mod full_tests;
mod metrics;
#[cfg(test)]
mod open_tests;
mod pins;
mod policy;
mod providers;
mod servers;
mod turn_redactions;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

pub use access::ResultReview;
pub use audit::{
    chain_hash, AppendStamp, AuditEntry, AuditPage, AuditQuery, BadRow, ChainFields, NewAuditEntry,
    Refreshed, Tamper, VerifyReport, AUDIT_PAGE_MAX, DETAIL_MAX, GENESIS_HASH,
};
pub use conversations::{
    fts_query, iso_utc, render_json, render_markdown, ApprovalDecision, ArchiveFilter,
    Conversation, ConversationExport, ConversationPage, ConversationQuery, ConversationSummary,
    DecidedBy, ImportedMessage, ListCursor, MessageEnd, MessageStatus, ModelUsage, NewSummary,
    NewToolCall, Recovered, SearchHit, StoredApproval, StoredMessage, StoredToolCall, Summary,
    ToolCallEnd, ToolCallStatus, UsageTotals, EXPORT_FORMAT_VERSION, HIGHLIGHT_END,
    HIGHLIGHT_START, PREFIX_MIN, PREVIEW_CHARS,
};
pub use demand::LastTools;
pub use metrics::{
    bucket_of, Compacted, ErrorCounts, ExportClaim, Latency, MetricKind, MetricSample,
    MetricsQuery, MetricsReport, Outcome, SeriesPoint, ServerMetrics, Stats, ToolMetrics,
    BUCKETS_MS, HISTOGRAM_LEN, RAW_KEEP_MS, RAW_MAX, ROLLUP_KEEP_MS,
};
pub use pins::PendingItem;
pub use policy::{PolicyRows, ServerTag, StoredRule};
pub use providers::ProviderRecord;
pub use servers::TrustRecord;
pub use turn_redactions::TurnRedaction;

pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

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
    Db(#[source] sqlx::Error),
    /// A migration failed; the database was left as it was (or restored from the backup).
    #[error("could not upgrade the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The disk holding the database (or the file's size limit) is full. This operation
    /// changed nothing; everything stored before it is intact.
    #[error(
        "could not save to {}: the disk is full (or the database reached its size limit). \
         Nothing of this change was saved and everything saved before it is intact; free some \
         space on that disk, then try again",
        .path.as_deref().map_or_else(|| "Switchboard's database".into(), |p| p.display().to_string())
    )]
    Full {
        /// The file that could not grow, when known.
        path: Option<PathBuf>,
    },
    /// Another process (the app or a CLI) kept the database busy longer than Switchboard
    /// waits. Nothing of this operation was saved.
    #[error(
        "the database{} stayed busy with another Switchboard (the app or a CLI) for over {} \
         seconds, so nothing was done; try again when that one is done",
        .path.as_deref().map_or_else(String::new, |p| format!(" {}", p.display())),
        BUSY_TIMEOUT.as_secs()
    )]
    Busy {
        /// The database, when known.
        path: Option<PathBuf>,
    },
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

impl From<sqlx::Error> for StoreError {
    /// A full disk and a lock held too long become their own variants wherever they happen,
    /// so every write path reports them the same way without each one checking.
    fn from(e: sqlx::Error) -> Self {
        if damage::is_full(&e) {
            Self::Full { path: None }
        } else if damage::is_busy(&e) {
            Self::Busy { path: None }
        } else {
            Self::Db(e)
        }
    }
}

impl StoreError {
    /// Names `path` in an error that can name a file but does not yet. A full disk or a busy
    /// database is reported by the failing statement, which does not know the file; opening
    /// names it, and a caller holding the store can with [`Store::path`].
    pub fn at(self, path: &Path) -> Self {
        match self {
            Self::Full { path: None } => Self::Full {
                path: Some(path.to_path_buf()),
            },
            Self::Busy { path: None } => Self::Busy {
                path: Some(path.to_path_buf()),
            },
            Self::Migrate(sqlx::migrate::MigrateError::Execute(e))
            | Self::Migrate(sqlx::migrate::MigrateError::ExecuteMigration(e, _))
                if damage::is_full(&e) || damage::is_busy(&e) =>
            {
                StoreError::from(e).at(path)
            }
            Self::Io { source, .. } if damage::is_io_full(&source) => Self::Full {
                path: Some(path.to_path_buf()),
            },
            other => other,
        }
    }

    /// Whether the operation may succeed once another process releases the database.
    fn is_busy(&self) -> bool {
        match self {
            Self::Busy { .. } => true,
            Self::Migrate(sqlx::migrate::MigrateError::Execute(e))
            | Self::Migrate(sqlx::migrate::MigrateError::ExecuteMigration(e, _)) => {
                damage::is_busy(e)
            }
            _ => false,
        }
    }
}

/// How long a connection waits for another process's lock before a statement fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long opening keeps trying while other processes create, convert or migrate the same
/// file (each try already waits [`BUSY_TIMEOUT`] where SQLite lets it).
const OPEN_PATIENCE: Duration = Duration::from_secs(60);

/// The database handle. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    writer: SqlitePool,
    reader: SqlitePool,
    /// The file, for errors that name it.
    path: Arc<Path>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    ///
    /// Safe to call from several processes at once on the same file: see the module docs.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| {
                StoreError::Io {
                    context: format!("could not create {}", dir.display()),
                    source,
                }
                .at(path)
            })?;
        }
        let existed = path.exists();
        if let Some(reason) = damage::check_header(path) {
            return Err(damage::damaged(path, reason));
        }
        let deadline = Instant::now() + OPEN_PATIENCE;
        let mut pause = Duration::from_millis(20);
        loop {
            match Self::open_checked(path, existed).await {
                Err(e) if e.is_busy() && Instant::now() < deadline => {
                    tracing::debug!(error = %e, "database busy while opening; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                Ok(store) => return Ok(store),
                Err(e) => return Err(Self::classify_open_error(path, e)),
            }
        }
    }

    fn classify_open_error(path: &Path, e: StoreError) -> StoreError {
        match e {
            StoreError::Db(db) if damage::is_damage(&db) => damage::damaged(path, db.to_string()),
            StoreError::Migrate(sqlx::migrate::MigrateError::Execute(db))
                if damage::is_damage(&db) =>
            {
                damage::damaged(path, db.to_string())
            }
            other => other.at(path),
        }
    }

    async fn open_checked(path: &Path, existed: bool) -> Result<Self, StoreError> {
        let opts = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        // No idle timeout or lifetime: connections to a local file need no recycling, and
        // without them sqlx 0.9.0 starts no maintenance task, whose loop can spin at 100% CPU
        // after the pool closes and hang runtime shutdown (launchbadge/sqlx#3645; seen in a
        // 1,000-kill run of tests/kill.rs).
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .after_release(|conn, _| Box::pin(keep_writer(conn)))
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
            path: Arc::from(path),
        };
        if let Err(e) = store.migrate(path, existed).await {
            store.close().await;
            return Err(e);
        }
        Ok(store)
    }

    async fn migrate(&self, path: &Path, existed: bool) -> Result<(), StoreError> {
        let known = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
        // A first look without any lock: an up-to-date database (every start but the first
        // after an upgrade) needs no write at all.
        let applied: Vec<(i64,)> =
            match sqlx::query_as("SELECT version FROM _sqlx_migrations WHERE success = 1")
                .fetch_all(&self.writer)
                .await
            {
                Ok(rows) => rows,
                Err(e) if damage::is_busy(&e) || damage::is_damage(&e) => return Err(e.into()),
                // No table yet: a new database.
                Err(_) => Vec::new(),
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
        if !pending {
            return Ok(());
        }
        if existed && found > 0 {
            self.backup(path, found).await?;
        }
        // Holding the write lock for the whole run: sqlx reads the applied versions again
        // inside it, so of several processes upgrading at once the first applies the
        // migrations and the others find nothing left to do. sqlx runs each migration in a
        // savepoint of this transaction; all of them commit together or none does.
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        // `run_direct` rather than `run`: `run`'s `Acquire` bound over a borrowed connection
        // makes the future not `Send` for every lifetime (sqlx's own note on `run_direct`),
        // and the app opens the store on a spawned task.
        MIGRATOR.run_direct(None, &mut *tx, false).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Writes the copy kept before an upgrade: to a temporary name first, then renamed, so a
    /// process upgrading at the same time never sees half a backup, nor fails on ours.
    async fn backup(&self, path: &Path, version: i64) -> Result<(), StoreError> {
        let backup = backup_path(path, version);
        let mut tmp = backup.clone().into_os_string();
        tmp.push(format!(
            ".{}-{:x}.tmp",
            std::process::id(),
            rand::random::<u64>()
        ));
        let tmp = PathBuf::from(tmp);
        let _ = std::fs::remove_file(&tmp);
        let written = sqlx::query("VACUUM INTO ?")
            .bind(tmp.to_string_lossy().into_owned())
            .execute(&self.writer)
            .await;
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(StoreError::from(e).at(&backup));
        }
        std::fs::rename(&tmp, &backup).map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            StoreError::Io {
                context: format!("could not write the backup {}", backup.display()),
                source,
            }
        })?;
        tracing::info!(backup = %backup.display(), "database backed up before upgrade");
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
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

    /// A write transaction holding SQLite's write lock from its first statement
    /// (`BEGIN IMMEDIATE`): a deferred one that reads first could fail to upgrade its lock when
    /// another process on the same file writes, and `busy_timeout` does not retry that. Every
    /// transaction that writes starts here.
    pub(crate) async fn write_tx(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, StoreError> {
        Ok(self.writer().begin_with("BEGIN IMMEDIATE").await?)
    }

    pub(crate) fn writer(&self) -> &SqlitePool {
        &self.writer
    }

    pub(crate) fn reader(&self) -> &SqlitePool {
        &self.reader
    }
}

/// Whether the writer connection may go back to the pool after use.
///
/// SQLite rolls a transaction back by itself on some errors (a full disk, an I/O error), and
/// sqlx 0.9.0 then fails its own `ROLLBACK` and keeps counting the transaction as open: every
/// later `BEGIN IMMEDIATE` on the connection would fail (`InvalidSavePointStatement`), so one
/// full disk would break every write until a restart. Such a connection is closed instead;
/// the pool opens a fresh one for the next write. The check costs nothing after a commit (no
/// transaction is counted then); after a dropped transaction one round trip lets sqlx's
/// queued rollback run first.
async fn keep_writer(conn: &mut sqlx::SqliteConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection as _;
    if conn.is_in_transaction() {
        conn.ping().await?;
    }
    Ok(!conn.is_in_transaction())
}

fn backup_path(path: &Path, version: i64) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".v{version}.bak"));
    path.with_file_name(name)
}

/// The store stamps rows with the shared leaf clock.
pub(crate) use crate::clock::now_ms;

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

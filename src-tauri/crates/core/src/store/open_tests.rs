//! Several processes opening one database at once (issue 11, point 2): creating it, switching
//! it to WAL and migrating it race, and every one of them must open. Each `Store` here has its
//! own connections, so SQLite's file locks, not the pool's queue, decide, as between processes.

use std::path::Path;

use super::*;

/// Opens `n` stores on `path` at once, each with its own connections (as processes have).
async fn open_at_once(path: &Path, n: usize) -> Vec<Result<Store, StoreError>> {
    let opening: Vec<_> = (0..n)
        .map(|_| {
            let path = path.to_path_buf();
            tokio::spawn(async move { Store::open(&path).await })
        })
        .collect();
    let mut out = Vec::new();
    for o in opening {
        out.push(o.await.unwrap());
    }
    out
}

async fn applied(store: &Store) -> Vec<i64> {
    sqlx::query_as::<_, (i64,)>("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(store.reader())
        .await
        .unwrap()
        .into_iter()
        .map(|(v,)| v)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_opening_a_new_file_at_once_all_open_and_migrate_once() {
    let all: Vec<i64> = MIGRATOR.iter().map(|m| m.version).collect();
    for _ in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sb.sqlite");
        for store in open_at_once(&path, 8).await {
            let store = store.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(applied(&store).await, all);
            store.close().await;
        }
    }
}

/// The control for the test above: without the lock, the same race does break opening.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unserialized_migrations_do_race() {
    let mut failures = 0;
    for _ in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sb.sqlite");
        let runs: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                tokio::spawn(async move {
                    let opts = SqliteConnectOptions::new()
                        .filename(&path)
                        .create_if_missing(true)
                        .busy_timeout(BUSY_TIMEOUT);
                    let pool = SqlitePoolOptions::new()
                        .max_connections(1)
                        .connect_with(opts)
                        .await?;
                    MIGRATOR.run(&pool).await?;
                    pool.close().await;
                    Ok::<_, StoreError>(())
                })
            })
            .collect();
        for r in runs {
            failures += usize::from(r.await.unwrap().is_err());
        }
    }
    assert!(
        failures > 0,
        "the race never happened: the test above proves nothing"
    );
}

/// An old database being upgraded by several processes at once: one upgrades (and writes
/// one whole backup), the others wait and find it done.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_upgrading_an_old_file_at_once_all_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.sqlite");
    // As an older release left it: every migration but the last applied, and a conversation.
    // (Built by an older migrator, not by forgetting the last one was applied: most
    // migrations cannot run twice, `ALTER TABLE ... ADD COLUMN` among them.)
    let last = MIGRATOR.iter().map(|m| m.version).max().unwrap();
    let older = sqlx::migrate::Migrator {
        migrations: std::borrow::Cow::Owned(
            MIGRATOR
                .iter()
                .filter(|m| m.version < last)
                .cloned()
                .collect(),
        ),
        ..sqlx::migrate::Migrator::DEFAULT
    };
    let opts = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(opts)
        .await
        .unwrap();
    older.run(&pool).await.unwrap();
    sqlx::query(
        "INSERT INTO conversations (id, title, created_at, updated_at) \
         VALUES ('00000000-0000-4000-8000-000000000001', 'kept', 0, 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    for store in open_at_once(&path, 8).await {
        let store = store.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(applied(&store).await.last(), Some(&last));
        let page = store
            .list_conversations(&ConversationQuery::default())
            .await
            .unwrap();
        assert_eq!(page.items.len(), 1);
        store.close().await;
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".bak"))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let backup = Store::open(&dir.path().join(&names[0])).await.unwrap();
    backup.close().await;
}

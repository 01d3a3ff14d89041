//! Unit tests of the metrics tables: reports over raw samples, compaction into rollups and
//! retention (old timestamps injected through the store API), and the export watermark.

use super::*;

async fn open() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
    (store, dir)
}

fn sample(at_ms: i64, server: &str, name: &str, outcome: Outcome, ms: u64) -> MetricSample {
    MetricSample {
        at_ms,
        server: ServerId::new(server).unwrap(),
        kind: MetricKind::Tool,
        name: name.into(),
        outcome,
        duration_us: if outcome.timed() { ms * 1000 } else { 0 },
        bytes_in: 10,
        bytes_out: 100,
        tokens: 25,
    }
}

fn query(since_ms: i64, until_ms: i64) -> MetricsQuery {
    MetricsQuery {
        server: None,
        since_ms,
        until_ms,
        points: 10,
    }
}

const NOW: i64 = 1_800_000_000_000;

#[tokio::test]
async fn a_report_counts_groups_and_ranks_raw_samples_exactly() {
    let (store, _dir) = open().await;
    let mut samples: Vec<MetricSample> = (1..=100)
        .map(|i| sample(NOW - 1000 + i, "fs", "read", Outcome::Ok, i as u64))
        .collect();
    samples.push(sample(NOW - 10, "fs", "write", Outcome::ToolError, 7));
    samples.push(sample(NOW - 10, "fs", "write", Outcome::Denied, 0));
    samples.push(sample(NOW - 10, "web", "get", Outcome::Timeout, 3));
    // Outside the window: not counted.
    samples.push(sample(NOW - 5000, "fs", "read", Outcome::Ok, 1));
    store.record_metrics(&samples).await.unwrap();
    let r = store.metrics_report(&query(NOW - 2000, NOW)).await.unwrap();
    assert_eq!(r.total.calls, 103);
    assert_eq!(r.total.errors.tool_error, 1);
    assert_eq!(r.total.errors.denied, 1);
    assert_eq!(r.total.errors.timeout, 1);
    assert_eq!(r.total.errors.total(), 3);
    assert_eq!(r.total.bytes_out, 103 * 100);
    assert_eq!(r.servers.len(), 2);
    let fs = &r.servers[0];
    assert_eq!(fs.server.as_str(), "fs");
    let read = fs.tools.iter().find(|t| t.name == "read").unwrap();
    assert_eq!(read.stats.calls, 100);
    let lat = read.stats.latency.clone().unwrap();
    assert!(lat.exact);
    assert_eq!((lat.p50_ms, lat.p95_ms, lat.p99_ms), (50.0, 95.0, 99.0));
    assert_eq!(lat.max_ms, 100.0);
    // A refused call has no latency: `write` has one timed call.
    let write = fs.tools.iter().find(|t| t.name == "write").unwrap();
    assert_eq!(write.stats.histogram.iter().sum::<u64>(), 1);
    assert_eq!(write.stats.latency.clone().unwrap().max_ms, 7.0);
    assert_eq!(r.series.iter().map(|p| p.calls).sum::<u64>(), 103);
    // One server only.
    let only = store
        .metrics_report(&MetricsQuery {
            server: Some(ServerId::new("web").unwrap()),
            ..query(NOW - 2000, NOW)
        })
        .await
        .unwrap();
    assert_eq!(only.total.calls, 1);
    assert_eq!(only.servers.len(), 1);
}

#[tokio::test]
async fn old_samples_fold_into_rollups_and_old_rollups_expire() {
    let (store, _dir) = open().await;
    let day_ago = NOW - RAW_KEEP_MS - 10 * HOUR_MS;
    let month_ago = NOW - ROLLUP_KEEP_MS - 5 * HOUR_MS;
    store
        .record_metrics(&[
            sample(day_ago, "fs", "read", Outcome::Ok, 3),
            sample(day_ago + 1, "fs", "read", Outcome::Ok, 40),
            sample(day_ago + 2, "fs", "read", Outcome::RpcError, 400),
            sample(month_ago, "fs", "read", Outcome::Ok, 3),
            sample(NOW - 1000, "fs", "read", Outcome::Ok, 2),
        ])
        .await
        .unwrap();
    // First pass: the month-old sample folds into a rollup that is already too old.
    let c = store.compact_metrics(NOW).await.unwrap();
    assert_eq!(c.folded, 4);
    assert_eq!(c.expired, 1);
    let (raw,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM metric_samples")
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(raw, 1, "only the recent sample stays raw");
    let r = store
        .metrics_report(&query(NOW - ROLLUP_KEEP_MS - 10 * HOUR_MS, NOW))
        .await
        .unwrap();
    assert_eq!(
        r.total.calls, 4,
        "the expired rollup is gone, the rest adds up"
    );
    assert_eq!(r.total.errors.rpc_error, 1);
    let lat = r.total.latency.unwrap();
    assert!(!lat.exact, "a rollup in the window: histogram percentiles");
    assert_eq!(lat.max_ms, 400.0);
    assert!(lat.p50_ms <= lat.p95_ms && lat.p95_ms <= lat.p99_ms && lat.p99_ms <= lat.max_ms);
    // Folding again merges into the same hour's rollup.
    store
        .record_metrics(&[sample(day_ago + 3, "fs", "read", Outcome::Ok, 1)])
        .await
        .unwrap();
    assert_eq!(store.compact_metrics(NOW).await.unwrap().folded, 1);
    let (calls,): (i64,) = sqlx::query_as("SELECT SUM(calls) FROM metric_rollups")
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(calls, 4);
    let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM metric_rollups")
        .fetch_one(store.reader())
        .await
        .unwrap();
    assert_eq!(rows, 2, "one row per hour and outcome");
}

#[tokio::test]
async fn the_export_watermark_claims_each_sample_once() {
    let (store, _dir) = open().await;
    assert!(store.claim_metrics_export().await.unwrap().is_none());
    let batch: Vec<_> = (0..3)
        .map(|i| sample(NOW + i, "fs", "read", Outcome::Ok, 1))
        .collect();
    store.record_metrics(&batch).await.unwrap();
    let first = store.claim_metrics_export().await.unwrap().unwrap();
    assert_eq!(first.samples.len(), 3);
    assert!(store.claim_metrics_export().await.unwrap().is_none());
    // A failed export gives its claim back.
    store.unclaim_metrics_export(&first).await.unwrap();
    let again = store.claim_metrics_export().await.unwrap().unwrap();
    assert_eq!(again.samples, first.samples);
    store.record_metrics(&batch[..1]).await.unwrap();
    let next = store.claim_metrics_export().await.unwrap().unwrap();
    assert_eq!(next.samples.len(), 1);
    // An old claim given back after a newer one changes nothing.
    store.unclaim_metrics_export(&again).await.unwrap();
    assert!(store.claim_metrics_export().await.unwrap().is_none());
}

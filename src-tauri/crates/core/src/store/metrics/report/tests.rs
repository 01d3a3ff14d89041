//! Unit tests of the report's arithmetic: percentile ranks, histogram bounds, and the
//! per-server time series.

use super::super::bucket_of;
use super::*;

#[test]
fn nearest_rank_picks_the_right_index() {
    assert_eq!(nearest_rank(1, 0.5), 0);
    assert_eq!(nearest_rank(100, 0.5), 49);
    assert_eq!(nearest_rank(100, 0.95), 94);
    assert_eq!(nearest_rank(100, 0.99), 98);
    assert_eq!(nearest_rank(3, 0.99), 2);
}

#[test]
fn histogram_percentiles_are_bucket_upper_bounds() {
    let mut h = [0; HISTOGRAM_LEN];
    h[bucket_of(800)] += 50; // <= 1 ms
    h[bucket_of(40_000)] += 45; // <= 50 ms
    h[bucket_of(900_000)] += 5; // <= 1000 ms
    assert_eq!(from_histogram(&h, 0.50), Some(1.0), "rank 50 of 100");
    assert_eq!(from_histogram(&h, 0.51), Some(50.0));
    assert_eq!(from_histogram(&h, 0.95), Some(50.0));
    assert_eq!(from_histogram(&h, 0.96), Some(1000.0));
    assert_eq!(from_histogram(&h, 0.99), Some(1000.0));
    let mut over = [0; HISTOGRAM_LEN];
    over[bucket_of(90_000_000)] = 1;
    assert_eq!(from_histogram(&over, 0.5), None);
}

fn sample(at_ms: i64, server: &str, outcome: Outcome, ms: u64) -> MetricSample {
    MetricSample {
        at_ms,
        server: ServerId::new(server).unwrap(),
        kind: MetricKind::Tool,
        name: "t".into(),
        outcome,
        duration_us: if outcome.timed() { ms * 1000 } else { 0 },
        bytes_in: 1,
        bytes_out: 2,
        tokens: 3,
    }
}

#[test]
fn every_server_gets_its_own_series_with_p95_per_bucket() {
    let q = MetricsQuery {
        server: None,
        since_ms: 0,
        until_ms: 1000,
        points: 4,
    };
    let mut b = Builder::new(&q);
    // Bucket 0 (0..250): "a" 20 calls of 1..=20 ms, the 20th a tool error.
    for i in 1..=20_u64 {
        let o = if i == 20 {
            Outcome::ToolError
        } else {
            Outcome::Ok
        };
        b.sample(&sample(i as i64, "a", o, i));
    }
    // Bucket 2 (500..750): "b" one refusal and one 40 ms call.
    b.sample(&sample(600, "b", Outcome::Denied, 0));
    b.sample(&sample(700, "b", Outcome::Ok, 40));
    let r = b.finish();
    assert_eq!(r.bucket_ms, 250);
    let calls = |s: &[SeriesPoint]| s.iter().map(|p| p.calls).collect::<Vec<_>>();
    assert_eq!(calls(&r.series), [20, 0, 2, 0]);
    assert_eq!(r.series[0].errors, 1);
    assert_eq!(r.series[0].p95_ms, 19.0, "nearest rank 19 of 20");
    assert_eq!(r.series[0].max_ms, 20.0);
    assert_eq!(r.series[2].errors, 1);
    assert_eq!(r.series[2].p95_ms, 40.0, "the refusal has no latency");
    let a = &r.servers[0];
    let bs = &r.servers[1];
    assert_eq!((a.server.as_str(), bs.server.as_str()), ("a", "b"));
    assert_eq!(calls(&a.series), [20, 0, 0, 0]);
    assert_eq!(calls(&bs.series), [0, 0, 2, 0]);
    assert_eq!(bs.series[2].errors, 1);
    assert_eq!(bs.series[1].start_ms, 250);
    assert_eq!(bs.series[1].p95_ms, 0.0);
}

#[test]
fn a_rollup_lands_in_its_hour_bucket_of_its_server() {
    let hour = 3_600_000;
    let q = MetricsQuery {
        server: None,
        since_ms: 0,
        until_ms: 4 * hour,
        points: 4,
    };
    let mut b = Builder::new(&q);
    let mut r = Rollup::default();
    for ms in [3_u64, 30, 300] {
        let mut one = Rollup::default();
        one.add(&sample(0, "a", Outcome::Ok, ms));
        r.merge(&one);
    }
    let a = ServerId::new("a").unwrap();
    b.rollup(2 * hour, &a, MetricKind::Tool, "t", Outcome::Ok, &r);
    let rep = b.finish();
    assert_eq!(rep.servers[0].series[2].calls, 3);
    assert_eq!(
        rep.series[2].p95_ms, 300.0,
        "bucket bound 500 capped at the max"
    );
    assert!((rep.series[2].mean_ms - 111.0).abs() < 1e-9);
}

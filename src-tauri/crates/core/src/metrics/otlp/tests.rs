use super::encode;
use crate::ids::ServerId;
use crate::store::{MetricKind, Outcome};
use crate::store::{MetricSample, HISTOGRAM_LEN};

fn sample(name: &str, outcome: Outcome, ms: u64) -> MetricSample {
    MetricSample {
        at_ms: 1_000,
        server: ServerId::new("fs").unwrap(),
        kind: MetricKind::Tool,
        name: name.into(),
        outcome,
        duration_us: ms * 1000,
        bytes_in: 3,
        bytes_out: 7,
        tokens: 2,
    }
}

#[test]
fn samples_encode_as_otlp_json_with_names_only() {
    let body = encode(&[
        sample("read", Outcome::Ok, 4),
        sample("read", Outcome::Ok, 40),
        sample("read", Outcome::Timeout, 4000),
        sample("write", Outcome::Denied, 0),
    ]);
    let metrics = &body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"];
    let by_name = |n: &str| {
        metrics
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == n)
            .unwrap()
            .clone()
    };
    let calls = by_name("switchboard.mcp.calls");
    let points = calls["sum"]["dataPoints"].as_array().unwrap();
    assert_eq!(points.len(), 3, "read ok, read timeout, write denied");
    assert_eq!(points[0]["asInt"], "2", "64-bit integers are strings");
    assert_eq!(points[0]["timeUnixNano"], "1001000000");
    let duration = by_name("switchboard.mcp.call.duration");
    let h = duration["histogram"]["dataPoints"].as_array().unwrap();
    assert_eq!(h.len(), 1, "a refused call has no duration");
    assert_eq!(h[0]["count"], "3");
    let counts: u64 = h[0]["bucketCounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counts, 3);
    assert_eq!(
        h[0]["explicitBounds"].as_array().unwrap().len() + 1,
        HISTOGRAM_LEN
    );
    let size = by_name("switchboard.mcp.call.response.size");
    assert_eq!(size["sum"]["dataPoints"][0]["asInt"], "21");
}

//! The wall clock, as milliseconds since the Unix epoch.
//!
//! A leaf of its own so that every module that stamps a time (a stored row, a supervisor's
//! retry deadline, a captured log line) reads the same clock without depending on the module
//! that owns the others' data: `mcp` used to reach into `store` for this one function, which
//! put a storage edge under the supervisor (ARCHITECTURE's table: `mcp` may depend on leaves
//! and `secrets` only).

/// Milliseconds since the Unix epoch; 0 when the system clock is set before it.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::now_ms;

    #[test]
    fn reads_a_time_after_2020_that_does_not_go_backwards() {
        let a = now_ms();
        let b = now_ms();
        // 2020-01-01T00:00:00Z.
        assert!(a > 1_577_836_800_000, "{a}");
        assert!(b >= a);
    }
}

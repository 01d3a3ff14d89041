//! Finding which request a refused answer was for, so that request fails at once.
//!
//! The host refuses some lines a server sends: nested past serde_json's recursion limit (a
//! 200,000-deep array), not JSON at all, or otherwise not a JSON-RPC message. Skipping such a
//! line is right for the connection (the next line may be fine), but the request it answered
//! would then wait for its timeout, a minute by default, for an answer that already came. So
//! the line is scanned once more, without building anything: a flat, single-pass walk that
//! tracks only string state and nesting depth, and notes the top-level `"id"` and whether a
//! top-level `"method"` is present. A line with an id and no method is a response; the host
//! answers the waiting request with an error in its place. A line with a method is the server's
//! own request or notification and fails nothing of ours.
//!
//! The walk is linear in the line's length and keeps a few bytes of state whatever the nesting;
//! the line itself is already bounded by the stdio cap (RL-01). An id longer than
//! [`ID_MAX`] bytes is not believed: JSON-RPC ids the host sends are small integers.

use serde_json::Value;

/// The longest id token taken from a refused line.
const ID_MAX: usize = 256;

/// The id of the response `line` would have been, if it is one: a top-level `"id"` that is a
/// number or a string, in an object with no top-level `"method"`.
pub(crate) fn response_id(line: &[u8]) -> Option<Value> {
    let mut scan = Scan::default();
    let mut i = 0;
    // The top level must be an object.
    while i < line.len() && line[i].is_ascii_whitespace() {
        i += 1;
    }
    if line.get(i) != Some(&b'{') {
        return None;
    }
    while i < line.len() {
        let b = line[i];
        match b {
            b'"' => {
                let end = string_end(line, i)?;
                if scan.depth == 1 && scan.expect_key {
                    let key = &line[i + 1..end];
                    let value_at = after_colon(line, end + 1)?;
                    match key {
                        b"id" => scan.id = token(line, value_at),
                        b"method" => scan.method = true,
                        _ => {}
                    }
                    scan.expect_key = false;
                    i = value_at;
                    continue;
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => {
                scan.depth += 1;
                scan.expect_key = b == b'{' && scan.depth == 1;
            }
            b'}' | b']' => {
                scan.depth = scan.depth.checked_sub(1)?;
                if scan.depth == 0 {
                    break;
                }
            }
            b',' if scan.depth == 1 => scan.expect_key = true,
            _ => {}
        }
        i += 1;
    }
    if scan.method {
        return None;
    }
    scan.id
}

#[derive(Default)]
struct Scan {
    depth: usize,
    expect_key: bool,
    id: Option<Value>,
    method: bool,
}

/// The index of the quote that closes the string opening at `start`.
fn string_end(line: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index of the value after the `:` that follows a key ending before `from`.
fn after_colon(line: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < line.len() && line[i].is_ascii_whitespace() {
        i += 1;
    }
    if line.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    while i < line.len() && line[i].is_ascii_whitespace() {
        i += 1;
    }
    Some(i)
}

/// A number or string token at `at`, if it is short enough to be an id.
fn token(line: &[u8], at: usize) -> Option<Value> {
    let end = match line.get(at)? {
        b'"' => string_end(line, at)? + 1,
        b'-' | b'0'..=b'9' => {
            let mut i = at + 1;
            while i < line.len()
                && matches!(line[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
            {
                i += 1;
            }
            i
        }
        _ => return None,
    };
    if end - at > ID_MAX {
        return None;
    }
    match serde_json::from_slice::<Value>(&line[at..end]).ok()? {
        v @ (Value::String(_) | Value::Number(_)) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deep(n: usize) -> String {
        format!("{}{}", "[".repeat(n), "]".repeat(n))
    }

    #[test]
    fn finds_the_id_of_a_refused_response_wherever_it_is() {
        let cases: Vec<(String, Option<Value>)> = vec![
            (
                format!(r#"{{"jsonrpc":"2.0","id":7,"result":{}}}"#, deep(200_000)),
                Some(json!(7)),
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","result":{},"id":"a-1"}}"#,
                    deep(100_000)
                ),
                Some(json!("a-1")),
            ),
            (
                r#" { "id" : 12 , "error": {"code": 1, "message": "x"}} "#.into(),
                Some(json!(12)),
            ),
            // A string containing brackets, quotes and a fake id does not confuse it.
            (
                r#"{"result":{"text":"\"id\":99 ]]]} {"},"id":3}"#.into(),
                Some(json!(3)),
            ),
            // A nested "id" is not the message's.
            (r#"{"result":{"id":5}}"#.into(), None),
            // The server's own request or notification fails nothing of ours.
            (
                r#"{"id":4,"method":"sampling/createMessage","params":[[["#.into(),
                None,
            ),
            (r#"{"method":"notifications/x","id":4}"#.into(), None),
            // Not an object, not JSON, no id, an absurd id.
            (format!("[{}]", deep(10)), None),
            ("garbage".into(), None),
            (r#"{"jsonrpc":"2.0","result":1}"#.into(), None),
            (
                format!(r#"{{"id":"{}","result":1}}"#, "x".repeat(1000)),
                None,
            ),
            (r#"{"id":null,"result":1}"#.into(), None),
            (r#"{"id":{"a":1},"result":1}"#.into(), None),
            // Cut short: the id seen before the cut still counts.
            (r#"{"id":8,"result":[[[["#.into(), Some(json!(8))),
        ];
        for (line, want) in cases {
            let shown: String = line.chars().take(60).collect();
            assert_eq!(response_id(line.as_bytes()), want, "{shown}");
        }
    }

    #[test]
    fn the_scan_is_flat_whatever_the_nesting() {
        // Twenty million brackets: no recursion, so no stack to overflow.
        let line = format!(r#"{{"result":{},"id":1}}"#, deep(10_000_000));
        assert_eq!(response_id(line.as_bytes()), Some(json!(1)));
    }
}

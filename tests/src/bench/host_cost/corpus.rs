//! The outbound requests the redaction figures rewrite: a conversation about a failing deploy
//! in which a person asks, the model calls tools, and the tools answer with JSON, log lines and
//! code. Units of 300 to 700 bytes are added until the request holds the size asked for, so a
//! request of any size has the same mix.
//!
//! With `secrets`, every unit also carries one value the detectors must find, rotating over the
//! kinds (e-mail, phone, API key, password in a URL, JWT, bearer token, card number, and a PEM
//! private key every 25th unit): about two findings per KB, each value distinct, so the
//! placeholder numbering grows with the request as in a long conversation. Every planted value
//! is returned, to check that none reaches the provider. Without `secrets` nothing in the text
//! may be found (the figure fails if anything is redacted).

use serde_json::{json, Value};
use switchboard_core::llm::{ChatRequest, Message, Part, ResultPart, Role, ToolSpec};

/// A request, its text in bytes, and the values planted in it.
pub struct Request {
    /// The request as the turn hands it to the provider.
    pub req: ChatRequest,
    /// Bytes of text a detector reads: the system prompt, texts, tool call arguments as JSON,
    /// tool results' texts.
    pub bytes: usize,
    /// The secrets and personal data planted (empty without `secrets`).
    pub planted: Vec<String>,
}

const SYSTEM: &str = "You are a careful assistant for a small web team. Use the tools to look \
things up before you answer, quote what the tools return when it matters, and say when you are \
not sure. Keep answers short and concrete; prefer code and commands over prose.";

/// A card number of 16 digits passing Luhn, distinct for each `i`.
fn card(i: usize) -> String {
    let body = format!("4{:014}", 123_456_789 + i * 7919);
    let digits: Vec<u32> = body.chars().filter_map(|c| c.to_digit(10)).collect();
    // The check digit: Luhn over body + check must be 0 mod 10 (double every second digit
    // from the right, the check digit being the first from the right).
    let mut sum = 0;
    for (k, d) in digits.iter().rev().enumerate() {
        let mut d = *d;
        if k % 2 == 0 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    let check = (10 - sum % 10) % 10;
    let n = format!("{body}{check}");
    format!("{} {} {} {}", &n[0..4], &n[4..8], &n[8..12], &n[12..16])
}

/// The `i`th planted value, of the kind its position picks.
fn secret(i: usize) -> String {
    if i % 25 == 24 {
        return format!(
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:06}\
             q9Z\n7Ydx2YhWc3pLmKQ0fYt8vZ1b2N3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R9s0T1u2V3w\n\
             -----END PRIVATE KEY-----"
        );
    }
    match i % 7 {
        0 => format!("dana.{i}@example.org"),
        1 => format!("+44 20 7946 {:04}", i % 10_000),
        2 => format!("sk-bench{i:08}AbCdEfGhIjKlMn"),
        3 => format!("pw{i}Xy9z"),
        4 => format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1{i:06}.c2lnbmF0dXJl{i}"),
        5 => format!("tok{i:08}AbCdEfGhIjKlMnOp"),
        _ => card(i),
    }
}

/// The sentence that carries the `i`th planted value (its kind needs some context: a password
/// only counts inside a URL, a bearer token after `Bearer`).
fn carrier(i: usize, v: &str) -> String {
    if i % 25 == 24 {
        return format!("the deploy key is\n{v}\n");
    }
    match i % 7 {
        3 => format!("DATABASE_URL=postgres://app:{v}@db.internal:5432/app"),
        5 => format!("Authorization: Bearer {v}"),
        6 => format!("paid with card {v}"),
        _ => format!("contact: {v}"),
    }
}

/// Unit `i` of the conversation: (role, part), and the value planted in it, if any.
fn unit(i: usize, secrets: bool) -> (Role, Part, Option<String>) {
    let planted = secrets.then(|| secret(i));
    let extra = planted
        .as_ref()
        .map(|v| format!(" ({})", carrier(i, v)))
        .unwrap_or_default();
    let call_id = format!("call_{}", i / 4);
    let part = match i % 4 {
        0 => Part::Text {
            text: format!(
                "The deploy of web-{i} failed again after the change to the build cache. Can \
                 you find the open issues about it, read the workflow file and tell me what \
                 changed since Tuesday? I need a fix I can merge before the release review this \
                 afternoon{extra}."
            ),
        },
        1 => Part::ToolCall {
            id: call_id,
            name: "github__search_issues".into(),
            arguments: json!({
                "repo": format!("acme/web-{i}"),
                "query": format!("deploy failure build cache{extra}"),
                "state": "open",
                "limit": 20,
            }),
        },
        2 => {
            let issues: Vec<Value> = (0..3)
                .map(|k| {
                    json!({
                        "number": 1200 + i + k,
                        "title": format!("Deploy step times out when the cache key changes ({k})"),
                        "labels": ["ci", "deploy"],
                        "body": format!(
                            "Since the runner image update the restore step misses the cache \
                             and the build runs from scratch{}.",
                            if k == 1 { extra.as_str() } else { "" }
                        ),
                    })
                })
                .collect();
            Part::ToolResult {
                call_id,
                content: vec![ResultPart::Text {
                    text: json!({ "total": 3, "items": issues }).to_string(),
                }],
                is_error: false,
            }
        }
        _ => Part::ToolResult {
            call_id,
            content: vec![ResultPart::Text {
                text: format!(
                    "# .github/workflows/deploy.yml (web-{i})\njobs:\n  build:\n    runs-on: \
                     ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: \
                     actions/cache@v4\n        with:\n          path: target\n          key: \
                     build-${{{{ hashFiles('Cargo.lock') }}}}\n      - run: cargo build \
                     --release\n      - run: ./scripts/deploy.sh\n# log: restore step took 0.4 \
                     s, cache miss; build took 612 s{extra}\n"
                ),
            }],
            is_error: false,
        },
    };
    let role = match &part {
        Part::ToolCall { .. } => Role::Assistant,
        _ => Role::User,
    };
    (role, part, planted)
}

/// Bytes of the text the detectors read in `part`.
fn text_bytes(part: &Part) -> usize {
    match part {
        Part::Text { text } => text.len(),
        Part::ToolCall { arguments, .. } => arguments.to_string().len(),
        Part::ToolResult { content, .. } => content
            .iter()
            .map(|c| match c {
                ResultPart::Text { text } => text.len(),
                ResultPart::Image { .. } => 0,
            })
            .sum(),
        Part::Image { .. } => 0,
    }
}

/// A few tool definitions, as a real turn carries (not redacted, but copied with the request).
fn tools() -> Vec<ToolSpec> {
    [
        "search_issues",
        "get_file",
        "list_runs",
        "rerun_job",
        "comment",
    ]
    .iter()
    .map(|t| ToolSpec {
        name: format!("github__{t}"),
        description: format!("GitHub: {t}, see the server's documentation."),
        input_schema: json!({
            "type": "object",
            "properties": { "repo": { "type": "string" }, "query": { "type": "string" } },
            "required": ["repo"],
        }),
    })
    .collect()
}

/// A request of at least `kb` KB of text.
pub fn request(kb: usize, secrets: bool) -> Request {
    let mut bytes = SYSTEM.len();
    let mut planted = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    let mut i = 0;
    while bytes < kb * 1024 {
        let (role, part, p) = unit(i, secrets);
        bytes += text_bytes(&part);
        planted.extend(p);
        match messages.last_mut() {
            Some(m) if m.role == role => m.parts.push(part),
            _ => messages.push(Message {
                role,
                parts: vec![part],
            }),
        }
        i += 1;
    }
    Request {
        req: ChatRequest {
            model: "gpt-bench".into(),
            system: Some(SYSTEM.into()),
            messages,
            tools: tools(),
            max_tokens: Some(4096),
            temperature: None,
        },
        bytes,
        planted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_pass_luhn_and_requests_reach_their_size() {
        for i in [0, 6, 13, 700] {
            let digits: String = card(i).chars().filter(char::is_ascii_digit).collect();
            assert!(switchboard_core::outbound::luhn(&digits), "{}", card(i));
        }
        let r = request(10, true);
        assert!(r.bytes >= 10 * 1024 && r.bytes < 11 * 1024, "{}", r.bytes);
        assert!(r.planted.len() >= 15, "{}", r.planted.len());
        assert!(request(1, false).planted.is_empty());
    }
}

//! The Server-Sent Events decoder (`llm::sse`) against generated streams and arbitrary bytes.
//!
//! A provider's stream arrives in network-sized pieces that can end inside a line, a `\r\n`
//! pair, a UTF-8 character or the BOM. The properties:
//! - valid streams (events with names, ids, comments, several data lines, any of the three line
//!   ends, an optional BOM) decode to exactly the events written, however they are chunked;
//! - arbitrary bytes never panic, and decode to the same events (or the same refusal) however
//!   they are chunked;
//! - the size cap holds: no event is larger than the cap, and a line longer than the cap is
//!   always refused, so a server cannot grow the decoder's memory without bound.

use proptest::prelude::*;
use switchboard_core::llm::sse::{SseDecoder, SseError, SseEvent};

use crate::chunked;

/// Everything `chunks` decode to, `finish` included; `Err` at the first refusal.
fn decode(chunks: &[Vec<u8>], limit: usize) -> Result<Vec<SseEvent>, SseError> {
    let mut d = SseDecoder::with_limit(limit);
    let mut out = Vec::new();
    for c in chunks {
        out.extend(d.push(c)?);
    }
    out.extend(d.finish());
    Ok(out)
}

/// One event as written: optional name and id, data lines (none: the event is not dispatched),
/// comments in between.
#[derive(Clone, Debug)]
struct Written {
    event: Option<String>,
    id: Option<String>,
    data: Vec<String>,
    comment: bool,
}

/// A field value: any text without line ends (`\r` or `\n`), possibly starting with a space.
fn value() -> impl Strategy<Value = String> {
    crate::hostile_text(6).prop_map(|s| s.replace(['\r', '\n'], ""))
}

fn written() -> impl Strategy<Value = Written> {
    (
        prop::option::of(value()),
        prop::option::of(value()),
        prop::collection::vec(value(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(event, id, data, comment)| Written {
            event,
            id,
            data,
            comment,
        })
}

/// The stream for `events` with the given line ends, and the events a reader must see.
fn render(
    events: &[Written],
    ends: &[&str],
    bom: bool,
    final_blank: bool,
) -> (Vec<u8>, Vec<SseEvent>) {
    let mut out = String::new();
    if bom {
        out.push('\u{feff}');
    }
    let mut n = 0;
    let mut last = "";
    // A `\r` followed by a `\n` of the next (blank) line would read as one `\r\n`: the
    // reader is right, so the writer must not do that.
    let mut end = || {
        n += 1;
        let mut e = ends[n % ends.len()];
        if last == "\r" && e == "\n" {
            e = "\r";
        }
        last = e;
        e
    };
    let mut want = Vec::new();
    // The last event id persists across events, as the standard says.
    let mut last_id: Option<String> = None;
    for (i, e) in events.iter().enumerate() {
        if e.comment {
            out.push_str(": keep-alive");
            out.push_str(end());
        }
        if let Some(name) = &e.event {
            out.push_str(&format!("event: {name}{}", end()));
        }
        if let Some(id) = &e.id {
            out.push_str(&format!("id: {id}{}", end()));
            if !id.contains('\0') {
                last_id = Some(id.clone());
            }
        }
        for d in &e.data {
            // The reader drops the one space after the colon, so a value's own leading
            // space survives.
            out.push_str(&format!("data: {d}{}", end()));
        }
        if i + 1 < events.len() || final_blank {
            out.push_str(end());
        }
        if !e.data.is_empty() {
            want.push(SseEvent {
                event: e.event.clone(),
                data: e.data.join("\n"),
                id: last_id.clone(),
            });
        }
    }
    (out.into_bytes(), want)
}

fn line_ends() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(vec!["\n", "\r\n", "\r"]), 1..4)
}

/// Bytes that look like SSE in parts: field names, colons, line ends, a BOM, invalid UTF-8.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => prop::sample::select(vec![
            &b"data:"[..], b"data: ", b"event:", b"id:", b"retry: 10", b":", b" ", b"\n",
            b"\r", b"\r\n", b"\n\n", b"\xEF\xBB\xBF", b"\xEF\xBB", b"\xff", b"\0", b"x",
            "é✓".as_bytes(),
        ])
        .prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 0..12),
        1 => (any::<u8>(), 0usize..64).prop_map(|(b, n)| vec![b; n]),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

/// Cut points and empty pieces for [`chunked`].
fn cuts() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (
        prop::collection::vec(any::<usize>(), 0..16),
        prop::collection::vec(any::<usize>(), 0..3),
    )
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn valid_streams_decode_to_what_was_written_however_chunked(
        events in prop::collection::vec(written(), 0..6),
        ends in line_ends(),
        bom in any::<bool>(),
        final_blank in any::<bool>(),
        (cuts, empties) in cuts(),
    ) {
        let (bytes, want) = render(&events, &ends, bom, final_blank);
        let got = decode(&chunked(&bytes, &cuts, &empties), 1 << 20);
        prop_assert_eq!(got, Ok(want));
    }

    #[test]
    fn arbitrary_bytes_decode_the_same_however_chunked(
        bytes in sse_bytes(),
        limit in prop_oneof![Just(1usize << 20), 1usize..48],
        (cuts, empties) in cuts(),
    ) {
        let whole = decode(std::slice::from_ref(&bytes), limit);
        let pieces = decode(&chunked(&bytes, &cuts, &empties), limit);
        prop_assert_eq!(&pieces, &whole);
        // Byte by byte, the worst case for a split `\r\n` or BOM.
        let singles: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        prop_assert_eq!(&decode(&singles, limit), &whole);
    }

    #[test]
    fn no_event_or_line_exceeds_the_cap(
        bytes in sse_bytes(),
        limit in 1usize..48,
        (cuts, empties) in cuts(),
    ) {
        let chunks = chunked(&bytes, &cuts, &empties);
        let mut d = SseDecoder::with_limit(limit);
        let mut refused = false;
        for c in &chunks {
            match d.push(c) {
                Ok(events) => {
                    for e in events {
                        prop_assert!(e.data.len() <= limit, "{} bytes > {}", e.data.len(), limit);
                    }
                }
                Err(SseError::EventTooLarge { limit: l }) => {
                    prop_assert_eq!(l, limit);
                    refused = true;
                    break;
                }
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
        // Any line longer than the cap is refused, wherever the stream was cut.
        let longest = bytes
            .split(|b| *b == b'\n' || *b == b'\r')
            .map(<[u8]>::len)
            .max()
            .unwrap_or(0);
        if longest > limit {
            prop_assert!(refused, "a {}-byte line passed a cap of {}", longest, limit);
        }
    }
}

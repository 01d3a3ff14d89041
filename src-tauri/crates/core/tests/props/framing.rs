//! The stdio line reader (`mcp::framing::LineReader`, RL-01) against a model.
//!
//! A server's stdout is a byte stream the host does not control: any bytes, delivered in any
//! pieces. The model of the reader is a plain split: lines end at `\n`, one trailing `\r` is
//! dropped, a final line without `\n` counts unless it is empty, and the first line longer than
//! the cap (its `\r` included) stops the stream with `TooLong`. The properties:
//! - the reader yields exactly the model's lines, however the stream is chunked;
//! - an overlong line is reported as `TooLong` and none of its bytes come back as a message;
//! - the reader takes at most `cap` bytes of one line from the source before it gives up, so it
//!   never buffers more than the cap, even when the line never ends.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use proptest::prelude::*;
use switchboard_core::mcp::framing::{FrameError, LineReader};
use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};

/// A source that hands out its bytes in exactly the given pieces and counts what the reader
/// consumed (shared, since the reader owns the source).
#[derive(Debug)]
struct Chunks {
    chunks: VecDeque<Vec<u8>>,
    pos: usize,
    consumed: Arc<AtomicUsize>,
}

impl Chunks {
    fn new(chunks: Vec<Vec<u8>>, consumed: Arc<AtomicUsize>) -> Self {
        Self {
            chunks: chunks.into(),
            pos: 0,
            consumed,
        }
    }

    /// Drops spent chunks, so that an empty piece does not end the stream early: an empty
    /// `fill_buf` means end of stream to a reader.
    fn skip_spent(&mut self) {
        while self.chunks.front().is_some_and(|c| self.pos >= c.len()) {
            self.chunks.pop_front();
            self.pos = 0;
        }
    }
}

impl AsyncRead for Chunks {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        me.skip_spent();
        if let Some(c) = me.chunks.front() {
            let n = (c.len() - me.pos).min(buf.remaining());
            buf.put_slice(&c[me.pos..me.pos + n]);
            me.pos += n;
            me.consumed.fetch_add(n, Ordering::Relaxed);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for Chunks {
    fn poll_fill_buf(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.get_mut();
        me.skip_spent();
        Poll::Ready(Ok(match me.chunks.front() {
            Some(c) => &c[me.pos..],
            None => &[],
        }))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.get_mut();
        me.pos += amt;
        me.consumed.fetch_add(amt, Ordering::Relaxed);
    }
}

/// What the reader produced: the lines, and whether it stopped at an overlong line.
#[derive(Debug, PartialEq)]
struct Outcome {
    lines: Vec<Vec<u8>>,
    too_long: bool,
}

/// Reads `chunks` to the end (or the first error); with the bytes taken from the source.
fn read_all(chunks: Vec<Vec<u8>>, cap: usize) -> (Outcome, usize) {
    let consumed = Arc::new(AtomicUsize::new(0));
    let mut reader = LineReader::new(Chunks::new(chunks, Arc::clone(&consumed)), cap);
    let mut lines = Vec::new();
    let too_long = futures::executor::block_on(async {
        loop {
            match reader.next_line().await {
                Ok(Some(line)) => lines.push(line),
                Ok(None) => return false,
                Err(FrameError::TooLong { cap: c }) => {
                    assert_eq!(c, cap);
                    return true;
                }
                Err(e) => panic!("an in-memory source failed: {e}"),
            }
        }
    });
    (
        Outcome { lines, too_long },
        consumed.load(Ordering::Relaxed),
    )
}

/// The model: what the reader must yield for `input`, and where the first overlong line
/// starts, if there is one.
fn model(input: &[u8], cap: usize) -> (Outcome, Option<usize>) {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut pieces = input.split(|b| *b == b'\n').peekable();
    while let Some(raw) = pieces.next() {
        let last = pieces.peek().is_none();
        if last && raw.is_empty() {
            break;
        }
        if raw.len() > cap {
            return (
                Outcome {
                    lines,
                    too_long: true,
                },
                Some(start),
            );
        }
        let mut line = raw.to_vec();
        if !last && line.last() == Some(&b'\r') {
            line.pop();
        }
        lines.push(line);
        start += raw.len() + 1;
    }
    (
        Outcome {
            lines,
            too_long: false,
        },
        None,
    )
}

/// Bytes rich in line ends, carriage returns and long runs without either.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => prop::collection::vec(any::<u8>(), 0..16),
        2 => prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\r", b"\n\n", b"{\"jsonrpc\":\"2.0\"}"])
            .prop_map(<[u8]>::to_vec),
        1 => (any::<u8>(), 0usize..200).prop_map(|(b, n)| vec![b; n]),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(crate::config())]

    #[test]
    fn yields_the_models_lines_however_the_stream_is_chunked(
        input in stream(),
        cap in 1usize..64,
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        empties in prop::collection::vec(any::<usize>(), 0..3),
    ) {
        let (want, overlong_at) = model(&input, cap);
        let (got, consumed) = read_all(crate::chunked(&input, &cuts, &empties), cap);
        prop_assert_eq!(&got, &want);
        prop_assert!(got.lines.iter().all(|l| l.len() <= cap));
        if let Some(start) = overlong_at {
            // It gave up within `cap` bytes of the overlong line: the piece that would
            // cross the cap is refused, not taken.
            prop_assert!(
                consumed <= start + cap,
                "consumed {} bytes, the overlong line starts at {} and the cap is {}",
                consumed, start, cap
            );
        }
    }

    #[test]
    fn an_endless_line_stops_at_the_cap(
        byte in any::<u8>().prop_filter("no line end", |b| *b != b'\n'),
        cap in 1usize..4096,
        piece in 1usize..9000,
    ) {
        // Far more than the cap, in pieces of any size: the reader must stop early.
        let chunks = vec![vec![byte; piece]; (cap * 4) / piece + 2];
        let (got, consumed) = read_all(chunks, cap);
        prop_assert!(got.too_long && got.lines.is_empty());
        prop_assert!(consumed <= cap, "took {} bytes with a cap of {}", consumed, cap);
    }
}

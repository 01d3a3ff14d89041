//! The stderr ring (RL-02, RL-13): the newest bytes of a server's stderr, kept as received.
//!
//! A server may write hundreds of megabytes to stderr before it answers `initialize`; the drain
//! must keep up with that on a fraction of one core and never hold up the protocol. So the hot
//! path is byte-oriented and does one thing per chunk read from the pipe: find the line ends
//! (`memchr`), copy each line's first [`MAX_LINE`] bytes into one buffer, and drop whole lines
//! from its front once it holds more than [`STDERR_BUDGET`] bytes. No line is decoded, allocated
//! or redacted on the way in: a redactor per line cost 8 µs per line, which is what let a chatty
//! server starve the host (RL-13).
//!
//! Redaction (SE-06) happens where the text leaves the ring: [`StderrRing::render`] decodes and
//! redacts the lines asked for (a tail of twenty for a status, the whole ring when the logs are
//! saved), so only what is kept and shown pays for it. A line cut at [`MAX_LINE`] ends in
//! [`LINE_CUT`]; what precedes the marker is trimmed of any beginning of a secret, since the
//! secret the cut split is no longer there to be recognised whole.
//!
//! Memory: the buffer holds at most [`STDERR_BUDGET`] bytes of lines plus what was already
//! dropped but not yet moved out (compacted once that is half the budget) and one chunk, so
//! less than twice the budget whatever the server writes.

use crate::redact::Redactor;

use super::{MAX_LINE, STDERR_BUDGET};

/// What ends a line that was longer than [`MAX_LINE`] bytes.
pub const LINE_CUT: &str = " … [line cut]";

/// The newest stderr lines of one server, as bytes.
#[derive(Debug, Default)]
pub(super) struct StderrRing {
    /// Lines, each ended by `\n`, then the line still being written (no `\n` yet).
    buf: Vec<u8>,
    /// Where the kept lines start in `buf` (the bytes before are dropped, not yet moved out).
    start: usize,
    /// Bytes of the unfinished line held at the end of `buf`.
    line: usize,
    /// Whether the unfinished line went past [`MAX_LINE`] (the rest of it is skipped).
    cut: bool,
    /// Lines seen in total, kept or not.
    total_lines: u64,
}

impl StderrRing {
    /// Takes in one chunk as read from the pipe (any size, lines split anywhere).
    pub(super) fn push(&mut self, mut chunk: &[u8]) {
        while let Some(i) = memchr::memchr(b'\n', chunk) {
            self.append(&chunk[..i]);
            self.end_line();
            chunk = &chunk[i + 1..];
        }
        self.append(chunk);
        self.trim();
    }

    /// Ends the unfinished line, if any (the stream closed).
    pub(super) fn finish(&mut self) {
        if self.line > 0 || self.cut {
            self.end_line();
            self.trim();
        }
    }

    fn append(&mut self, part: &[u8]) {
        if self.cut || part.is_empty() {
            return;
        }
        let room = MAX_LINE - self.line;
        if part.len() > room {
            self.buf.extend_from_slice(&part[..room]);
            self.line = MAX_LINE;
            self.cut = true;
        } else {
            self.buf.extend_from_slice(part);
            self.line += part.len();
        }
    }

    fn end_line(&mut self) {
        if self.cut {
            self.buf.extend_from_slice(LINE_CUT.as_bytes());
        }
        self.buf.push(b'\n');
        self.line = 0;
        self.cut = false;
        self.total_lines += 1;
    }

    /// Drops whole lines from the front until at most [`STDERR_BUDGET`] bytes are held, and
    /// moves the rest to the front once the dropped part is half the budget (so each byte is
    /// moved at most twice, and the buffer never grows past twice the budget).
    fn trim(&mut self) {
        if self.buf.len() - self.start > STDERR_BUDGET {
            let from = self.buf.len() - STDERR_BUDGET;
            let unfinished = self.buf.len() - self.line;
            // The first line that starts at or after `from` (a line start follows a `\n`).
            self.start = match memchr::memchr(b'\n', &self.buf[from - 1..unfinished]) {
                Some(i) => from + i,
                None => unfinished,
            };
        }
        if self.start >= STDERR_BUDGET / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }

    /// Bytes held (at most [`STDERR_BUDGET`]).
    pub(super) fn bytes(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Lines seen in total.
    pub(super) fn total_lines(&self) -> u64 {
        self.total_lines
    }

    /// A copy of the newest `n` lines, raw (the unfinished one counts when it has any bytes),
    /// for rendering outside the lock.
    pub(super) fn tail_raw(&self, n: usize) -> Vec<u8> {
        let held = &self.buf[self.start..];
        let body = held.strip_suffix(b"\n").unwrap_or(held);
        if n == 0 || body.is_empty() {
            return Vec::new();
        }
        let mut from = 0;
        let mut seen = 0;
        for i in memchr::memrchr_iter(b'\n', body) {
            seen += 1;
            if seen == n {
                from = i + 1;
                break;
            }
        }
        body[from..].to_vec()
    }

    /// Decoded, redacted lines of a copy made by [`StderrRing::tail_raw`].
    pub(super) fn render(raw: &[u8], redactor: &Redactor) -> Vec<String> {
        if raw.is_empty() {
            return Vec::new();
        }
        raw.split(|b| *b == b'\n')
            .map(|line| render_line(line, redactor))
            .collect()
    }
}

/// One line as it is shown: decoded (invalid UTF-8 replaced), redacted, and for a cut line the
/// beginning of a secret before the marker removed.
fn render_line(line: &[u8], redactor: &Redactor) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match line.strip_suffix(LINE_CUT.as_bytes()) {
        Some(body) => {
            let text = redactor.redact(&String::from_utf8_lossy(body));
            format!("{}{LINE_CUT}", redactor.trim_partial(&text))
        }
        None => redactor.redact(&String::from_utf8_lossy(line)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Secret;

    fn lines(ring: &StderrRing, n: usize, r: &Redactor) -> Vec<String> {
        StderrRing::render(&ring.tail_raw(n), r)
    }

    #[test]
    fn lines_split_anywhere_come_out_whole() {
        let mut ring = StderrRing::default();
        for piece in [&b"one\ntw"[..], b"o\r\n", b"", b"thr", b"ee\nfour"] {
            ring.push(piece);
        }
        let r = Redactor::default();
        assert_eq!(lines(&ring, 10, &r), ["one", "two", "three", "four"]);
        assert_eq!(lines(&ring, 2, &r), ["three", "four"]);
        assert_eq!(ring.total_lines(), 3);
        ring.finish();
        assert_eq!(ring.total_lines(), 4);
        assert_eq!(lines(&ring, 1, &r), ["four"]);
        assert!(lines(&ring, 0, &r).is_empty());
    }

    #[test]
    fn memory_stays_bounded_whatever_comes_in() {
        let mut ring = StderrRing::default();
        let chunk: Vec<u8> = b"0123456789abcdef0123456789abcdef0123456789abcdef012345678\n"
            .iter()
            .copied()
            .cycle()
            .take(64 * 1024 + 7)
            .collect();
        for _ in 0..2000 {
            ring.push(&chunk);
            assert!(ring.bytes() <= STDERR_BUDGET);
            assert!(ring.buf.capacity() <= 2 * STDERR_BUDGET + 2 * chunk.len());
        }
        // One endless line: only its first MAX_LINE bytes are kept.
        let mut ring = StderrRing::default();
        for _ in 0..100 {
            ring.push(&[b'z'; 64 * 1024]);
        }
        ring.finish();
        let r = Redactor::default();
        let kept = lines(&ring, 1, &r);
        assert_eq!(kept[0].len(), MAX_LINE + LINE_CUT.len());
        assert!(kept[0].ends_with(LINE_CUT));
    }

    /// SE-06: a secret straddling the line cut, at every offset, leaves no piece before the
    /// marker; a whole one is redacted where it stands.
    #[test]
    fn a_secret_split_by_the_line_cut_leaves_nothing() {
        let secret = "straddle-canary-0123456789-abcdefgh";
        let r = Redactor::new(&[Secret::new(secret)]);
        for k in 1..secret.len() {
            let mut ring = StderrRing::default();
            let mut line = "p".repeat(MAX_LINE - k).into_bytes();
            line.extend_from_slice(secret.as_bytes());
            line.extend_from_slice(b" and more\nnext uses ");
            line.extend_from_slice(secret.as_bytes());
            line.push(b'\n');
            ring.push(&line);
            let kept = lines(&ring, 2, &r);
            assert_eq!(
                kept[0],
                format!("{}{LINE_CUT}", "p".repeat(MAX_LINE - k)),
                "{k}"
            );
            assert_eq!(kept[1], "next uses [redacted]");
        }
    }
}

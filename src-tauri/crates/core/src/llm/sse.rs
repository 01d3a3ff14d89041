//! An incremental Server-Sent Events decoder shared by every wire format.
//!
//! Bytes arrive in whatever pieces the network delivers: a chunk may end inside a line, inside
//! a `\r\n` pair or inside a multi-byte UTF-8 character. The decoder therefore buffers raw
//! bytes and only decodes complete lines, following the WHATWG `text/event-stream` rules:
//! `event:`/`data:`/`id:` fields, one optional space after the colon, `:` comment lines,
//! `\n`, `\r\n` or a lone `\r` as line ends, several `data:` lines joined with `\n`, and a
//! blank line dispatching the event.
//!
//! Two deliberate deviations:
//! - One event (its data plus the line being read) is capped ([`DEFAULT_MAX_EVENT_BYTES`]):
//!   a server that never sends a line end must not grow our memory without bound.
//! - At end of stream, an event whose lines are complete but which lacks the final blank line
//!   is still dispatched ([`SseDecoder::finish`]); a few OpenAI-compatible servers omit it.
//!   A trailing partial line is dropped, since it is most likely a cut.

/// The default cap on one event's size.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the server named the event.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// Why the byte stream could not be decoded as SSE.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// One event grew past the cap.
    #[error("one server-sent event exceeded {limit} bytes")]
    EventTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
}

/// Turns a byte stream into [`SseEvent`]s, one chunk at a time.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the line being read (no line end yet).
    line: Vec<u8>,
    /// The previous chunk ended on `\r`; a `\n` opening the next one belongs to it.
    skip_lf: bool,
    /// Whether the first line was read (a UTF-8 BOM opening it is skipped).
    started: bool,
    event: Option<String>,
    id: Option<String>,
    data: String,
    has_data: bool,
    max_event_bytes: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the default size cap.
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder whose events may not exceed `max_event_bytes`.
    pub fn with_limit(max_event_bytes: usize) -> Self {
        Self {
            line: Vec::new(),
            skip_lf: false,
            started: false,
            event: None,
            id: None,
            data: String::new(),
            has_data: false,
            max_event_bytes,
        }
    }

    /// Feeds the next bytes; returns the events they complete, in order.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        if self.skip_lf {
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
                self.skip_lf = false;
            } else if !bytes.is_empty() {
                self.skip_lf = false;
            }
        }
        while let Some(pos) = bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&bytes[..pos]);
            self.check_size()?;
            let was_cr = bytes[pos] == b'\r';
            bytes = &bytes[pos + 1..];
            if was_cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            let mut line = std::mem::take(&mut self.line);
            if !self.started {
                self.started = true;
                if line.starts_with(b"\xEF\xBB\xBF") {
                    line.drain(..3);
                }
            }
            if let Some(ev) = self.process_line(&line) {
                out.push(ev);
            }
        }
        self.line.extend_from_slice(bytes);
        self.check_size()?;
        Ok(out)
    }

    /// Ends the stream: returns an event whose lines were complete but which never got its
    /// blank line, if any (see the module docs).
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.line.clear();
        self.dispatch()
    }

    fn check_size(&self) -> Result<(), SseError> {
        if self.line.len() + self.data.len() > self.max_event_bytes {
            return Err(SseError::EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        Ok(())
    }

    fn process_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.first() == Some(&b':') {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // An id containing NUL is ignored, as the standard says.
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            // `retry:` tunes browser reconnection, which we never do: an LLM answer cannot be
            // resumed, so it is ignored like any unknown field.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.push(c).unwrap());
        }
        out.extend(d.finish());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            id: None,
        }
    }

    #[test]
    fn event_and_data_lines() {
        let got = decode_all(&[b"event: message_start\ndata: {\"a\":1}\n\ndata: x\n\n"]);
        assert_eq!(
            got,
            vec![ev(Some("message_start"), "{\"a\":1}"), ev(None, "x")]
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let got = decode_all(&[b"data: one\ndata:two\ndata:  three\n\n"]);
        assert_eq!(got, vec![ev(None, "one\ntwo\n three")]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let got = decode_all(&[b": keep-alive\n\nretry: 100\nfoo: bar\ndata: x\n\n"]);
        assert_eq!(got, vec![ev(None, "x")]);
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let got = decode_all(&[b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n"]);
        assert_eq!(got, vec![ev(Some("a"), "1"), ev(None, "2"), ev(None, "3")]);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let input: &[u8] =
            "event: e\r\ndata: {\"t\":\"héllo ✓\"}\r\n\r\n: c\ndata: a\ndata: b\n\n".as_bytes();
        let whole = decode_all(&[input]);
        assert_eq!(
            whole,
            vec![ev(Some("e"), "{\"t\":\"héllo ✓\"}"), ev(None, "a\nb")]
        );
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let got = decode_all(&[&input[..i], &input[i..j], &input[j..]]);
                assert_eq!(got, whole, "split at {i}/{j}");
            }
        }
    }

    #[test]
    fn byte_by_byte_crlf_split_does_not_make_blank_lines() {
        let input = b"data: 1\r\n\r\ndata: 2\r\n\r\n";
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(decode_all(&chunks), vec![ev(None, "1"), ev(None, "2")]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_its_name_is_reset() {
        let got = decode_all(&[b"event: lonely\n\ndata: x\n\n"]);
        assert_eq!(got, vec![ev(None, "x")]);
    }

    #[test]
    fn empty_data_field_dispatches_an_empty_event() {
        assert_eq!(decode_all(&[b"data\n\n"]), vec![ev(None, "")]);
    }

    #[test]
    fn a_bom_at_the_start_is_skipped() {
        assert_eq!(
            decode_all(&[b"\xEF\xBB", b"\xBFdata: x\n\n"]),
            vec![ev(None, "x")]
        );
    }

    #[test]
    fn id_field_is_kept() {
        let got = decode_all(&[b"id: 7\ndata: x\n\n"]);
        assert_eq!(got[0].id.as_deref(), Some("7"));
    }

    #[test]
    fn finish_dispatches_complete_lines_but_drops_a_partial_line() {
        assert_eq!(decode_all(&[b"data: [DONE]\n"]), vec![ev(None, "[DONE]")]);
        assert_eq!(decode_all(&[b"data: {\"cut"]), vec![]);
    }

    #[test]
    fn oversized_event_is_an_error() {
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.push(b"data: 0123456789\n").unwrap(), vec![]);
        let err = d.push(b"data: 0123456789\n").unwrap_err();
        assert_eq!(err, SseError::EventTooLarge { limit: 16 });
        // A line that never ends is caught too.
        let mut d = SseDecoder::with_limit(16);
        assert!(d.push(&[b'x'; 17]).is_err());
    }

    #[test]
    fn cap_applies_per_event_not_per_stream() {
        let mut d = SseDecoder::with_limit(16);
        for _ in 0..100 {
            assert_eq!(d.push(b"data: 0123456789\n\n").unwrap().len(), 1);
        }
    }
}

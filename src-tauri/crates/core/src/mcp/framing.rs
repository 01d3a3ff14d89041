//! Newline-delimited JSON framing for stdio with a hard cap on one message (RL-01).
//!
//! rmcp's line codec grows its buffer without bound, so a server that writes a gigabyte with no
//! newline would take the host's memory with it. [`LineReader`] refuses a line as soon as it
//! passes the cap, while reading, and reports it as an error that closes the transport.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Default cap on one stdio message.
pub const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Why reading a line stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A message exceeded the cap.
    #[error("the server sent a message larger than {cap} bytes without a line break; the connection was closed to protect memory")]
    TooLong {
        /// The cap in bytes.
        cap: usize,
    },
    /// Reading failed.
    #[error("reading from the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads `\n`-terminated lines of at most `cap` bytes.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    cap: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Wraps a buffered reader.
    pub fn new(inner: R, cap: usize) -> Self {
        Self {
            inner,
            cap,
            buf: Vec::new(),
        }
    }

    /// The next line without its terminator (`\r\n` or `\n`), or `None` at end of stream. A
    /// final line without a newline is returned too.
    pub async fn next_line(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        self.buf.clear();
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok((!self.buf.is_empty()).then(|| std::mem::take(&mut self.buf)));
            }
            let (chunk, found) = match memchr_newline(available) {
                Some(i) => (&available[..i], Some(i)),
                None => (available, None),
            };
            if self.buf.len() + chunk.len() > self.cap {
                return Err(FrameError::TooLong { cap: self.cap });
            }
            self.buf.extend_from_slice(chunk);
            let consumed = found.map_or(chunk.len(), |i| i + 1);
            self.inner.consume(consumed);
            if found.is_some() {
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                return Ok(Some(std::mem::take(&mut self.buf)));
            }
        }
    }
}

fn memchr_newline(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    #[tokio::test]
    async fn splits_lines_and_strips_cr() {
        let data: &[u8] = b"a\r\nbb\n\nlast";
        let mut r = LineReader::new(BufReader::with_capacity(2, data), 100);
        assert_eq!(r.next_line().await.unwrap().unwrap(), b"a");
        assert_eq!(r.next_line().await.unwrap().unwrap(), b"bb");
        assert_eq!(r.next_line().await.unwrap().unwrap(), b"");
        assert_eq!(r.next_line().await.unwrap().unwrap(), b"last");
        assert!(r.next_line().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn refuses_oversized_line_while_reading() {
        // An endless line: the reader must fail after about `cap` bytes, not buffer it all.
        let endless = tokio::io::repeat(b'x');
        let mut r = LineReader::new(BufReader::new(endless), 1024 * 1024);
        assert!(matches!(
            r.next_line().await,
            Err(FrameError::TooLong { cap: 1048576 })
        ));
    }
}

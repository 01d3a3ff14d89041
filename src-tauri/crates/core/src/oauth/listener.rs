//! The loopback redirect listener (AU-05, RFC 8252 §7.3; TA-07): the one local listener
//! Switchboard opens, and only while a sign-in waits for the browser.
//!
//! Bound to 127.0.0.1 on an ephemeral port; answers only `GET /callback` whose `Host` is that
//! address (a page a browser was tricked into loading from another name gets 403); accepts the
//! one redirect carrying the `state` this sign-in sent (a forged or replayed one is refused and
//! the wait goes on), then closes. It gives up after [`WAIT`]. The page it answers with is
//! plain local HTML: no script, no external resources, no text from the request.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How long a sign-in waits for the browser.
pub const WAIT: Duration = Duration::from_secs(300);
/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// What the authorization server sent back through the browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callback {
    /// The person agreed: the code, and the `iss` parameter when present (RFC 9207).
    Code {
        /// The authorization code.
        code: String,
        /// The `state` it came with (equal to ours).
        state: String,
        /// RFC 9207 `iss`.
        iss: Option<String>,
    },
    /// The authorization server answered with an error (`access_denied` when the person said
    /// no); the description is the server's text.
    Error {
        /// The OAuth error code.
        error: String,
        /// Its description, if any (untrusted).
        description: Option<String>,
        /// RFC 9207 `iss`, when present.
        iss: Option<String>,
    },
}

/// Why no callback arrived.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Could not listen.
    #[error("could not open the local sign-in listener: {0}")]
    Bind(std::io::Error),
    /// The browser never came back.
    #[error("the browser did not come back within {} minutes", WAIT.as_secs() / 60)]
    TimedOut,
}

/// A listener waiting for one redirect.
pub struct Listener {
    listener: TcpListener,
    port: u16,
}

impl Listener {
    /// Binds 127.0.0.1 on an ephemeral port.
    pub async fn bind() -> Result<Self, ListenError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(ListenError::Bind)?;
        let port = listener.local_addr().map_err(ListenError::Bind)?.port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits (at most `wait`) for the redirect carrying `state`; anything else is answered and
    /// ignored. Consumes the listener: it closes when this returns.
    pub async fn wait(self, state: &str, wait: Duration) -> Result<Callback, ListenError> {
        let host = format!("127.0.0.1:{}", self.port);
        let accept = async {
            loop {
                let Ok((stream, _)) = self.listener.accept().await else {
                    continue;
                };
                if let Some(cb) = serve(stream, &host, state).await {
                    return cb;
                }
            }
        };
        tokio::time::timeout(wait, accept)
            .await
            .map_err(|_| ListenError::TimedOut)
    }
}

/// Answers one connection; `Some` when it carried our redirect.
async fn serve(mut stream: TcpStream, host: &str, state: &str) -> Option<Callback> {
    let head = tokio::time::timeout(Duration::from_secs(10), read_head(&mut stream))
        .await
        .ok()??;
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?;
    let host_ok = lines.any(|l| {
        l.split_once(':')
            .is_some_and(|(k, v)| k.eq_ignore_ascii_case("host") && v.trim() == host)
    });
    let mut parts = request_line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    if !host_ok {
        reply(
            &mut stream,
            "403 Forbidden",
            "This address only answers sign-in redirects.",
        )
        .await;
        return None;
    }
    let url = url::Url::parse(&format!("http://{host}{target}")).ok()?;
    if method != "GET" || url.path() != "/callback" {
        reply(&mut stream, "404 Not Found", "Nothing here.").await;
        return None;
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if param("state").as_deref() != Some(state) {
        reply(
            &mut stream,
            "400 Bad Request",
            "This sign-in link is not the one Switchboard is waiting for.",
        )
        .await;
        return None;
    }
    let iss = param("iss");
    let callback = match (param("code"), param("error")) {
        (_, Some(error)) => Callback::Error {
            error,
            description: param("error_description"),
            iss,
        },
        (Some(code), None) => Callback::Code {
            code,
            state: state.to_owned(),
            iss,
        },
        (None, None) => {
            reply(
                &mut stream,
                "400 Bad Request",
                "The sign-in answer carried no code.",
            )
            .await;
            return None;
        }
    };
    let text = match &callback {
        Callback::Code { .. } => "Signed in. You can close this tab and return to Switchboard.",
        Callback::Error { .. } => "Sign-in did not complete. Return to Switchboard to see why.",
    };
    reply(&mut stream, "200 OK", text).await;
    Some(callback)
}

async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() + n > MAX_HEAD {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8(buf).ok()
}

async fn reply(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Switchboard</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><p>{text}</p></body></html>"
    );
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n\
         Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, path: &str, host: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn only_our_state_on_our_host_ends_the_wait() {
        let l = Listener::bind().await.unwrap();
        let port = l.port;
        let host = format!("127.0.0.1:{port}");
        let waiting = tokio::spawn(async move { l.wait("s3cret", Duration::from_secs(10)).await });
        let forged = get(port, "/callback?code=x&state=wrong", &host).await;
        assert!(forged.starts_with("HTTP/1.1 400"), "{forged}");
        let rebinding = get(port, "/callback?code=x&state=s3cret", "evil.example").await;
        assert!(rebinding.starts_with("HTTP/1.1 403"), "{rebinding}");
        let ok = get(
            port,
            "/callback?code=c0de&state=s3cret&iss=https%3A%2F%2Fas",
            &host,
        )
        .await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(
            !ok.contains("<script") && !ok.contains("http"),
            "plain local page: {ok}"
        );
        let cb = waiting.await.unwrap().unwrap();
        assert_eq!(
            cb,
            Callback::Code {
                code: "c0de".into(),
                state: "s3cret".into(),
                iss: Some("https://as".into())
            }
        );
        // One-shot: the port is closed now.
        assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err());
    }

    #[tokio::test]
    async fn it_gives_up() {
        let l = Listener::bind().await.unwrap();
        let r = l.wait("s", Duration::from_millis(50)).await;
        assert!(matches!(r, Err(ListenError::TimedOut)));
    }
}

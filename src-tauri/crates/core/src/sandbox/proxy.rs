//! The filtering proxy of a sandboxed server with domain lists (SP-13).
//!
//! One proxy per start, on an ephemeral port of the host's loopback, held by the server's
//! process (it goes when the process goes). pasta forwards the sandbox's `127.0.0.1:3128` to it
//! (`crate::sandbox::net`); the server's namespace has no other way out. It speaks the two
//! forms HTTP clients use through `HTTP_PROXY`/`HTTPS_PROXY`:
//! - `CONNECT host:port` (every HTTPS request): checked, then a byte tunnel;
//! - an absolute-URI request (`GET http://host/path`): checked, then sent on in origin form to
//!   that host only. The connection stays with that one origin, so a second request on it
//!   can never reach another host.
//!
//! The name the client gives is decided by [`DomainLists::decide`] (deny wins, VS Code's
//! wildcards). A name that passes is resolved here, and an address on this computer or its
//! link (loopback, link-local, unspecified) is refused unless the person listed that exact
//! name: a wildcard or a deny-only list never opens `localhost`, and a public name that
//! resolves to 127.0.0.1 (DNS rebinding) stays refused. Each refusal is answered `403` with the
//! command that allows it, noted in the server's log, and recorded in its log folder, where the
//! doctor and the app find it (a file the host writes, not the server's stderr, so a server
//! cannot forge the domain it asks to be allowed).
//!
//! The request head is parsed by `httparse` (already in the tree through hyper), not by hand.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::domains::{host_key, DomainLists, Verdict};
use super::explain::Finding;
use super::SandboxSpec;
use crate::ids::ServerId;
use crate::server_logs::ServerLogs;

/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;
/// Connections served at once.
const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to send its request head, and an upstream to accept.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// The file in a server's log folder that lists the domains its proxy refused.
pub const REFUSED_FILE: &str = "refused-domains";
/// The most refused domains remembered.
const MAX_REFUSED: usize = 64;

/// A running proxy; dropping it stops it.
pub struct Proxy {
    /// Its port on the host's loopback.
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What every connection of one proxy shares.
struct Shared {
    server: ServerId,
    lists: DomainLists,
    logs: ServerLogs,
    refused_file: PathBuf,
    slots: Arc<Semaphore>,
}

/// Starts a proxy for `server`'s start with `lists`; refusals go to `logs` and to
/// [`REFUSED_FILE`] in `log_dir`.
pub async fn start(
    server: ServerId,
    lists: DomainLists,
    logs: ServerLogs,
    log_dir: PathBuf,
) -> std::io::Result<Proxy> {
    let listener = TcpListener::bind((IpAddr::from([127, 0, 0, 1]), 0)).await?;
    let port = listener.local_addr()?.port();
    let shared = Arc::new(Shared {
        server,
        lists,
        logs,
        refused_file: log_dir.join(REFUSED_FILE),
        slots: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
    });
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let Ok(slot) = Arc::clone(&shared.slots).try_acquire_owned() else {
                continue; // at the limit: the connection is closed
            };
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                let _slot = slot;
                let _ = serve(stream, &shared).await;
            });
        }
    });
    Ok(Proxy { port, task })
}

/// Why one proxied connection ended early.
#[derive(Debug, thiserror::Error)]
enum ProxyError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("timed out")]
    Timeout,
}

/// What the client asked for.
struct Target {
    host: String,
    port: u16,
    /// `None` for CONNECT; otherwise the head to send upstream (origin form).
    forward: Option<Vec<u8>>,
}

async fn serve(mut client: TcpStream, shared: &Shared) -> Result<(), ProxyError> {
    let mut buf = Vec::with_capacity(2048);
    let head_len = tokio::time::timeout(IO_TIMEOUT, read_head(&mut client, &mut buf))
        .await
        .map_err(|_| ProxyError::Timeout)??;
    let Some(head_len) = head_len else {
        return answer(
            &mut client,
            400,
            "the request head is malformed or too long",
        )
        .await;
    };
    let target = match parse(&buf[..head_len]) {
        Ok(t) => t,
        Err(why) => return answer(&mut client, 400, why).await,
    };
    let verdict = shared.lists.decide(&target.host);
    let upstream = match verdict.passes() {
        true => resolve(&target, verdict).await,
        false => Err(match verdict {
            Verdict::Denied => "it is in this server's denied domains",
            _ => "it is not in this server's allowed domains",
        }),
    };
    let addr = match upstream {
        Ok(a) => a,
        Err(why) => return refuse(&mut client, shared, &target.host, why).await,
    };
    let mut up = tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(&addr[..]))
        .await
        .map_err(|_| ProxyError::Timeout)??;
    match &target.forward {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        Some(head) => up.write_all(head).await?,
    }
    // Whatever the client sent after its head (a body, a TLS hello) goes on as it came.
    up.write_all(&buf[head_len..]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut up).await?;
    Ok(())
}

/// Reads until the end of the head; `Some(len)` of the head, `None` when it is too long or
/// the client stopped first.
async fn read_head(client: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some(end + 4));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn parse(head: &[u8]) -> Result<Target, &'static str> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err("the request head is malformed"),
    }
    let (Some(method), Some(path)) = (req.method, req.path) else {
        return Err("the request head is malformed");
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let authority: http::uri::Authority =
            path.parse().map_err(|_| "CONNECT needs host:port")?;
        let port = authority.port_u16().ok_or("CONNECT needs host:port")?;
        return Ok(Target {
            host: host_key(authority.host()),
            port,
            forward: None,
        });
    }
    let uri: http::Uri = path
        .parse()
        .map_err(|_| "the request target is malformed")?;
    if uri.scheme_str() != Some("http") {
        return Err("give an absolute http:// URL, or CONNECT for https");
    }
    let host = uri.host().ok_or("the request target has no host")?;
    let origin = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut out = format!("{method} {origin} HTTP/1.1\r\n").into_bytes();
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if name.starts_with("proxy-") {
            continue; // meant for this proxy, not the origin
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(Target {
        host: host_key(host),
        port: uri.port_u16().unwrap_or(80),
        forward: Some(out),
    })
}

/// The addresses to try, in order: what the name resolves to, unless one is on this computer
/// or its link and the name was not listed exactly.
async fn resolve(target: &Target, verdict: Verdict) -> Result<Vec<SocketAddr>, &'static str> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((target.host.as_str(), target.port))
        .await
        .map_err(|_| "its name does not resolve")?
        .collect();
    let local = |ip: IpAddr| match ip.to_canonical() {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    };
    if verdict != Verdict::AllowedByName && addrs.iter().any(|a| local(a.ip())) {
        return Err("it resolves to an address on this computer, which only a domain listed by its exact name may reach");
    }
    if addrs.is_empty() {
        return Err("its name does not resolve");
    }
    Ok(addrs)
}

async fn refuse(
    client: &mut TcpStream,
    shared: &Shared,
    host: &str,
    why: &str,
) -> Result<(), ProxyError> {
    let shown = crate::escape::escape_for_display(host);
    shared
        .logs
        .note(&format!("sandbox proxy refused {shown}: {why}"));
    record_refusal(&shared.refused_file, host);
    let body = format!(
        "Switchboard's sandbox refused {shown}: {why}. To allow it: switchboard server sandbox {} --allow-domain {shown}\n",
        shared.server
    );
    answer(client, 403, &body).await
}

async fn answer(client: &mut TcpStream, status: u16, body: &str) -> Result<(), ProxyError> {
    let reason = if status == 403 {
        "Forbidden"
    } else {
        "Bad Request"
    };
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(msg.as_bytes()).await?;
    let _ = client.shutdown().await;
    Ok(())
}

/// Adds `host` to the refused list (once; the newest kept when it is full).
fn record_refusal(file: &std::path::Path, host: &str) {
    if super::domains::pattern(host).is_err() {
        return; // not a name anyone could allow
    }
    let mut list = refused_domains(file);
    if list.iter().any(|h| h == host) {
        return;
    }
    list.push(host.to_owned());
    let start = list.len().saturating_sub(MAX_REFUSED);
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(file, list[start..].join("\n") + "\n");
}

/// The domains recorded in `file` (a server's [`REFUSED_FILE`]), oldest first.
pub fn refused_domains(file: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| super::domains::pattern(l).is_ok())
        .map(str::to_owned)
        .collect()
}

/// The domains the proxy refused a server with `sandbox` (recorded in its log folder
/// `log_dir`) that its lists still refuse, as findings with the command that allows each.
pub fn still_refused(sandbox: &SandboxSpec, log_dir: &std::path::Path) -> Vec<Finding> {
    let Some(lists) = sandbox.enabled.then(|| sandbox.filtered()).flatten() else {
        return Vec::new();
    };
    refused_domains(&log_dir.join(REFUSED_FILE))
        .iter()
        .filter(|d| !lists.decide(d).passes())
        .map(|d| Finding::refused_domain(d))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_forms_name_their_host() {
        let t = parse(b"CONNECT Api.Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.forward.is_none()),
            ("api.example.com", 443, true)
        );
        let t = parse(
            b"GET http://localhost:8080/a?b HTTP/1.1\r\nHost: localhost\r\nProxy-Authorization: x\r\n\r\n",
        )
        .unwrap();
        assert_eq!((t.host.as_str(), t.port), ("localhost", 8080));
        let fwd = String::from_utf8(t.forward.unwrap()).unwrap();
        assert!(fwd.starts_with("GET /a?b HTTP/1.1\r\n"), "{fwd}");
        assert!(!fwd.to_ascii_lowercase().contains("proxy-"), "{fwd}");
        for bad in [
            &b"GET /relative HTTP/1.1\r\n\r\n"[..],
            b"GET https://x.test/ HTTP/1.1\r\n\r\n",
            b"CONNECT nohost HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn refusals_are_recorded_once() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("logs").join(REFUSED_FILE);
        record_refusal(&f, "a.test");
        record_refusal(&f, "a.test");
        record_refusal(&f, "bad name");
        record_refusal(&f, "b.test");
        assert_eq!(refused_domains(&f), vec!["a.test", "b.test"]);
    }
}

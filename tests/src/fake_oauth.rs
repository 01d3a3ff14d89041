//! An OAuth 2.1 authorization server and a protected Streamable HTTP MCP server, in-process on
//! loopback, with hostile modes: the fixture for issue 12's sign-in tests.
//!
//! [`FakeOAuth::start`] binds two listeners on `127.0.0.1:0`:
//! - the **authorization server** (issuer `http://127.0.0.1:<as_port>`): RFC 8414 and OpenID
//!   discovery, RFC 7591 dynamic registration, `/authorize` with auto-consent, `/token`
//!   (authorization code with PKCE S256, refresh with rotation, client credentials) and RFC 7009
//!   revocation;
//! - the **resource server** at `http://127.0.0.1:<mcp_port>/mcp`: RFC 9728 protected resource
//!   metadata (path-aware by default), a 401 challenge without a valid bearer token, and a
//!   minimal MCP (JSON responses) whose `whoami` tool names the caller, whose `admin` tool
//!   needs the `mcp:admin` scope (403 `insufficient_scope` otherwise, for step-up), and whose
//!   `echo_token` tool answers with the bearer token it was called with (a leaky server).
//!
//! Why two ports: the client must treat the authorization server as a different origin from the
//! MCP server (issuer checks, where the token goes). Why hand-written HTTP rather than a
//! framework: the hostile modes send what a framework would not (10 MB metadata, a redirect to
//! the cloud metadata address, a body that never comes), and every request is recorded with its
//! headers and body for assertions (a token must never travel in a query string; a client secret
//! must go by the registered method). Every response closes its connection.
//!
//! Tokens, codes, client ids and secrets are random and prefixed (`at_`, `rt_`, `code_`,
//! `client_`, `secret_`) so canary tests can list them ([`OAuthHandle::access_tokens`] and
//! friends) and search the data dir, logs and IPC answers for them.
//!
//! State lives behind one `std::sync::Mutex`: every critical section is a few map operations
//! and no guard is held across an `.await`. Connection tasks live in a `JoinSet` owned by the
//! accept task, so dropping [`FakeOAuth`] also ends connections that hang on purpose
//! ([`Mode::SlowMetadata`]).

mod authz;
mod browser;
mod resource;
mod state;
mod wire;

use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::TcpListener;
use tokio::task::JoinSet;

pub use browser::FollowRedirect;
use state::Inner;

/// A misbehaviour of the authorization or resource server, set in [`OAuthOpts::mode`] or at
/// runtime with [`OAuthHandle::set_mode`]. Each is something a real, broken or malicious server
/// does; the client must refuse it and say why (or, for the benign ones, cope).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// A well-behaved server.
    #[default]
    Normal,
    /// The authorization redirect carries `iss=` of another issuer (RFC 9207 mix-up attack).
    WrongIss,
    /// The authorization server metadata's `issuer` differs from the URL it was fetched from.
    IssuerMismatch,
    /// The protected resource metadata's `resource` is another URL than the MCP server's.
    ResourceMismatch,
    /// The authorization server metadata has no `code_challenge_methods_supported`.
    NoS256,
    /// The authorization server metadata lists only `plain` PKCE.
    PlainOnly,
    /// The authorization server metadata is a valid 10 MB JSON document.
    HugeMetadata,
    /// The protected resource metadata endpoints answer 302 to the cloud metadata service
    /// (`http://169.254.169.254/latest/meta-data/`).
    RedirectToMetadataIp,
    /// The authorization server metadata advertises its endpoints on
    /// `http://auth.example.com/...` (plain http, not loopback).
    HttpDowngrade,
    /// Refresh answers carry no `refresh_token`; the old one stays valid.
    RefreshOmitsRefreshToken,
    /// The token endpoint answers `{"error": <error>}` with this HTTP status to
    /// `authorization_code` and `refresh_token` grants.
    TokenError(u16, String),
    /// `/authorize` redirects back with `error=access_denied` (the person clicked Deny).
    ConsentDenied,
    /// Metadata endpoints (protected resource and authorization server) never answer.
    SlowMetadata,
    /// Token answers carry this `token_type` (`mac`, say) instead of `Bearer`.
    TokenType(String),
}

/// Where the protected resource metadata is served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrmAt {
    /// Only path-aware: `/.well-known/oauth-protected-resource/mcp` (the root answers 404).
    #[default]
    PathAware,
    /// Only the root: `/.well-known/oauth-protected-resource` (the path-aware one answers 404).
    Root,
    /// Both.
    Both,
}

/// A client the person registered by hand and types into the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// The client secret; `None` for a public client.
    pub client_secret: Option<String>,
}

/// How to start the fixture.
#[derive(Clone, Debug)]
pub struct OAuthOpts {
    /// The misbehaviour at start.
    pub mode: Mode,
    /// Where the protected resource metadata is served.
    pub prm_at: PrmAt,
    /// Whether 401 challenges name `resource_metadata` (if not, the client must probe the
    /// well-known URLs itself).
    pub challenge_names_metadata: bool,
    /// Whether dynamic registration issues a client secret even when the client asks for
    /// `token_endpoint_auth_method: none`.
    pub confidential: bool,
    /// `token_endpoint_auth_methods_supported`.
    pub auth_methods: Vec<String>,
    /// Whether the metadata advertises `registration_endpoint` (`/register` answers either way).
    pub dcr: bool,
    /// `expires_in` of access tokens.
    pub access_ttl_secs: u64,
    /// A client known without registration.
    pub preregistered: Option<PreRegistered>,
    /// `scopes_supported` of the protected resource metadata. A client asks for these on its
    /// first sign-in, so step-up tests leave `mcp:admin` out to make `admin` need a second one.
    pub prm_scopes: Vec<String>,
    /// How long the token endpoint waits before answering, so concurrent requests all see an
    /// expired token before a refresh lands (refresh coalescing tests).
    pub token_delay: std::time::Duration,
}

impl Default for OAuthOpts {
    fn default() -> Self {
        Self {
            mode: Mode::Normal,
            prm_at: PrmAt::PathAware,
            challenge_names_metadata: true,
            confidential: false,
            auth_methods: ["none", "client_secret_basic", "client_secret_post"]
                .map(String::from)
                .to_vec(),
            dcr: true,
            access_ttl_secs: 3600,
            preregistered: None,
            prm_scopes: ["mcp:read", "mcp:admin"].map(String::from).to_vec(),
            token_delay: std::time::Duration::ZERO,
        }
    }
}

/// Which of the two servers saw a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The authorization server.
    Auth,
    /// The MCP resource server.
    Resource,
}

/// One request as received, for assertions.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Which server saw it.
    pub side: Side,
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string, decoded.
    pub query: Vec<(String, String)>,
    /// Every header, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first query parameter named `name`.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        wire::param(&self.query, name)
    }

    /// The body decoded as a form.
    pub fn form(&self) -> Vec<(String, String)> {
        wire::decode_form(&self.body)
    }

    /// The first form field named `name`.
    pub fn form_param(&self, name: &str) -> Option<String> {
        wire::param(&self.form(), name).map(str::to_owned)
    }
}

/// Counters, a snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Successful dynamic registrations.
    pub registrations: usize,
    /// `/authorize` requests (valid or not).
    pub authorizations: usize,
    /// Token requests with `grant_type=authorization_code`.
    pub token_authorization_code: usize,
    /// Token requests with `grant_type=refresh_token`.
    pub token_refresh: usize,
    /// Token requests with `grant_type=client_credentials`.
    pub token_client_credentials: usize,
    /// Successful refreshes.
    pub refreshes: usize,
    /// Revocation requests.
    pub revocations: usize,
    /// Metadata documents requested (protected resource and authorization server).
    pub metadata_fetches: usize,
}

/// A handle on the fixture's state, for assertions and controls; cheap to clone.
#[derive(Clone)]
pub struct OAuthHandle {
    inner: Arc<Mutex<Inner>>,
}

/// A running fixture; both servers stop when it is dropped.
pub struct FakeOAuth {
    /// The MCP endpoint, `http://127.0.0.1:<mcp_port>/mcp`.
    pub mcp_url: String,
    /// The authorization server's issuer, `http://127.0.0.1:<as_port>`.
    pub issuer: String,
    /// State, assertions and controls.
    pub state: OAuthHandle,
    tasks: [tokio::task::JoinHandle<()>; 2],
}

impl Drop for FakeOAuth {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The context every request handler gets.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub issuer: String,
    pub mcp_url: String,
    /// The MCP server's origin, `http://127.0.0.1:<mcp_port>`.
    pub mcp_origin: String,
    pub opts: Arc<OAuthOpts>,
    pub state: OAuthHandle,
}

impl FakeOAuth {
    /// Binds both servers on `127.0.0.1:0` and starts serving.
    pub async fn start(opts: OAuthOpts) -> Self {
        let auth = bind().await;
        let res = bind().await;
        let issuer = format!("http://{}", local(&auth));
        let mcp_origin = format!("http://{}", local(&res));
        let mcp_url = format!("{mcp_origin}/mcp");
        let state = OAuthHandle {
            inner: Arc::new(Mutex::new(Inner::new(&opts))),
        };
        let ctx = Ctx {
            issuer: issuer.clone(),
            mcp_url: mcp_url.clone(),
            mcp_origin,
            opts: Arc::new(opts),
            state: state.clone(),
        };
        let tasks = [
            tokio::spawn(accept(auth, ctx.clone(), Side::Auth)),
            tokio::spawn(accept(res, ctx, Side::Resource)),
        ];
        Self {
            mcp_url,
            issuer,
            state,
            tasks,
        }
    }

    /// The path-aware protected resource metadata URL.
    pub fn prm_url(&self) -> String {
        prm_path_url(&self.mcp_url)
    }
}

fn prm_path_url(mcp_url: &str) -> String {
    mcp_url.replacen("/mcp", "/.well-known/oauth-protected-resource/mcp", 1)
}

async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"))
}

fn local(l: &TcpListener) -> std::net::SocketAddr {
    l.local_addr().unwrap_or_else(|e| panic!("addr: {e}"))
}

/// Serves connections until aborted; the `JoinSet` aborts open connections when this ends.
async fn accept(listener: TcpListener, ctx: Ctx, side: Side) {
    let mut conns = JoinSet::new();
    while let Ok((mut stream, _)) = listener.accept().await {
        while conns.try_join_next().is_some() {}
        let ctx = ctx.clone();
        conns.spawn(async move {
            let Ok(Some(req)) = wire::read_request(&mut stream).await else {
                return;
            };
            ctx.state.record(side, &req);
            let _ = match side {
                Side::Auth => authz::serve(&ctx, &req, &mut stream).await,
                Side::Resource => resource::serve(&ctx, &req, &mut stream).await,
            };
        });
    }
}

impl OAuthHandle {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, side: Side, req: &wire::Request) {
        self.lock().record(side, req);
    }

    /// The current misbehaviour.
    pub fn mode(&self) -> Mode {
        self.lock().mode.clone()
    }

    /// Changes the misbehaviour from the next request on.
    pub fn set_mode(&self, mode: Mode) {
        self.lock().mode = mode;
    }

    /// Every access token issued so far expires now (refresh tokens stay valid).
    pub fn expire_access_tokens(&self) {
        self.lock().expire_access_tokens();
    }

    /// Revokes every access and refresh token issued so far.
    pub fn revoke_all(&self) {
        self.lock().revoke_all();
    }

    /// The counters.
    pub fn counts(&self) -> Counts {
        self.lock().counts
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// The requests received on `path` (either server).
    pub fn requests_to(&self, path: &str) -> Vec<Recorded> {
        self.lock()
            .requests
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    /// The `/authorize` requests (query: `resource`, `scope`, `state`, `code_challenge`, ...).
    pub fn authorize_requests(&self) -> Vec<Recorded> {
        self.requests_to("/authorize")
    }

    /// The `/token` requests (form fields via [`Recorded::form_param`]).
    pub fn token_requests(&self) -> Vec<Recorded> {
        self.requests_to("/token")
    }

    /// The JSON bodies of dynamic registration requests (valid JSON only).
    pub fn registrations(&self) -> Vec<serde_json::Value> {
        self.requests_to("/register")
            .iter()
            .filter_map(|r| serde_json::from_slice(&r.body).ok())
            .collect()
    }

    /// Resource requests that carried a token in the query string (must stay empty: RFC 6750
    /// §2.3 is forbidden by the MCP authorization spec).
    pub fn tokens_in_query(&self) -> Vec<Recorded> {
        self.lock().tokens_in_query()
    }

    /// Every `Authorization` header the resource server received, in order.
    pub fn authorization_headers(&self) -> Vec<String> {
        self.lock()
            .requests
            .iter()
            .filter(|r| r.side == Side::Resource)
            .filter_map(|r| r.header("authorization").map(str::to_owned))
            .collect()
    }

    /// Every access token issued, in order.
    pub fn access_tokens(&self) -> Vec<String> {
        self.lock().issued_access.clone()
    }

    /// Every refresh token issued, in order.
    pub fn refresh_tokens(&self) -> Vec<String> {
        self.lock().issued_refresh.clone()
    }

    /// Every client secret issued by registration (and the pre-registered one).
    pub fn client_secrets(&self) -> Vec<String> {
        self.lock()
            .clients
            .values()
            .filter_map(|c| c.secret.clone())
            .collect()
    }

    /// The ids of every client known (registered or pre-registered).
    pub fn client_ids(&self) -> Vec<String> {
        self.lock().clients.keys().cloned().collect()
    }

    /// Whether `token` (access or refresh) was issued and has been revoked.
    pub fn is_revoked(&self, token: &str) -> bool {
        self.lock().is_revoked(token)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn s256_matches_rfc7636_appendix_b() {
        assert_eq!(
            super::wire::s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}

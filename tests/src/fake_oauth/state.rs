//! The fixture's mutable state: clients, codes, tokens, recorded requests and counters.
//!
//! Plain data behind the handle's one mutex; methods here never await.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::wire::{random, Request};
use super::{Counts, Mode, OAuthOpts, Recorded, Side};

/// A registered (or pre-registered) client.
pub(super) struct Client {
    pub secret: Option<String>,
    /// The registered `token_endpoint_auth_method`; `None` (pre-registered) accepts whichever
    /// method carries the right secret.
    pub auth_method: Option<String>,
    pub redirect_uris: Vec<String>,
}

/// An authorization code waiting to be exchanged.
pub(super) struct Code {
    pub client_id: String,
    pub challenge: String,
    pub redirect_uri: String,
    pub resource: String,
    pub scope: String,
}

/// What a token was issued for.
#[derive(Clone)]
pub(super) struct Grant {
    pub client_id: String,
    pub subject: String,
    pub scope: String,
    pub resource: String,
    /// Access tokens only; refresh tokens do not expire.
    pub expires_at: Option<Instant>,
    pub revoked: bool,
}

pub(super) struct Inner {
    pub mode: Mode,
    pub clients: HashMap<String, Client>,
    pub codes: HashMap<String, Code>,
    pub access: HashMap<String, Grant>,
    pub refresh: HashMap<String, Grant>,
    pub issued_access: Vec<String>,
    pub issued_refresh: Vec<String>,
    pub requests: Vec<Recorded>,
    pub counts: Counts,
}

/// A token response's parts, for the handler to serialize.
pub(super) struct Issued {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub scope: String,
}

impl Inner {
    pub fn new(opts: &OAuthOpts) -> Self {
        let mut clients = HashMap::new();
        if let Some(pre) = &opts.preregistered {
            clients.insert(
                pre.client_id.clone(),
                Client {
                    secret: pre.client_secret.clone(),
                    auth_method: None,
                    redirect_uris: Vec::new(),
                },
            );
        }
        Self {
            mode: opts.mode.clone(),
            clients,
            codes: HashMap::new(),
            access: HashMap::new(),
            refresh: HashMap::new(),
            issued_access: Vec::new(),
            issued_refresh: Vec::new(),
            requests: Vec::new(),
            counts: Counts::default(),
        }
    }

    pub fn record(&mut self, side: Side, req: &Request) {
        self.requests.push(Recorded {
            side,
            method: req.method.clone(),
            path: req.path.clone(),
            query: req.query(),
            headers: req.headers.clone(),
            body: req.body.clone(),
        });
    }

    /// Issues an access token (and a refresh token when `with_refresh`) for `grant`.
    pub fn issue(&mut self, mut grant: Grant, ttl: Duration, with_refresh: bool) -> Issued {
        let access_token = random("at_");
        let refresh_token = with_refresh.then(|| {
            let rt = random("rt_");
            self.refresh.insert(rt.clone(), grant.clone());
            self.issued_refresh.push(rt.clone());
            rt
        });
        let scope = grant.scope.clone();
        grant.expires_at = Some(Instant::now() + ttl);
        self.access.insert(access_token.clone(), grant);
        self.issued_access.push(access_token.clone());
        Issued {
            access_token,
            refresh_token,
            scope,
        }
    }

    /// The grant behind a bearer token valid for `resource` now.
    pub fn valid_access(&self, token: &str, resource: &str) -> Option<Grant> {
        self.access
            .get(token)
            .filter(|g| !g.revoked && g.resource == resource)
            .filter(|g| g.expires_at.is_some_and(|t| t > Instant::now()))
            .cloned()
    }

    pub fn expire_access_tokens(&mut self) {
        let now = Instant::now();
        for g in self.access.values_mut() {
            g.expires_at = Some(now);
        }
    }

    pub fn revoke_all(&mut self) {
        for g in self.access.values_mut().chain(self.refresh.values_mut()) {
            g.revoked = true;
        }
    }

    /// Revokes `token` if known (RFC 7009: unknown tokens are not an error).
    pub fn revoke(&mut self, token: &str) {
        for map in [&mut self.access, &mut self.refresh] {
            if let Some(g) = map.get_mut(token) {
                g.revoked = true;
            }
        }
    }

    pub fn is_revoked(&self, token: &str) -> bool {
        self.access
            .get(token)
            .or_else(|| self.refresh.get(token))
            .is_some_and(|g| g.revoked)
    }

    pub fn tokens_in_query(&self) -> Vec<Recorded> {
        self.requests
            .iter()
            .filter(|r| r.side == Side::Resource)
            .filter(|r| {
                r.query.iter().any(|(k, v)| {
                    k == "access_token"
                        || self.access.contains_key(v)
                        || self.refresh.contains_key(v)
                })
            })
            .cloned()
            .collect()
    }
}

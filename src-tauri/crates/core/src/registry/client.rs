//! [`RegistryClient`]: the registry's v0.1 API over HTTP, with a cache.
//!
//! Bounds: every answer is read up to [`ClientOptions::max_body`] (4 MiB by default) and the
//! whole request, body included, within [`ClientOptions::timeout`]; an endless or huge answer
//! ends as [`RegistryError::TooLarge`] or a timeout, never as memory. Redirects are not
//! followed: a registry that moved is reconfigured by the person, not silently by the server.
//!
//! The registry decides what commands are proposed, so it is reached over https; plain http
//! only to this machine (a mirror or a test registry on loopback).
//!
//! Cache: each answer (already parsed, filtered and cut) is kept in `<cache dir>/<sha256 of
//! the request URL>.json` with the time it was fetched. Within the time to live the cached
//! answer is used without asking; after it, the registry is asked again, and if it cannot be
//! reached (connection, timeout, 5xx, 429) the cached answer is returned marked
//! [`Freshness::Offline`] so the shells can say so. A cache that cannot be read or written is
//! only logged: it is an optimisation, not a record.

use std::path::PathBuf;
use std::time::Duration;

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::wire::{cut, parse_entry, Entry, Status};
use super::RegistryError;

/// The official registry.
pub const DEFAULT_URL: &str = "https://registry.modelcontextprotocol.io";

/// Limits and cache settings.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Where answers are cached; `None` for no cache.
    pub cache_dir: Option<PathBuf>,
    /// How long a cached answer is used without asking.
    pub ttl: Duration,
    /// The limit for one request, body included.
    pub timeout: Duration,
    /// The most bytes of one answer read.
    pub max_body: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            cache_dir: None,
            ttl: Duration::from_secs(15 * 60),
            timeout: Duration::from_secs(20),
            max_body: 4 * 1024 * 1024,
        }
    }
}

/// A search or browse request.
#[derive(Clone, Debug, Default)]
pub struct SearchQuery {
    /// Text the server names must contain; `None` lists everything.
    pub text: Option<String>,
    /// The cursor of the page to fetch (from [`Page::next_cursor`]).
    pub cursor: Option<String>,
    /// Entries per page (1..=100; 0 means 30).
    pub limit: u32,
    /// Ask the registry even when the cache is fresh.
    pub refresh: bool,
}

/// Where an answer came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Freshness {
    /// From the registry, just now.
    Live,
    /// From the cache, within its time to live.
    Cached {
        /// Seconds since it was fetched.
        age_secs: u64,
    },
    /// From the cache, because the registry could not be reached.
    Offline {
        /// Seconds since it was fetched.
        age_secs: u64,
        /// Why the registry could not be reached.
        reason: String,
    },
}

/// One page of entries.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Page {
    /// The active entries.
    pub entries: Vec<Entry>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
    /// Entries left out because their status is not active.
    pub hidden: usize,
    /// Entries left out because they are not valid `server.json`.
    pub skipped: usize,
    /// Where this page came from.
    pub freshness: Freshness,
}

/// A registry client.
#[derive(Clone, Debug)]
pub struct RegistryClient {
    base: url::Url,
    http: reqwest::Client,
    opts: ClientOptions,
}

#[derive(Serialize, Deserialize)]
struct Cached<T> {
    fetched_ms: i64,
    url: String,
    value: T,
}

#[derive(Deserialize)]
struct RawList {
    servers: Vec<serde_json::Value>,
    #[serde(default)]
    metadata: Option<RawMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMeta {
    #[serde(default)]
    next_cursor: Option<String>,
}

/// A failure worth falling back to the cache for: the registry is not there right now.
struct Transient(String);

impl RegistryClient {
    /// A client for the registry at `base_url` (`https://registry.modelcontextprotocol.io`).
    pub fn new(base_url: &str, opts: ClientOptions) -> Result<Self, RegistryError> {
        let bad = |reason: &str| RegistryError::BadUrl {
            url: crate::escape::short_for_display(base_url, 200),
            reason: reason.to_owned(),
        };
        let base = crate::config::validate_url(base_url.trim()).map_err(|e| bad(&e.to_string()))?;
        if base.scheme() == "http" && !crate::config::is_loopback(&base) {
            return Err(bad(
                "a registry decides what commands are proposed, so it must be reached over https (plain http only to this machine)",
            ));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(bad("it must not have a query or fragment"));
        }
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(opts.timeout.min(Duration::from_secs(10)))
            .timeout(opts.timeout)
            .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| bad(&e.to_string()))?;
        Ok(Self { base, http, opts })
    }

    /// The registry's base URL.
    pub fn base_url(&self) -> &str {
        self.base.as_str()
    }

    fn endpoint(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty();
            path.extend(segments);
        }
        url
    }

    /// One page of active entries, newest versions only.
    pub async fn search(&self, q: &SearchQuery) -> Result<Page, RegistryError> {
        let mut url = self.endpoint(&["v0.1", "servers"]);
        {
            let mut pairs = url.query_pairs_mut();
            let limit = if q.limit == 0 { 30 } else { q.limit.min(100) };
            pairs.append_pair("limit", &limit.to_string());
            pairs.append_pair("version", "latest");
            if let Some(t) = q.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                pairs.append_pair("search", t);
            }
            if let Some(c) = q.cursor.as_deref().filter(|c| !c.is_empty()) {
                pairs.append_pair("cursor", c);
            }
        }
        let (mut page, freshness) = self.cached_or_fetch(&url, q.refresh, parse_page).await?;
        page.freshness = freshness;
        Ok(page)
    }

    /// One entry: `version`, or the latest. A deprecated or deleted entry is refused.
    pub async fn server(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<(Entry, Freshness), RegistryError> {
        let shown = || crate::escape::short_for_display(name, 200);
        if !super::wire::valid_name(name) {
            return Err(RegistryError::NotFound {
                name: shown(),
                version: None,
            });
        }
        let v = version.unwrap_or("latest");
        let url = self.endpoint(&["v0.1", "servers", name, "versions", v]);
        let fetched = self
            .cached_or_fetch(&url, false, |url, body| {
                let value: serde_json::Value =
                    serde_json::from_slice(body).map_err(|e| malformed(url, &e.to_string()))?;
                parse_entry(value)
                    .map_err(|_| malformed(url, "the entry is not a valid server.json"))
            })
            .await;
        let (entry, freshness) = match fetched {
            Err(RegistryError::Status { status: 404, .. }) => {
                return Err(RegistryError::NotFound {
                    name: shown(),
                    version: version.map(|v| cut(v, 64)),
                })
            }
            other => other?,
        };
        if entry.server.name != name {
            return Err(malformed(&url, "it describes another server"));
        }
        if entry.status != Status::Active {
            return Err(RegistryError::NotActive {
                name: shown(),
                status: entry.status.word().to_owned(),
            });
        }
        Ok((entry, freshness))
    }

    async fn cached_or_fetch<T: Serialize + DeserializeOwned>(
        &self,
        url: &url::Url,
        refresh: bool,
        parse: impl Fn(&url::Url, &[u8]) -> Result<T, RegistryError>,
    ) -> Result<(T, Freshness), RegistryError> {
        let cached: Option<Cached<T>> = self.read_cache(url);
        let age = |c: &Cached<T>| {
            u64::try_from(crate::clock::now_ms().saturating_sub(c.fetched_ms)).unwrap_or(0) / 1000
        };
        if let Some(c) = &cached {
            if !refresh && Duration::from_secs(age(c)) < self.opts.ttl {
                let age_secs = age(c);
                return Ok((
                    cached
                        .map(|c| c.value)
                        .ok_or_else(|| malformed(url, "cache"))?,
                    Freshness::Cached { age_secs },
                ));
            }
        }
        match self.fetch(url).await {
            Ok(Ok(body)) => {
                let value = parse(url, &body)?;
                self.write_cache(url, &value);
                Ok((value, Freshness::Live))
            }
            Ok(Err(e)) => Err(e),
            Err(Transient(reason)) => match cached {
                Some(c) => {
                    let age_secs = age(&c);
                    tracing::warn!(url = %url, %reason, "registry unreachable; using the cached answer");
                    Ok((c.value, Freshness::Offline { age_secs, reason }))
                }
                None => Err(RegistryError::Unreachable {
                    url: url.to_string(),
                    reason,
                }),
            },
        }
    }

    /// The body of a 200 answer; `Err(Transient)` when the registry is not reachable now.
    async fn fetch(&self, url: &url::Url) -> Result<Result<Vec<u8>, RegistryError>, Transient> {
        let mut resp = match self
            .http
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => return Err(Transient(reqwest_reason(&e))),
        };
        let status = resp.status();
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(Transient(format!("HTTP {}", status.as_u16())));
        }
        if !status.is_success() {
            return Ok(Err(RegistryError::Status {
                url: url.to_string(),
                status: status.as_u16(),
            }));
        }
        let max = self.opts.max_body;
        let too_large = || RegistryError::TooLarge {
            url: url.to_string(),
            max,
        };
        if resp.content_length().is_some_and(|n| n > max as u64) {
            return Ok(Err(too_large()));
        }
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > max {
                        return Ok(Err(too_large()));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(Ok(body)),
                Err(e) => return Err(Transient(reqwest_reason(&e))),
            }
        }
    }

    fn cache_path(&self, url: &url::Url) -> Option<PathBuf> {
        let dir = self.opts.cache_dir.as_ref()?;
        let key = hex::encode(Sha256::digest(url.as_str().as_bytes()));
        Some(dir.join(format!("{key}.json")))
    }

    fn read_cache<T: DeserializeOwned>(&self, url: &url::Url) -> Option<Cached<T>> {
        let path = self.cache_path(url)?;
        let bytes = std::fs::read(&path).ok()?;
        match serde_json::from_slice::<Cached<T>>(&bytes) {
            Ok(c) if c.url == url.as_str() => Some(c),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "unreadable registry cache entry");
                None
            }
        }
    }

    fn write_cache<T: Serialize>(&self, url: &url::Url, value: &T) {
        let Some(path) = self.cache_path(url) else {
            return;
        };
        let entry = Cached {
            fetched_ms: crate::clock::now_ms(),
            url: url.to_string(),
            value,
        };
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = path.with_extension("tmp");
            std::fs::write(
                &tmp,
                serde_json::to_vec(&entry).map_err(std::io::Error::other)?,
            )?;
            std::fs::rename(&tmp, &path)
        })();
        if let Err(e) = result {
            tracing::warn!(path = %path.display(), error = %e, "could not write the registry cache");
        }
        if let Some(dir) = path.parent() {
            prune(dir, CACHE_FILES_MAX);
        }
    }
}

/// The most answers kept in the cache: every search text is its own file, and a person typing
/// searches for a year must not fill the disk.
pub const CACHE_FILES_MAX: usize = 256;

/// Deletes the oldest cache files beyond `keep`, best effort.
fn prune(dir: &std::path::Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, p) in &files[..files.len() - keep] {
        let _ = std::fs::remove_file(p);
    }
}

fn malformed(url: &url::Url, reason: &str) -> RegistryError {
    RegistryError::Malformed {
        url: url.to_string(),
        reason: cut(reason, 300),
    }
}

fn reqwest_reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "could not connect".to_owned()
    } else {
        cut(&e.to_string(), 300)
    }
}

fn parse_page(url: &url::Url, body: &[u8]) -> Result<Page, RegistryError> {
    let raw: RawList = serde_json::from_slice(body).map_err(|e| malformed(url, &e.to_string()))?;
    let mut page = Page {
        entries: Vec::new(),
        next_cursor: raw
            .metadata
            .and_then(|m| m.next_cursor)
            .filter(|c| !c.is_empty())
            .map(|c| cut(&c, 1000)),
        hidden: 0,
        skipped: 0,
        freshness: Freshness::Live,
    };
    for item in raw.servers {
        match parse_entry(item) {
            Ok(e) if e.status == Status::Active => page.entries.push(e),
            Ok(_) => page.hidden += 1,
            Err(_) => page.skipped += 1,
        }
    }
    Ok(page)
}

#[cfg(test)]
mod tests;

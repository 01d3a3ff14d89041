//! A configured provider's model list from its vendor's API.
//!
//! - OpenAI and every OpenAI-compatible base URL: `GET {base}/models` with the key as a Bearer
//!   token when one is set; the answer is `{"data": [{"id": ...}, ...]}`.
//! - Anthropic: `GET {base}/v1/models?limit=1000` with `x-api-key` and `anthropic-version`;
//!   pages are followed with `after_id={last_id}` while `has_more` is true (bounded, and a
//!   repeated cursor ends the walk so a broken server cannot loop us).
//! - The `ollama` and `lmstudio` profiles ask their runtime's own API first ([`super::local`]),
//!   which says per model whether it takes tools; LM Studio falls back to `/v1/models`.

use std::collections::HashSet;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use serde_json::Value;

use super::fetch::{Call, ModelsError, LIST_TIMEOUT};
use super::{families, local, ModelInfo, MAX_MODELS};
use crate::llm::profiles::{AuthStyle, Profile, Wire};
use crate::redact::Secret;

/// The most Anthropic pages followed.
const MAX_PAGES: usize = 20;
/// The Anthropic API version sent.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The models of a provider of `profile` at `base_url` (the profile's own when `None`).
pub async fn list_models(
    http: &reqwest::Client,
    profile: &Profile,
    base_url: Option<&str>,
    key: Option<&Secret>,
) -> Result<Vec<ModelInfo>, ModelsError> {
    let base = base_url
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .or(profile.base_url)
        .ok_or_else(|| ModelsError::BadUrl("the provider has no base URL".into()))?;
    let parsed = url::Url::parse(base).map_err(|e| ModelsError::BadUrl(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ModelsError::BadUrl(format!(
            "the scheme must be http or https, not {}",
            parsed.scheme()
        )));
    }
    let base = base.trim_end_matches('/');
    let key = key.filter(|k| !k.expose().trim().is_empty());
    if profile.key_required && key.is_none() {
        return Err(ModelsError::NoKey);
    }
    let headers = auth_headers(profile, key)?;
    match (profile.wire, profile.id) {
        (Wire::Anthropic, _) => anthropic(http, base, headers, key).await,
        (_, "ollama") => local::ollama_models(http, local::runtime_root(base), LIST_TIMEOUT).await,
        (_, "lmstudio") => {
            let root = local::runtime_root(base);
            match local::lmstudio_models(http, root, headers.clone(), LIST_TIMEOUT).await {
                // An older LM Studio (before its REST API) still has the compatible list.
                Err(ModelsError::Status { status: 404, .. }) => {
                    openai(http, profile, base, headers, key).await
                }
                other => other,
            }
        }
        _ => openai(http, profile, base, headers, key).await,
    }
}

fn auth_headers(profile: &Profile, key: Option<&Secret>) -> Result<HeaderMap, ModelsError> {
    let mut h = HeaderMap::new();
    let bad = |_| ModelsError::BadUrl("the API key cannot be sent in a header".into());
    match (profile.auth, key) {
        (AuthStyle::Bearer, Some(k)) => {
            let mut v =
                HeaderValue::from_str(&format!("Bearer {}", k.expose().trim())).map_err(bad)?;
            v.set_sensitive(true);
            h.insert(AUTHORIZATION, v);
        }
        (AuthStyle::XApiKey, Some(k)) => {
            let mut v = HeaderValue::from_str(k.expose().trim()).map_err(bad)?;
            v.set_sensitive(true);
            h.insert(HeaderName::from_static("x-api-key"), v);
        }
        _ => {}
    }
    if profile.wire == Wire::Anthropic {
        h.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
    }
    Ok(h)
}

fn not_a_list(url: &str, what: &str) -> ModelsError {
    ModelsError::NotJson {
        url: url.to_owned(),
        reason: what.to_owned(),
    }
}

/// The `data` array of a list answer.
fn data<'a>(v: &'a Value, url: &str) -> Result<&'a Vec<Value>, ModelsError> {
    v.get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| not_a_list(url, "no `data` array"))
}

async fn openai(
    http: &reqwest::Client,
    profile: &Profile,
    base: &str,
    headers: HeaderMap,
    key: Option<&Secret>,
) -> Result<Vec<ModelInfo>, ModelsError> {
    let url = format!("{base}/models");
    let v = Call {
        http,
        url: url.clone(),
        headers,
        key,
        timeout: LIST_TIMEOUT,
    }
    .get()
    .await?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for m in data(&v, &url)?.iter().take(MAX_MODELS) {
        let Some(id) = m.get("id").and_then(Value::as_str) else {
            continue;
        };
        if families::is_not_chat(id) || !seen.insert(id.to_owned()) {
            continue;
        }
        let name = m.get("name").and_then(Value::as_str).map(str::to_owned);
        out.push(ModelInfo::from_family(profile.id, id.to_owned(), name));
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

async fn anthropic(
    http: &reqwest::Client,
    base: &str,
    headers: HeaderMap,
    key: Option<&Secret>,
) -> Result<Vec<ModelInfo>, ModelsError> {
    let mut out: Vec<ModelInfo> = Vec::new();
    let mut cursors = HashSet::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut url = url::Url::parse(&format!("{base}/v1/models"))
            .map_err(|e| ModelsError::BadUrl(e.to_string()))?;
        url.query_pairs_mut().append_pair("limit", "1000");
        if let Some(a) = &after {
            url.query_pairs_mut().append_pair("after_id", a);
        }
        let url = url.to_string();
        let v = Call {
            http,
            url: url.clone(),
            headers: headers.clone(),
            key,
            timeout: LIST_TIMEOUT,
        }
        .get()
        .await?;
        for m in data(&v, &url)? {
            let Some(id) = m.get("id").and_then(Value::as_str) else {
                continue;
            };
            if out.len() < MAX_MODELS && !out.iter().any(|x| x.id == id) {
                let name = m.get("display_name").and_then(Value::as_str);
                out.push(ModelInfo::from_family(
                    "anthropic",
                    id.to_owned(),
                    name.map(str::to_owned),
                ));
            }
        }
        let more = v.get("has_more").and_then(Value::as_bool).unwrap_or(false);
        let last = v.get("last_id").and_then(Value::as_str).map(str::to_owned);
        match last {
            Some(l) if more && cursors.insert(l.clone()) => after = Some(l),
            _ => break,
        }
    }
    Ok(out)
}

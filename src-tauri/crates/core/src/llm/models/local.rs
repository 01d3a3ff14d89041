//! Local runtimes: finding Ollama and LM Studio on this machine, and their installed models.
//!
//! Detection only ever talks to loopback (a runtime's URL that is not 127.0.0.1, ::1 or
//! `localhost` is refused, not probed), with a short connect timeout and no proxy, so a window
//! asking "what runs here?" gets its answer in well under a second when nothing does.
//!
//! - Ollama (default `http://127.0.0.1:11434`): `GET /api/tags` lists installed models as
//!   `{"models": [{"name": "llama3.1:8b", ...}]}`; `POST /api/show {"model": NAME}` answers
//!   `{"capabilities": ["completion", "tools", ...]}` (newer Ollama), where `tools` means native
//!   tool calling and `embedding` without `completion` means an embedding model. Its
//!   OpenAI-compatible endpoint, which chats use, is `/v1`.
//! - LM Studio (default `http://127.0.0.1:1234`): `GET /api/v0/models` lists
//!   `{"data": [{"id", "type": "llm"|"vlm"|"embeddings", "capabilities": ["tool_use"]?}]}`;
//!   an LM Studio without that REST API still has the compatible `GET /v1/models`.
//!
//! A model whose capabilities are missing (an older runtime, a failed `show`) is
//! [`ToolSupport::Unknown`], never assumed either way.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde::Serialize;
use serde_json::{json, Value};

use super::fetch::{Call, ModelsError};
use super::{ModelInfo, ToolSource, ToolSupport, MAX_MODELS};

/// How long connecting to a local runtime may take (loopback answers in microseconds).
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(400);
/// How long one detection request may take end to end.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(4);
/// `POST /api/show` requests in flight at once.
const SHOW_PARALLEL: usize = 4;
/// The most Ollama models asked about one by one (beyond, tool support is unknown).
const MAX_SHOWN: usize = 200;

/// A local model runtime Switchboard looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalRuntime {
    /// Ollama.
    Ollama,
    /// LM Studio.
    LmStudio,
}

impl LocalRuntime {
    /// Both, in the order shown.
    pub const ALL: [LocalRuntime; 2] = [LocalRuntime::Ollama, LocalRuntime::LmStudio];

    /// The provider profile a detected runtime is added with.
    pub fn profile_id(self) -> &'static str {
        match self {
            Self::Ollama => "ollama",
            Self::LmStudio => "lmstudio",
        }
    }

    /// The name shown to people.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama",
            Self::LmStudio => "LM Studio",
        }
    }

    /// Where it listens by default (its root, without `/v1`).
    pub fn default_root(self) -> &'static str {
        match self {
            Self::Ollama => "http://127.0.0.1:11434",
            Self::LmStudio => "http://127.0.0.1:1234",
        }
    }

    /// The environment variable that moves it (tests, a runtime on another port).
    pub fn env_var(self) -> &'static str {
        match self {
            Self::Ollama => "SWITCHBOARD_OLLAMA_URL",
            Self::LmStudio => "SWITCHBOARD_LMSTUDIO_URL",
        }
    }
}

/// A runtime that answered, with its models.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DetectedRuntime {
    /// Which runtime.
    pub runtime: LocalRuntime,
    /// The provider profile to add it with.
    pub profile_id: &'static str,
    /// Its root URL.
    pub root: String,
    /// Its OpenAI-compatible base URL (`{root}/v1`), what a provider is added with.
    pub base_url: String,
    /// Its installed chat models.
    pub models: Vec<ModelInfo>,
}

/// A runtime's root from an OpenAI-compatible base URL (`.../v1` dropped).
pub fn runtime_root(base: &str) -> &str {
    let b = base.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b)
}

/// Whether `url` names this machine.
pub fn is_loopback(url: &str) -> bool {
    match url::Url::parse(url).ok().as_ref().and_then(url::Url::host) {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// The client detection uses: short connect timeout, no proxy (loopback must stay local).
pub fn probe_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .no_proxy()
        .build()
        .unwrap_or_default()
}

/// Probes each `(runtime, root)` at once; the ones that answered, in the order given. A root
/// that is not loopback is skipped.
pub async fn detect(
    http: &reqwest::Client,
    roots: &[(LocalRuntime, String)],
) -> Vec<DetectedRuntime> {
    let probes = roots.iter().map(|(runtime, root)| async move {
        let root = root.trim_end_matches('/').to_owned();
        if !is_loopback(&root) {
            tracing::warn!(
                runtime = runtime.name(),
                "not probing a runtime URL that is not loopback"
            );
            return None;
        }
        let models = match runtime {
            LocalRuntime::Ollama => ollama_models(http, &root, PROBE_TIMEOUT).await,
            LocalRuntime::LmStudio => {
                match lmstudio_models(http, &root, HeaderMap::new(), PROBE_TIMEOUT).await {
                    Err(ModelsError::Status { status: 404, .. }) => {
                        compatible_models(http, &root).await
                    }
                    other => other,
                }
            }
        };
        match models {
            Ok(models) => Some(DetectedRuntime {
                runtime: *runtime,
                profile_id: runtime.profile_id(),
                base_url: format!("{root}/v1"),
                root,
                models,
            }),
            Err(e) => {
                tracing::debug!(runtime = runtime.name(), error = %e, "runtime not detected");
                None
            }
        }
    });
    futures::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

fn call<'a>(
    http: &'a reqwest::Client,
    url: String,
    headers: HeaderMap,
    timeout: Duration,
) -> Call<'a> {
    Call {
        http,
        url,
        headers,
        key: None,
        timeout,
    }
}

fn unknown(id: String) -> ModelInfo {
    ModelInfo {
        id,
        display_name: None,
        tools: ToolSupport::Unknown,
        tools_source: ToolSource::None,
    }
}

/// GETs `url` and returns its array field `field`; an answer without one is not a model list.
async fn get_list(
    http: &reqwest::Client,
    url: String,
    headers: HeaderMap,
    timeout: Duration,
    field: &str,
) -> Result<Vec<Value>, ModelsError> {
    let mut v = call(http, url.clone(), headers, timeout).get().await?;
    match v.get_mut(field).map(Value::take) {
        Some(Value::Array(list)) => Ok(list),
        _ => Err(ModelsError::NotJson {
            url,
            reason: format!("no `{field}` array"),
        }),
    }
}

/// Ollama's installed models, each with what `/api/show` says of tools.
pub async fn ollama_models(
    http: &reqwest::Client,
    root: &str,
    timeout: Duration,
) -> Result<Vec<ModelInfo>, ModelsError> {
    let list = get_list(
        http,
        format!("{root}/api/tags"),
        HeaderMap::new(),
        timeout,
        "models",
    )
    .await?;
    let mut names: Vec<String> = list
        .iter()
        .filter_map(|m| {
            m.get("name")
                .or_else(|| m.get("model"))
                .and_then(Value::as_str)
        })
        .map(str::to_owned)
        .take(MAX_MODELS)
        .collect();
    names.sort();
    names.dedup();
    let show_url = format!("{root}/api/show");
    let shown: Vec<Option<ModelInfo>> = futures::stream::iter(names.into_iter().enumerate())
        .map(|(i, name)| {
            let show_url = show_url.clone();
            async move {
                if i >= MAX_SHOWN {
                    return Some(unknown(name));
                }
                let body = json!({ "model": name });
                let caps = call(http, show_url, HeaderMap::new(), timeout)
                    .post(&body)
                    .await
                    .ok()
                    .and_then(|v| v.get("capabilities").and_then(Value::as_array).cloned());
                let Some(caps) = caps else {
                    return Some(unknown(name));
                };
                let has = |c: &str| caps.iter().any(|x| x.as_str() == Some(c));
                if has("embedding") && !has("completion") {
                    return None;
                }
                Some(ModelInfo {
                    id: name,
                    display_name: None,
                    tools: if has("tools") {
                        ToolSupport::Native
                    } else {
                        ToolSupport::None
                    },
                    tools_source: ToolSource::Runtime,
                })
            }
        })
        .buffered(SHOW_PARALLEL)
        .collect()
        .await;
    Ok(shown.into_iter().flatten().collect())
}

/// LM Studio's models from its REST API, embedding models left out.
pub async fn lmstudio_models(
    http: &reqwest::Client,
    root: &str,
    headers: HeaderMap,
    timeout: Duration,
) -> Result<Vec<ModelInfo>, ModelsError> {
    let data = get_list(
        http,
        format!("{root}/api/v0/models"),
        headers,
        timeout,
        "data",
    )
    .await?;
    let mut out: Vec<ModelInfo> = Vec::new();
    for m in data.iter().take(MAX_MODELS) {
        let Some(id) = m.get("id").and_then(Value::as_str) else {
            continue;
        };
        if m.get("type").and_then(Value::as_str) == Some("embeddings")
            || out.iter().any(|x| x.id == id)
        {
            continue;
        }
        out.push(match m.get("capabilities").and_then(Value::as_array) {
            Some(caps) => ModelInfo {
                id: id.to_owned(),
                display_name: None,
                tools: if caps.iter().any(|c| c.as_str() == Some("tool_use")) {
                    ToolSupport::Native
                } else {
                    ToolSupport::None
                },
                tools_source: ToolSource::Runtime,
            },
            None => unknown(id.to_owned()),
        });
    }
    Ok(out)
}

/// The compatible `GET {root}/v1/models` list, tool support unknown.
async fn compatible_models(
    http: &reqwest::Client,
    root: &str,
) -> Result<Vec<ModelInfo>, ModelsError> {
    let data = get_list(
        http,
        format!("{root}/v1/models"),
        HeaderMap::new(),
        PROBE_TIMEOUT,
        "data",
    )
    .await?;
    Ok(data
        .iter()
        .filter_map(|m| m.get("id").and_then(Value::as_str))
        .filter(|id| !super::families::is_not_chat(id))
        .take(MAX_MODELS)
        .map(|id| unknown(id.to_owned()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_and_loopback() {
        assert_eq!(
            runtime_root("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            runtime_root("http://127.0.0.1:1234"),
            "http://127.0.0.1:1234"
        );
        assert!(is_loopback("http://127.0.0.1:11434"));
        assert!(is_loopback("http://localhost:1234"));
        assert!(is_loopback("http://[::1]:1234"));
        assert!(!is_loopback("http://10.0.0.5:11434"));
        assert!(!is_loopback("http://example.com"));
        assert!(!is_loopback("not a url"));
    }
}

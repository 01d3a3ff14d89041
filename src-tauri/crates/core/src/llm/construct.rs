//! Provider construction: a profile row, a base URL and a key in, a [`Provider`] out.
//!
//! The one place that knows both the vendor table ([`super::profiles`]) and the wire
//! implementations (`openai`, `anthropic`, the prompt-based tool mode): it checks the URL and
//! the key, then picks the wire format the profile names. Kept apart from the table so the
//! data stays a leaf the wire formats can read without a cycle.
//!
//! Plain `http` is refused unless the base URL is on this machine or on an address the person
//! marked local (RD-03, [`super::locality`]): over it the key and the whole conversation are
//! readable by anyone on the path.

use super::anthropic::AnthropicProvider;
use super::http::Endpoint;
use super::locality::locality;
use super::openai::OpenAiProvider;
use super::profiles::{Profile, ToolMode, Wire};
use super::prompt_tools::PromptToolProvider;
use super::provider::{Provider, RetryPolicy};
use crate::redact::Secret;

/// Why a provider could not be built from a profile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The profile has no default base URL and none was given.
    #[error("the {profile} provider needs a base URL")]
    MissingBaseUrl {
        /// The profile id.
        profile: &'static str,
    },
    /// The base URL does not parse or is not http(s).
    #[error("the base URL for {profile} is invalid: {reason}")]
    InvalidBaseUrl {
        /// The profile id.
        profile: &'static str,
        /// Why.
        reason: String,
    },
    /// The vendor requires a key and none was given.
    #[error("the {profile} provider needs an API key")]
    MissingKey {
        /// The profile id.
        profile: &'static str,
    },
    /// The base URL is plain `http` to an address that is neither loopback nor marked local
    /// (RD-03): the key and the conversation would cross the network unencrypted.
    #[error(
        "the base URL for {profile} uses plain http to {host}, which is not this machine; use \
         https, or mark {host} local if it is a machine of yours on a network you trust"
    )]
    PlainHttp {
        /// The profile id.
        profile: &'static str,
        /// The URL's host.
        host: String,
    },
    /// The key holds characters an HTTP header cannot carry (a pasted newline, usually).
    #[error("the API key for {profile} contains characters that cannot be sent in a header")]
    InvalidKey {
        /// The profile id.
        profile: &'static str,
    },
}

/// Everything needed to build a provider; [`ProviderConfig::new`] gives the defaults.
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    /// The vendor (copy and adjust a table row to change a quirk).
    pub profile: Profile,
    /// Overrides the profile's base URL.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<Secret>,
    /// Retries before the first streamed byte.
    pub retry: RetryPolicy,
    /// Addresses the person marked local (host names or IPs): plain `http` may go to them.
    pub local_hosts: Vec<String>,
}

impl ProviderConfig {
    /// A config for `profile` with no override, no key and the default retry policy.
    pub fn new(profile: &Profile) -> Self {
        Self {
            profile: *profile,
            base_url: None,
            api_key: None,
            retry: RetryPolicy::default(),
            local_hosts: Vec::new(),
        }
    }

    /// Builds the provider: the profile's wire implementation, wrapped in the prompt-based
    /// tool mode when the profile asks for it.
    pub fn build(self, http: reqwest::Client) -> Result<Box<dyn Provider>, ProfileError> {
        let p = self.profile;
        let base = self
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .or(p.base_url)
            .ok_or(ProfileError::MissingBaseUrl { profile: p.id })?;
        let parsed = url::Url::parse(base).map_err(|e| ProfileError::InvalidBaseUrl {
            profile: p.id,
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ProfileError::InvalidBaseUrl {
                profile: p.id,
                reason: format!("the scheme must be http or https, not {}", parsed.scheme()),
            });
        }
        if parsed.scheme() == "http" && !locality(base, &self.local_hosts).is_local() {
            return Err(ProfileError::PlainHttp {
                profile: p.id,
                host: parsed.host_str().unwrap_or_default().to_owned(),
            });
        }
        let key = self.api_key.filter(|k| !k.expose().trim().is_empty());
        if p.key_required && key.is_none() {
            return Err(ProfileError::MissingKey { profile: p.id });
        }
        let endpoint = Endpoint::new(p, base.trim_end_matches('/'), key, http, self.retry)
            .ok_or(ProfileError::InvalidKey { profile: p.id })?;
        let wire: Box<dyn Provider> = match p.wire {
            Wire::OpenAi => Box::new(OpenAiProvider::new(endpoint)),
            Wire::Anthropic => Box::new(AnthropicProvider::new(endpoint)),
        };
        Ok(match p.quirks.tool_mode {
            ToolMode::Native => wire,
            ToolMode::Prompt => Box::new(PromptToolProvider::new(wire)),
        })
    }
}

/// Builds a provider for `profile` with the default retry policy; see [`ProviderConfig`] to
/// tune retries.
pub fn build_provider(
    profile: &Profile,
    base_url_override: Option<&str>,
    api_key: Option<Secret>,
    http: reqwest::Client,
) -> Result<Box<dyn Provider>, ProfileError> {
    ProviderConfig {
        base_url: base_url_override.map(str::to_owned),
        api_key,
        ..ProviderConfig::new(profile)
    }
    .build(http)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::profiles::profile;

    fn get(id: &str) -> Profile {
        *profile(id).unwrap()
    }

    #[test]
    fn building_checks_url_and_key() {
        let http = reqwest::Client::new();
        let err = |r: Result<Box<dyn Provider>, ProfileError>| r.err().unwrap();
        assert_eq!(
            err(build_provider(&get("custom"), None, None, http.clone())),
            ProfileError::MissingBaseUrl { profile: "custom" }
        );
        assert!(matches!(
            err(build_provider(
                &get("custom"),
                Some("ftp://x"),
                None,
                http.clone()
            )),
            ProfileError::InvalidBaseUrl { .. }
        ));
        assert_eq!(
            err(build_provider(&get("openai"), None, None, http.clone())),
            ProfileError::MissingKey { profile: "openai" }
        );
        assert_eq!(
            err(build_provider(
                &get("openai"),
                None,
                Some(Secret::new("  ")),
                http.clone()
            )),
            ProfileError::MissingKey { profile: "openai" }
        );
        assert_eq!(
            err(build_provider(
                &get("openai"),
                None,
                Some(Secret::new("sk-a\nb")),
                http.clone()
            )),
            ProfileError::InvalidKey { profile: "openai" }
        );
        let p = build_provider(&get("ollama"), None, None, http.clone()).unwrap();
        assert_eq!(p.profile_id(), "ollama");
        let p = build_provider(
            &get("custom"),
            Some("https://10.0.0.5:9000/v1/"),
            None,
            http.clone(),
        )
        .unwrap();
        assert_eq!(p.profile_id(), "custom");
    }

    /// RD-03: plain http only to this machine or to an address the person marked local.
    #[test]
    fn plain_http_only_to_local_addresses() {
        let http = reqwest::Client::new();
        let with = |url: &str, marked: &[&str]| ProviderConfig {
            base_url: Some(url.to_owned()),
            local_hosts: marked.iter().map(|m| (*m).to_owned()).collect(),
            ..ProviderConfig::new(&get("ollama"))
        };
        assert_eq!(
            with("http://gpu-box.lan:11434/v1", &[])
                .build(http.clone())
                .err(),
            Some(ProfileError::PlainHttp {
                profile: "ollama",
                host: "gpu-box.lan".into()
            })
        );
        for (url, marked) in [
            ("http://gpu-box.lan:11434/v1", &["gpu-box.lan"][..]),
            ("http://127.0.0.1:11434/v1", &[]),
            ("http://localhost:11434/v1", &[]),
            ("https://gpu-box.lan/v1", &[]),
        ] {
            assert!(with(url, marked).build(http.clone()).is_ok(), "{url}");
        }
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let p = build_provider(
            &get("anthropic"),
            None,
            Some(Secret::new("sk-ant-canary-123456789")),
            reqwest::Client::new(),
        )
        .unwrap();
        let dbg = format!("{p:?}");
        assert!(!dbg.contains("canary"), "{dbg}");
        assert!(dbg.contains("anthropic"), "{dbg}");
    }
}

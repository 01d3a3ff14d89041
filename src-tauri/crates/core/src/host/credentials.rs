//! Every secret and token the app holds, as the Credentials page lists it (issue 12, SE-05):
//! provider API keys, each server's own secrets, the client secret of a pre-registered OAuth
//! client, and each remote server's sign-in. Only "set / not set" and the facts around a value
//! (issuer, expiry, scopes, how the client was registered) ever leave here; no value does.
//!
//! One listing for the whole page rather than a call per row: the page shows everything at
//! once, and the servers page reads the same listing to say on a remote server's card whether
//! it is signed in and where. A keyring that cannot be read fails the listing (the page says
//! why) instead of showing every secret as "not set", which would invite typing them again.

use serde::Serialize;

/// The sign-in types the shells need (timeline, hand-off, outcomes), re-exported so a shell
/// reaches the core through `host` only, never `mcp::connection` (the seam test).
pub use crate::oauth::{
    now_secs, Handoff, Registration, SignInStatus, SignInStep, SignedIn, SignedOut, StepEvent,
    StepState,
};

use super::{Host, HostError};
use crate::config::TransportSpec;
use crate::ids::{ProviderName, ServerId};
use crate::oauth;
use crate::secrets::{SecretKey, SignInPart};
use crate::status::Reason;

/// Everything the Credentials page lists.
#[derive(Clone, Debug, Serialize)]
pub struct Credentials {
    /// Where secrets are kept, in words ("the OS keyring (service ...)").
    pub store: String,
    /// Model providers' API keys.
    pub providers: Vec<ProviderKey>,
    /// Per configured server, in name order.
    pub servers: Vec<ServerCredentials>,
}

/// A provider's API key: set or not, never its value.
#[derive(Clone, Debug, Serialize)]
pub struct ProviderKey {
    /// The provider.
    pub provider: ProviderName,
    /// Its vendor profile's display name.
    pub profile: &'static str,
    /// Whether the keyring holds its key.
    pub set: bool,
    /// Whether the provider is useless without one.
    pub required: bool,
}

/// A value of a server's configuration that lives in the keyring.
#[derive(Clone, Debug, Serialize)]
pub struct SecretStatus {
    /// The env var or header it fills.
    pub field: String,
    /// Where it comes from, in words ("secret NAME", a binding).
    pub source: String,
    /// Whether the keyring holds it.
    pub set: bool,
}

/// What a remote server is asking for now, read from its status (never from a sentence).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SignInWant {
    /// It answered 401: it needs a sign-in.
    SignIn,
    /// It answered 403: the sign-in lacks a permission (scope) it wants.
    MorePermissions,
}

/// One server's credentials.
#[derive(Clone, Debug, Serialize)]
pub struct ServerCredentials {
    /// The server.
    pub server: ServerId,
    /// Whether it is a remote (HTTP) server, the only kind that signs in.
    pub remote: bool,
    /// Its env vars or headers whose values are in the keyring.
    pub secrets: Vec<SecretStatus>,
    /// Its sign-in, for a remote server that has one.
    pub sign_in: Option<SignInStatus>,
    /// Whether a client secret for a pre-registered OAuth client is stored.
    pub client_secret_set: bool,
    /// What it asks for now, if it is down for want of a sign-in.
    pub wants: Option<SignInWant>,
    /// Whether "allow insecure (development)" is on (AU-10): its sign-in and tokens may use
    /// plain http to another machine. Always false for a local server.
    pub allow_insecure: bool,
}

impl Host {
    /// Every secret and token the app holds, listed without values (see the module docs).
    pub async fn credentials(&self) -> Result<Credentials, HostError> {
        let providers = self
            .inner
            .features
            .models
            .list_providers()
            .await?
            .into_iter()
            .map(|p| ProviderKey {
                provider: p.name,
                profile: p.profile.name,
                set: p.key_set,
                required: p.profile.key_required,
            })
            .collect();
        let mut servers = Vec::new();
        for view in self.list_servers().await? {
            servers.push(self.server_credentials(view.spec).await?);
        }
        servers.sort_by(|a, b| a.server.cmp(&b.server));
        Ok(Credentials {
            store: self.secret_store_description(),
            providers,
            servers,
        })
    }

    async fn server_credentials(
        &self,
        spec: crate::config::ServerSpec,
    ) -> Result<ServerCredentials, HostError> {
        let secrets = self
            .value_status(&spec)
            .await
            .into_iter()
            .filter_map(|v| {
                v.set.map(|set| SecretStatus {
                    field: v.field,
                    source: v.source,
                    set,
                })
            })
            .collect();
        let id = spec.id.clone();
        let (sign_in, client_secret_set) = match &spec.transport {
            TransportSpec::Http(h) => {
                let key = SecretKey::SignIn {
                    server: id.clone(),
                    part: SignInPart::ClientSecret,
                };
                (
                    oauth::status(&self.inner.secrets, &id, &h.url).await?,
                    self.inner.secrets.is_set(key).await?,
                )
            }
            _ => (None, false),
        };
        Ok(ServerCredentials {
            remote: matches!(spec.transport, TransportSpec::Http(_)),
            allow_insecure: matches!(&spec.transport, TransportSpec::Http(h) if h.allow_insecure),
            wants: self.wants(&id),
            server: id,
            secrets,
            sign_in,
            client_secret_set,
        })
    }

    /// What a server's status says it wants: a sign-in (401) or more permissions (403).
    fn wants(&self, id: &ServerId) -> Option<SignInWant> {
        let status = self.handle(id)?.status();
        match status.reason()?.root() {
            Reason::AuthRequired(c) if c.status == Some(403) => Some(SignInWant::MorePermissions),
            Reason::AuthRequired(_) => Some(SignInWant::SignIn),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{HttpSpec, NamedValue, ServerSpec, StdioSpec, Timeouts, ValueSource};
    use crate::host::HostBuilder;
    use crate::ids::SecretName;
    use crate::redact::Secret;
    use crate::secrets::{MemoryStore, Secrets};

    const CANARY: &str = "tok-credentialsCANARY-0123456789";

    /// A sign-in record as the core's store writes it, with canary tokens.
    fn record(url: &str) -> String {
        serde_json::json!({
            "version": 1,
            "resource": url,
            "issuer": "https://auth.example.com",
            "metadata": {
                "authorization_endpoint": "https://auth.example.com/authorize",
                "token_endpoint": "https://auth.example.com/token",
                "registration_endpoint": null,
                "issuer": "https://auth.example.com",
                "jwks_uri": null,
                "scopes_supported": null,
                "response_types_supported": null,
                "code_challenge_methods_supported": ["S256"]
            },
            "client": {"id": "client_abc", "secret": CANARY, "registration": "dynamic",
                       "redirect_uri": "http://127.0.0.1:1/callback"},
            "credentials": {
                "client_id": "client_abc",
                "token_response": {"access_token": CANARY, "token_type": "bearer",
                                   "expires_in": 3600, "refresh_token": CANARY, "scope": "mcp"},
                "granted_scopes": ["mcp"],
                "token_received_at": 1_700_000_000u64,
                "issuer": "https://auth.example.com"
            },
            "signed_in_at": 1_700_000_000u64
        })
        .to_string()
    }

    #[tokio::test]
    async fn lists_every_credential_without_a_value() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = Secrets::new(MemoryStore::default());
        let host = HostBuilder::new(dir.path())
            .secrets(secrets.clone())
            .build()
            .await
            .unwrap();
        let url = "https://mcp.example.com/mcp";
        let servers = [
            (
                "local",
                TransportSpec::Stdio(StdioSpec {
                    command: "/bin/true".into(),
                    args: vec![],
                    env: vec![
                        NamedValue {
                            name: "API_KEY".into(),
                            value: ValueSource::Secret(SecretName::new("API_KEY").unwrap()),
                        },
                        NamedValue {
                            name: "LEVEL".into(),
                            value: ValueSource::Plain("debug".into()),
                        },
                    ],
                    cwd: None,
                    sandbox: Default::default(),
                }),
            ),
            (
                "remote",
                TransportSpec::Http(HttpSpec {
                    url: url.into(),
                    headers: vec![],
                    auth: None,
                    allow_insecure: false,
                }),
            ),
        ];
        for (name, transport) in servers {
            host.add_server(ServerSpec {
                id: ServerId::new(name).unwrap(),
                transport,
                enabled: false,
                timeouts: Timeouts::default(),
            })
            .await
            .unwrap();
        }
        let remote = ServerId::new("remote").unwrap();
        secrets
            .set(
                SecretKey::SignIn {
                    server: remote.clone(),
                    part: SignInPart::Tokens,
                },
                Secret::new(record(url)),
            )
            .await
            .unwrap();
        host.set_client_secret(&remote, Secret::new(CANARY))
            .await
            .unwrap();

        let c = host.credentials().await.unwrap();
        let text = serde_json::to_string(&c).unwrap();
        assert!(!text.contains("CANARY"), "{text}");
        assert_eq!(c.servers.len(), 2);
        let local = &c.servers[0];
        assert_eq!(local.server.as_str(), "local");
        assert!(!local.remote && local.sign_in.is_none() && !local.client_secret_set);
        // Only the value from the keyring is listed, and it is not set.
        assert_eq!(local.secrets.len(), 1, "{:?}", local.secrets);
        assert!(!local.secrets[0].set);
        let r = &c.servers[1];
        assert!(r.remote && r.client_secret_set);
        let s = r.sign_in.as_ref().unwrap();
        assert_eq!(s.issuer.as_deref(), Some("https://auth.example.com"));
        assert_eq!(s.expires_at, Some(1_700_003_600));
        assert!(s.refreshable && s.has_token && s.current);
        assert_eq!(s.scopes, ["mcp"]);
        assert_eq!(r.wants, None);
        assert!(!r.allow_insecure && !local.allow_insecure);

        // The listing reflects "allow insecure (development)" (AU-10).
        host.set_allow_insecure(&remote, true).await.unwrap();
        let c = host.credentials().await.unwrap();
        assert!(c.servers[1].allow_insecure && !c.servers[0].allow_insecure);
    }
}

//! The 2025-03-26 case of the issuer check: a server that publishes no protected resource
//! metadata is its own authorization server. That revision says the authorization base URL is
//! the MCP server's URL with the path discarded, and the metadata lives at
//! `<origin>/.well-known/oauth-authorization-server`.
//!
//! rmcp applies RFC 8414 §3.3 there as everywhere: the document's `issuer` must be the bare
//! origin the well-known URL was built from. Servers written for 2025-03-26 often mount their
//! authorization endpoints under a path and name that path in `issuer` (`<origin>/oauth`), while
//! serving the document at the root; the conformance suite's 0.1.16 mock does exactly this.
//!
//! The issuer check exists against mix-up: a document fetched from one authorization server
//! that names another, so that codes or tokens meant for one reach the other (AU-01). In the
//! 2025-03-26 case there is no other party: the MCP server's origin is the authorization server
//! by definition. So an issuer on that same origin is accepted, and nothing wider:
//! - rmcp refused the document fetched from the root well-known URL (its expected issuer is the
//!   origin itself), for a claimed issuer on the same scheme, host and port;
//! - the challenge named no `resource_metadata`, and neither protected resource metadata URL
//!   (path-aware, then root) answers: with that metadata the server named its authorization
//!   server, and the strict check stands;
//! - the document is fetched again through the guarded client and must claim that same issuer.
//!
//! Everything after (PKCE S256 required, `iss` on the callback compared with this issuer,
//! resource indicators) is unchanged.

use rmcp::transport::auth::{AuthorizationMetadata, WWWAuthenticateParams};
use url::Url;

use super::errors::SignInError;
use super::net::{GuardedClient, Network};

const AS_METADATA: &str = "/.well-known/oauth-authorization-server";
const PRM: &str = "/.well-known/oauth-protected-resource";

/// The metadata to use when rmcp refused a same-origin issuer of a 2025-03-26 server (see the
/// module docs); `None` when the refusal stands.
pub(super) async fn same_origin_metadata(
    server: &str,
    challenge: Option<&str>,
    net: Network,
    refused: &SignInError,
) -> Option<AuthorizationMetadata> {
    let SignInError::WrongIssuer { expected, received } = refused else {
        return None;
    };
    let server = Url::parse(server).ok()?;
    let origin = server.origin().ascii_serialization();
    if expected.trim_end_matches('/') != origin || !same_origin(received, &server) {
        return None;
    }
    if challenge.is_some_and(|c| {
        WWWAuthenticateParams::parse(c, &server)
            .resource_metadata_url
            .is_some()
    }) {
        return None;
    }
    let client = GuardedClient::new(&server, net).ok()?;
    let path = server.path().trim_end_matches('/');
    let mut prm = vec![format!("{origin}{PRM}")];
    if !path.is_empty() {
        prm.insert(0, format!("{origin}{PRM}{path}"));
    }
    for url in prm {
        // A protected resource metadata document, or no answer at all: not the 2025-03-26 case.
        match client.get(&url).await {
            Ok(r) if r.status() == http::StatusCode::OK => return None,
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    let answer = client.get(&format!("{origin}{AS_METADATA}")).await.ok()?;
    if answer.status() != http::StatusCode::OK {
        return None;
    }
    let metadata: AuthorizationMetadata = serde_json::from_slice(answer.body()).ok()?;
    if metadata.issuer.as_deref() != Some(received.as_str()) {
        return None;
    }
    tracing::info!(
        issuer = %received,
        "accepting an issuer on the server's own origin: a 2025-03-26 server without protected resource metadata"
    );
    Some(metadata)
}

/// Whether `issuer` is an absolute URL on the MCP server's own scheme, host and port.
fn same_origin(issuer: &str, server: &Url) -> bool {
    Url::parse(issuer).is_ok_and(|i| {
        i.origin() == server.origin()
            && i.query().is_none()
            && i.fragment().is_none()
            && i.username().is_empty()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_issuer_on_the_servers_own_origin_counts() {
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        for (issuer, ok) in [
            ("https://mcp.example.com/oauth", true),
            ("https://mcp.example.com", true),
            ("https://mcp.example.com:443/oauth", true),
            ("http://mcp.example.com/oauth", false),
            ("https://mcp.example.com:8443/oauth", false),
            ("https://auth.example.com/oauth", false),
            ("https://mcp.example.com.evil.test/oauth", false),
            ("https://user@mcp.example.com/oauth", false),
            ("https://mcp.example.com/oauth?x=1", false),
            ("/oauth", false),
        ] {
            assert_eq!(same_origin(issuer, &server), ok, "{issuer}");
        }
    }

    #[tokio::test]
    async fn other_refusals_and_other_origins_stand() {
        let url = "http://127.0.0.1:9/mcp";
        let other = SignInError::NeedsClientId;
        assert!(same_origin_metadata(url, None, Network::system(), &other)
            .await
            .is_none());
        // Refused for a path-inserted URL (the expected issuer has a path): not the root case.
        let pathed = SignInError::WrongIssuer {
            expected: "http://127.0.0.1:9/tenant".into(),
            received: "http://127.0.0.1:9/oauth".into(),
        };
        assert!(same_origin_metadata(url, None, Network::system(), &pathed)
            .await
            .is_none());
        let elsewhere = SignInError::WrongIssuer {
            expected: "http://127.0.0.1:9".into(),
            received: "http://127.0.0.1:10/oauth".into(),
        };
        assert!(
            same_origin_metadata(url, None, Network::system(), &elsewhere)
                .await
                .is_none()
        );
        // A challenge that names protected resource metadata keeps the strict check.
        let named = SignInError::WrongIssuer {
            expected: "http://127.0.0.1:9".into(),
            received: "http://127.0.0.1:9/oauth".into(),
        };
        let challenge =
            r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource""#;
        assert!(
            same_origin_metadata(url, Some(challenge), Network::system(), &named)
                .await
                .is_none()
        );
    }
}

//! The OAuth fixture checked by hand with plain HTTP, before any sign-in test trusts it: the
//! metadata documents, a full authorization code + PKCE round trip (the S256 challenge computed
//! here, not by the fixture), refresh rotation, revocation, client authentication, the hostile
//! modes, and the `fake-browser` stand-in.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};
use sha2::Digest;
use switchboard_tests::fake_oauth::{FakeOAuth, Mode, OAuthOpts, PreRegistered, PrmAt};
use switchboard_tests::workspace_bin;

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn start() -> FakeOAuth {
    FakeOAuth::start(OAuthOpts::default()).await
}

/// (verifier, S256 challenge), computed independently of the fixture.
fn pkce(seed: &str) -> (String, String) {
    let verifier = format!("{seed}-{}", "v".repeat(50));
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

async fn get_json(url: &str) -> (u16, Value) {
    let r = http().get(url).send().await.unwrap();
    let status = r.status().as_u16();
    let body = r.bytes().await.unwrap();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// POSTs a form; `basic` adds `Authorization: Basic`.
async fn post_form(url: &str, pairs: &[(&str, &str)], basic: Option<(&str, &str)>) -> (u16, Value) {
    let mut req = http()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(pairs));
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let body = r.bytes().await.unwrap();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

async fn mcp(fake: &FakeOAuth, token: Option<&str>, body: Value) -> reqwest::Response {
    let mut req = http()
        .post(&fake.mcp_url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.unwrap()
}

async fn call_tool(fake: &FakeOAuth, token: &str, name: &str) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": {}}});
    mcp(fake, Some(token), body).await
}

fn redirect_uri() -> String {
    "http://127.0.0.1:49152/callback".into()
}

/// Registers a client the way a native app does; returns the registration answer.
async fn register(fake: &FakeOAuth, method: &str) -> Value {
    let r = http()
        .post(format!("{}/register", fake.issuer))
        .json(&json!({
            "client_name": "selftest",
            "redirect_uris": [redirect_uri()],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": method,
            "application_type": "native",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    r.json().await.unwrap()
}

/// Runs `/authorize`; returns the redirect's query, decoded.
async fn authorize(
    fake: &FakeOAuth,
    client_id: &str,
    challenge: &str,
    scope: &str,
) -> Vec<(String, String)> {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", &redirect_uri()),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("resource", &fake.mcp_url),
        ("scope", scope),
        ("state", "st-123"),
    ]);
    let r = http()
        .get(format!("{}/authorize?{query}", fake.issuer))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 302, "authorize must redirect");
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&redirect_uri()), "{location}");
    let u = url::Url::parse(&location).unwrap();
    u.query_pairs().into_owned().collect()
}

fn get<'a>(pairs: &'a [(String, String)], k: &str) -> Option<&'a str> {
    pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

struct Signed {
    client_id: String,
    access: String,
    refresh: String,
}

/// A full sign-in as a public client.
async fn sign_in(fake: &FakeOAuth, scope: &str) -> Signed {
    let reg = register(fake, "none").await;
    let client_id = reg["client_id"].as_str().unwrap().to_owned();
    let (verifier, challenge) = pkce("sign-in");
    let back = authorize(fake, &client_id, &challenge, scope).await;
    let code = get(&back, "code").unwrap().to_owned();
    let (status, tok) = post_form(
        &format!("{}/token", fake.issuer),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect_uri()),
            ("code_verifier", &verifier),
            ("client_id", &client_id),
            ("resource", &fake.mcp_url),
        ],
        None,
    )
    .await;
    assert_eq!(status, 200, "{tok}");
    Signed {
        client_id,
        access: tok["access_token"].as_str().unwrap().to_owned(),
        refresh: tok["refresh_token"].as_str().unwrap().to_owned(),
    }
}

async fn refresh(fake: &FakeOAuth, s: &Signed, rt: &str) -> (u16, Value) {
    post_form(
        &format!("{}/token", fake.issuer),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", rt),
            ("client_id", &s.client_id),
            ("resource", &fake.mcp_url),
        ],
        None,
    )
    .await
}

async fn whoami_status(fake: &FakeOAuth, token: &str) -> u16 {
    call_tool(fake, token, "whoami").await.status().as_u16()
}

#[tokio::test]
async fn metadata_documents_answer_as_specified() {
    let fake = start().await;
    let (status, prm) = get_json(&fake.prm_url()).await;
    assert_eq!(status, 200);
    assert_eq!(prm["resource"], json!(fake.mcp_url));
    assert_eq!(prm["authorization_servers"], json!([fake.issuer]));
    assert_eq!(prm["scopes_supported"], json!(["mcp:read", "mcp:admin"]));
    let root = fake
        .mcp_url
        .replace("/mcp", "/.well-known/oauth-protected-resource");
    assert_eq!(
        get_json(&root).await.0,
        404,
        "root variant is off by default"
    );

    for doc in ["oauth-authorization-server", "openid-configuration"] {
        let (status, md) = get_json(&format!("{}/.well-known/{doc}", fake.issuer)).await;
        assert_eq!(status, 200, "{doc}");
        assert_eq!(md["issuer"], json!(fake.issuer));
        for (k, path) in [
            ("authorization_endpoint", "/authorize"),
            ("token_endpoint", "/token"),
            ("registration_endpoint", "/register"),
            ("revocation_endpoint", "/revoke"),
        ] {
            assert_eq!(md[k], json!(format!("{}{path}", fake.issuer)), "{doc} {k}");
        }
        assert_eq!(md["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(md["response_types_supported"], json!(["code"]));
        assert_eq!(
            md["token_endpoint_auth_methods_supported"],
            json!(["none", "client_secret_basic", "client_secret_post"])
        );
        assert_eq!(
            md["authorization_response_iss_parameter_supported"],
            json!(true)
        );
        assert_eq!(md["client_id_metadata_document_supported"], json!(false));
        assert!(md["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("offline_access")));
    }
    assert_eq!(fake.state.counts().metadata_fetches, 3);

    // Root only: the path-aware variant disappears and the challenge names the root.
    let rooted = FakeOAuth::start(OAuthOpts {
        prm_at: PrmAt::Root,
        ..Default::default()
    })
    .await;
    assert_eq!(get_json(&rooted.prm_url()).await.0, 404);
    let root = rooted
        .mcp_url
        .replace("/mcp", "/.well-known/oauth-protected-resource");
    assert_eq!(get_json(&root).await.0, 200);
    let r = mcp(
        &rooted,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    let challenge = r.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains(&format!(r#"resource_metadata="{root}""#)),
        "{challenge}"
    );
}

#[tokio::test]
async fn the_resource_refuses_requests_without_a_valid_token() {
    let fake = start().await;
    let r = mcp(
        &fake,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    assert_eq!(r.status().as_u16(), 401);
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!(r#"resource_metadata="{}""#, fake.prm_url())),
        "{challenge}"
    );
    assert!(challenge.contains(r#"scope="mcp:read""#), "{challenge}");
    assert!(
        !challenge.contains("error="),
        "no token, no error: {challenge}"
    );

    let r = mcp(
        &fake,
        Some("at_forged"),
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .contains(r#"error="invalid_token""#));

    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = http()
            .request(method.clone(), &fake.mcp_url)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401, "{method}");
    }
    // A token in the query string is recorded (and still refused).
    let r = http()
        .post(format!("{}?access_token=at_leak", fake.mcp_url))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(fake.state.tokens_in_query().len(), 1);
    assert_eq!(
        fake.state.authorization_headers(),
        vec!["Bearer at_forged".to_owned()]
    );
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn a_full_authorization_code_round_trip_gives_a_token_the_resource_accepts() {
    let fake = start().await;
    let reg = register(&fake, "none").await;
    let client_id = reg["client_id"].as_str().unwrap().to_owned();
    assert!(reg.get("client_secret").is_none(), "public client: {reg}");
    assert_eq!(reg["token_endpoint_auth_method"], json!("none"));
    assert_eq!(
        fake.state.registrations()[0]["application_type"],
        json!("native")
    );

    let (verifier, challenge) = pkce("round-trip");
    let back = authorize(&fake, &client_id, &challenge, "mcp:read offline_access").await;
    assert_eq!(get(&back, "state"), Some("st-123"));
    assert_eq!(get(&back, "iss"), Some(fake.issuer.as_str()));
    let code = get(&back, "code").unwrap().to_owned();
    let seen = &fake.state.authorize_requests()[0];
    assert_eq!(seen.query_param("resource"), Some(fake.mcp_url.as_str()));
    assert_eq!(seen.query_param("scope"), Some("mcp:read offline_access"));

    let token_url = format!("{}/token", fake.issuer);
    let exchange = |code: String, verifier: String| {
        let (token_url, client_id, resource) =
            (token_url.clone(), client_id.clone(), fake.mcp_url.clone());
        async move {
            post_form(
                &token_url,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", &redirect_uri()),
                    ("code_verifier", &verifier),
                    ("client_id", &client_id),
                    ("resource", &resource),
                ],
                None,
            )
            .await
        }
    };
    // A wrong verifier burns the code, as a real server does.
    let (status, err) = exchange(code.clone(), format!("{verifier}x")).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (status, _) = exchange(code, verifier.clone()).await;
    assert_eq!(status, 400, "a code is single-use");

    let back = authorize(&fake, &client_id, &challenge, "mcp:read").await;
    let code = get(&back, "code").unwrap().to_owned();
    let (status, tok) = exchange(code.clone(), verifier.clone()).await;
    assert_eq!(status, 200, "{tok}");
    assert_eq!(tok["token_type"], json!("Bearer"));
    assert_eq!(tok["expires_in"], json!(3600));
    let access = tok["access_token"].as_str().unwrap().to_owned();
    assert!(tok["refresh_token"].is_string());
    assert_eq!(fake.state.access_tokens(), vec![access.clone()]);

    let r = mcp(&fake, Some(&access), json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})).await;
    assert_eq!(r.status().as_u16(), 200);
    let init: Value = r.json().await.unwrap();
    assert_eq!(init["result"]["protocolVersion"], json!("2025-06-18"));
    assert_eq!(init["result"]["capabilities"], json!({"tools": {}}));
    let r = mcp(
        &fake,
        Some(&access),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status().as_u16(), 202);
    let list: Value = mcp(
        &fake,
        Some(&access),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await
    .json()
    .await
    .unwrap();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["whoami", "admin", "echo_token"]);
    let who: Value = call_tool(&fake, &access, "whoami")
        .await
        .json()
        .await
        .unwrap();
    let text = who["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&client_id) && text.contains("mcp:read"),
        "{text}"
    );
    assert!(!text.contains(&access), "whoami must not echo the token");
    let other: Value = mcp(
        &fake,
        Some(&access),
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(other["error"]["code"], json!(-32601));
    let r = http()
        .get(&fake.mcp_url)
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    let r = http()
        .delete(&fake.mcp_url)
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);

    let c = fake.state.counts();
    assert_eq!(
        (
            c.registrations,
            c.authorizations,
            c.token_authorization_code
        ),
        (1, 2, 3)
    );
    assert!(fake.state.tokens_in_query().is_empty());
    assert!(fake
        .state
        .authorization_headers()
        .iter()
        .all(|h| h == &format!("Bearer {access}")));
}

#[tokio::test]
async fn pkce_redirect_and_resource_are_enforced() {
    let fake = start().await;
    let reg = register(&fake, "none").await;
    let client_id = reg["client_id"].as_str().unwrap();
    let (_, challenge) = pkce("enforced");
    let try_authorize = |drop_key: &'static str, redirect: String| {
        let mut pairs = vec![
            ("response_type", "code".to_owned()),
            ("client_id", client_id.to_owned()),
            ("redirect_uri", redirect),
            ("code_challenge", challenge.clone()),
            ("code_challenge_method", "S256".to_owned()),
            ("resource", fake.mcp_url.clone()),
            ("state", "s".to_owned()),
        ];
        pairs.retain(|(k, _)| *k != drop_key);
        let q = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        let url = format!("{}/authorize?{q}", fake.issuer);
        async move { http().get(url).send().await.unwrap() }
    };
    for (missing, error) in [
        ("resource", "invalid_target"),
        ("code_challenge", "invalid_request"),
        ("code_challenge_method", "invalid_request"),
    ] {
        let r = try_authorize(missing, redirect_uri()).await;
        assert_eq!(r.status().as_u16(), 302, "{missing}");
        let loc = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        let q: Vec<(String, String)> = loc.query_pairs().into_owned().collect();
        assert_eq!(get(&q, "error"), Some(error), "without {missing}");
        assert_eq!(get(&q, "state"), Some("s"));
    }
    // A redirect URI that is not loopback, or not the registered path, gets no redirect.
    for bad in [
        "https://evil.example/callback",
        "http://127.0.0.1:5000/elsewhere",
    ] {
        let r = try_authorize("", bad.into()).await;
        assert_eq!(r.status().as_u16(), 400, "{bad}");
    }
    // The registered path on another port is fine (RFC 8252 §7.3).
    let r = try_authorize("", "http://127.0.0.1:5000/callback".into()).await;
    assert_eq!(r.status().as_u16(), 302);

    // Token request without resource, or with another redirect_uri.
    let (verifier, challenge) = pkce("enforced-2");
    for (drop_key, error) in [
        ("resource", "invalid_target"),
        ("redirect_uri", "invalid_grant"),
    ] {
        let back = authorize(&fake, client_id, &challenge, "mcp:read").await;
        let code = get(&back, "code").unwrap().to_owned();
        let mut pairs = vec![
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:49152/callback"),
            ("code_verifier", &verifier),
            ("client_id", client_id),
            ("resource", &fake.mcp_url),
        ];
        pairs.retain(|(k, _)| *k != drop_key);
        let (status, err) = post_form(&format!("{}/token", fake.issuer), &pairs, None).await;
        assert_eq!(
            (status, err["error"].as_str()),
            (400, Some(error)),
            "without {drop_key}"
        );
    }
}

#[tokio::test]
async fn refresh_rotates_and_expiry_and_revocation_bite() {
    let fake = start().await;
    let s = sign_in(&fake, "mcp:read").await;
    assert_eq!(whoami_status(&fake, &s.access).await, 200);

    fake.state.expire_access_tokens();
    assert_eq!(whoami_status(&fake, &s.access).await, 401, "expired");

    let (status, tok) = refresh(&fake, &s, &s.refresh).await;
    assert_eq!(status, 200, "{tok}");
    let access2 = tok["access_token"].as_str().unwrap().to_owned();
    let refresh2 = tok["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(access2, s.access);
    assert_ne!(refresh2, s.refresh, "rotated");
    assert_eq!(tok["scope"], json!("mcp:read"));
    assert_eq!(whoami_status(&fake, &access2).await, 200);
    let (status, err) = refresh(&fake, &s, &s.refresh).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant")),
        "old refresh token is dead"
    );
    let c = fake.state.counts();
    assert_eq!((c.token_refresh, c.refreshes), (2, 1));

    // Revocation (RFC 7009) of the access token, then of the refresh token.
    let (status, _) = post_form(
        &format!("{}/revoke", fake.issuer),
        &[("token", &access2), ("client_id", &s.client_id)],
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(fake.state.is_revoked(&access2));
    assert_eq!(whoami_status(&fake, &access2).await, 401);
    post_form(
        &format!("{}/revoke", fake.issuer),
        &[("token", &refresh2), ("token_type_hint", "refresh_token")],
        None,
    )
    .await;
    assert_eq!(refresh(&fake, &s, &refresh2).await.0, 400);
    assert_eq!(fake.state.counts().revocations, 2);

    // revoke_all from the test side.
    let s2 = sign_in(&fake, "mcp:read").await;
    assert_eq!(whoami_status(&fake, &s2.access).await, 200);
    fake.state.revoke_all();
    assert_eq!(whoami_status(&fake, &s2.access).await, 401);
    assert_eq!(refresh(&fake, &s2, &s2.refresh).await.0, 400);
}

#[tokio::test]
async fn step_up_needs_the_admin_scope() {
    let fake = start().await;
    let s = sign_in(&fake, "mcp:read").await;
    let r = call_tool(&fake, &s.access, "admin").await;
    assert_eq!(r.status().as_u16(), 403);
    let challenge = r.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    assert!(
        challenge.contains(r#"scope="mcp:read mcp:admin""#),
        "{challenge}"
    );
    assert!(challenge.contains(&fake.prm_url()), "{challenge}");
    let admin = sign_in(&fake, "mcp:read mcp:admin").await;
    let r = call_tool(&fake, &admin.access, "admin").await;
    assert_eq!(r.status().as_u16(), 200);
}

#[tokio::test]
async fn client_authentication_follows_the_registration() {
    let fake = FakeOAuth::start(OAuthOpts {
        confidential: true,
        ..Default::default()
    })
    .await;
    // Confidential: even a client asking for `none` gets a secret.
    let reg = register(&fake, "none").await;
    assert_eq!(
        reg["token_endpoint_auth_method"],
        json!("client_secret_basic")
    );
    let id = reg["client_id"].as_str().unwrap().to_owned();
    let secret = reg["client_secret"].as_str().unwrap().to_owned();
    assert_eq!(fake.state.client_secrets(), vec![secret.clone()]);

    let (verifier, challenge) = pkce("confidential");
    let token_url = format!("{}/token", fake.issuer);
    let code_pairs = |code: &str| {
        vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", redirect_uri()),
            ("code_verifier", verifier.clone()),
            ("resource", fake.mcp_url.clone()),
        ]
    };
    let back = authorize(&fake, &id, &challenge, "mcp:read").await;
    let mut pairs = code_pairs(get(&back, "code").unwrap());
    pairs.push(("client_id", id.clone()));
    pairs.push(("client_secret", secret.clone()));
    let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, err) = post_form(&token_url, &borrowed, None).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (401, Some("invalid_client")),
        "post for a basic client"
    );

    let back = authorize(&fake, &id, &challenge, "mcp:read").await;
    let pairs = code_pairs(get(&back, "code").unwrap());
    let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(
        post_form(&token_url, &borrowed, Some((&id, "wrong")))
            .await
            .0,
        401
    );
    let back = authorize(&fake, &id, &challenge, "mcp:read").await;
    let pairs = code_pairs(get(&back, "code").unwrap());
    let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, tok) = post_form(&token_url, &borrowed, Some((&id, &secret))).await;
    assert_eq!(status, 200, "{tok}");

    // Client credentials with a pre-registered client, secret by post.
    let m2m = FakeOAuth::start(OAuthOpts {
        preregistered: Some(PreRegistered {
            client_id: "svc-1".into(),
            client_secret: Some("s3cret".into()),
        }),
        ..Default::default()
    })
    .await;
    let url = format!("{}/token", m2m.issuer);
    let (status, _) = post_form(
        &url,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", "svc-1"),
            ("client_secret", "nope"),
        ],
        None,
    )
    .await;
    assert_eq!(status, 401);
    let (status, tok) = post_form(
        &url,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", "svc-1"),
            ("client_secret", "s3cret"),
            ("resource", &m2m.mcp_url),
        ],
        None,
    )
    .await;
    assert_eq!(status, 200, "{tok}");
    assert!(tok.get("refresh_token").is_none());
    let who: Value = call_tool(&m2m, tok["access_token"].as_str().unwrap(), "whoami")
        .await
        .json()
        .await
        .unwrap();
    assert!(who["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("subject=svc-1"));
    assert_eq!(m2m.state.counts().token_client_credentials, 2);
}

#[tokio::test]
async fn hostile_metadata_modes() {
    let fake = start().await;
    let as_md = format!("{}/.well-known/oauth-authorization-server", fake.issuer);

    fake.state.set_mode(Mode::IssuerMismatch);
    let (_, md) = get_json(&as_md).await;
    assert_ne!(md["issuer"], json!(fake.issuer));

    fake.state.set_mode(Mode::ResourceMismatch);
    let (_, prm) = get_json(&fake.prm_url()).await;
    assert_ne!(prm["resource"], json!(fake.mcp_url));
    assert!(prm["resource"].is_string());

    fake.state.set_mode(Mode::NoS256);
    assert!(get_json(&as_md)
        .await
        .1
        .get("code_challenge_methods_supported")
        .is_none());
    fake.state.set_mode(Mode::PlainOnly);
    assert_eq!(
        get_json(&as_md).await.1["code_challenge_methods_supported"],
        json!(["plain"])
    );

    fake.state.set_mode(Mode::HugeMetadata);
    let body = http()
        .get(&as_md)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(body.len() >= 10 * 1024 * 1024, "{}", body.len());
    let md: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(md["issuer"], json!(fake.issuer), "huge but valid");

    fake.state.set_mode(Mode::RedirectToMetadataIp);
    let r = http().get(fake.prm_url()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 302);
    assert_eq!(
        r.headers()["location"],
        "http://169.254.169.254/latest/meta-data/"
    );

    fake.state.set_mode(Mode::HttpDowngrade);
    let (_, md) = get_json(&as_md).await;
    assert_eq!(md["token_endpoint"], json!("http://auth.example.com/token"));
    assert_eq!(
        md["authorization_endpoint"],
        json!("http://auth.example.com/authorize")
    );

    fake.state.set_mode(Mode::SlowMetadata);
    let quick = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    assert!(quick.get(&as_md).send().await.unwrap_err().is_timeout());
    assert!(quick
        .get(fake.prm_url())
        .send()
        .await
        .unwrap_err()
        .is_timeout());

    fake.state.set_mode(Mode::Normal);
    assert_eq!(get_json(&as_md).await.1["issuer"], json!(fake.issuer));
}

#[tokio::test]
async fn hostile_authorization_and_token_modes() {
    let fake = start().await;
    let reg = register(&fake, "none").await;
    let client_id = reg["client_id"].as_str().unwrap().to_owned();
    let (_, challenge) = pkce("hostile");

    fake.state.set_mode(Mode::WrongIss);
    let back = authorize(&fake, &client_id, &challenge, "mcp:read").await;
    assert!(get(&back, "code").is_some());
    assert_ne!(get(&back, "iss"), Some(fake.issuer.as_str()));

    fake.state.set_mode(Mode::ConsentDenied);
    let back = authorize(&fake, &client_id, &challenge, "mcp:read").await;
    assert_eq!(get(&back, "error"), Some("access_denied"));
    assert_eq!(get(&back, "state"), Some("st-123"));
    assert!(get(&back, "code").is_none());

    fake.state.set_mode(Mode::Normal);
    let s = sign_in(&fake, "mcp:read").await;
    fake.state.set_mode(Mode::RefreshOmitsRefreshToken);
    for _ in 0..2 {
        let (status, tok) = refresh(&fake, &s, &s.refresh).await;
        assert_eq!(status, 200, "the old refresh token stays valid: {tok}");
        assert!(tok.get("refresh_token").is_none());
        assert_eq!(
            whoami_status(&fake, tok["access_token"].as_str().unwrap()).await,
            200
        );
    }

    fake.state
        .set_mode(Mode::TokenError(503, "temporarily_unavailable".into()));
    let (status, err) = refresh(&fake, &s, &s.refresh).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (503, Some("temporarily_unavailable"))
    );
    fake.state
        .set_mode(Mode::TokenError(400, "invalid_grant".into()));
    assert_eq!(refresh(&fake, &s, &s.refresh).await.0, 400);
    fake.state.set_mode(Mode::Normal);
    assert_eq!(
        refresh(&fake, &s, &s.refresh).await.0,
        200,
        "the error was the mode's"
    );
}

/// A one-shot loopback page standing in for the app's redirect listener; yields the request
/// target it received.
async fn callback_listener() -> (String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/callback",
        l.local_addr().unwrap().port()
    );
    let task = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut buf = vec![0u8; 8192];
        let n = s.read(&mut buf).await.unwrap();
        let head = String::from_utf8_lossy(&buf[..n]).into_owned();
        s.write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 9\r\n\r\nsigned in")
            .await
            .unwrap();
        head.split(' ').nth(1).unwrap_or_default().to_owned()
    });
    (url, task)
}

async fn run_browser(
    url: &str,
    log: &std::path::Path,
    mode: Option<&str>,
) -> std::process::ExitStatus {
    let mut cmd = tokio::process::Command::new(workspace_bin("fake-browser"));
    cmd.arg(url)
        .env("FAKE_BROWSER_LOG", log)
        .stdout(std::process::Stdio::piped());
    if let Some(m) = mode {
        cmd.env("FAKE_BROWSER_MODE", m);
    }
    let out = cmd.output().await.unwrap();
    assert!(
        out.stdout.is_empty(),
        "fake-browser prints nothing on stdout"
    );
    out.status
}

#[tokio::test]
async fn the_browser_stand_in_follows_the_redirect_to_the_loopback_page() {
    let fake = start().await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("browser.log");
    let (callback, page) = callback_listener().await;
    let reg = http()
        .post(format!("{}/register", fake.issuer))
        .json(&json!({"redirect_uris": [callback], "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let client_id = reg["client_id"].as_str().unwrap();
    let (_, challenge) = pkce("browser");
    let q = form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", &callback),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("resource", &fake.mcp_url),
        ("state", "b-1"),
    ]);
    let authorize_url = format!("{}/authorize?{q}", fake.issuer);

    // The person who closed the tab: nothing fetched, exit 0.
    assert!(run_browser(&authorize_url, &log, Some("refuse"))
        .await
        .success());
    assert_eq!(fake.state.counts().authorizations, 0);

    assert!(run_browser(&authorize_url, &log, None).await.success());
    let target = page.await.unwrap();
    assert!(target.starts_with("/callback?code=code_"), "{target}");
    assert!(target.contains("state=b-1"), "{target}");

    // A final answer that is not 2xx (unknown client: 400, no redirect) exits 1.
    let bad = authorize_url.replace(client_id, "client_unknown");
    assert!(!run_browser(&bad, &log, None).await.success());

    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        lines,
        [
            format!("{authorize_url} refused"),
            format!("{authorize_url} 200"),
            format!("{bad} 400"),
        ]
    );
}

//! The IPC audit (see `audit.rs`) for sign-ins and the Credentials page (issue 12, SE-05): with
//! a sign-in in the keyring whose access token, refresh token and registered client secret are
//! canaries, and a typed client secret that is another, no command answers with any of them;
//! signing out deletes the entry; hostile sign-in arguments get typed errors.

use serde_json::{json, Value};
use switchboard_core::ids::ServerId;
use switchboard_core::redact::Secret;
use switchboard_core::secrets::{SecretKey, SignInPart};

use super::audit::{app, call, CANARY};

const TOKEN_CANARY: &str = "at_tokenCANARY-0123456789abcdef";
const REFRESH_CANARY: &str = "rt_refreshCANARY-0123456789abcdef";
const SECRET_CANARY: &str = "secret_clientCANARY-0123456789abcdef";
const TYPED_CANARY: &str = "typed_clientCANARY-0123456789abcdef";

fn tokens_key() -> SecretKey {
    SecretKey::SignIn {
        server: ServerId::new("remote").unwrap(),
        part: SignInPart::Tokens,
    }
}

/// A sign-in record laid out as the core's store writes it (`signin:<server>:tokens`), for the
/// audit app's remote server. No revocation endpoint: signing out touches no network.
fn record() -> String {
    json!({
        "version": 1,
        "resource": "http://127.0.0.1:9/mcp",
        "issuer": "https://auth.example.com",
        "metadata": {
            "authorization_endpoint": "https://auth.example.com/authorize",
            "token_endpoint": "https://auth.example.com/token",
            "registration_endpoint": "https://auth.example.com/register",
            "issuer": "https://auth.example.com",
            "jwks_uri": null,
            "scopes_supported": ["mcp"],
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"]
        },
        "client": {"id": "client_audit", "secret": SECRET_CANARY, "registration": "dynamic",
                   "redirect_uri": "http://127.0.0.1:1/callback"},
        "credentials": {
            "client_id": "client_audit",
            "token_response": {"access_token": TOKEN_CANARY, "token_type": "bearer",
                               "expires_in": 3600, "refresh_token": REFRESH_CANARY, "scope": "mcp"},
            "granted_scopes": ["mcp"],
            "token_received_at": 1_700_000_000u64,
            "issuer": "https://auth.example.com"
        },
        "signed_in_at": 1_700_000_000u64
    })
    .to_string()
}

fn assert_clean(cmd: &str, args: &Value, out: &str) {
    for canary in [
        CANARY,
        TOKEN_CANARY,
        REFRESH_CANARY,
        SECRET_CANARY,
        TYPED_CANARY,
    ] {
        assert!(
            !out.contains(canary),
            "{cmd} {args} returned {canary}: {out}"
        );
    }
    assert!(
        !out.contains("CANARY"),
        "{cmd} {args} returned a canary: {out}"
    );
}

#[test]
fn sign_ins_and_credentials_never_carry_a_token_or_secret() {
    let app = app();
    tauri::async_runtime::block_on(app.secrets.set(tokens_key(), Secret::new(record()))).unwrap();
    let ch = "__CHANNEL__:1";
    let calls: Vec<(&str, Value)> = vec![
        (
            "set_client_secret",
            json!({"server": "remote", "value": TYPED_CANARY}),
        ),
        ("credentials", json!({})),
        ("list_servers", json!({})),
        ("server_form", json!({"name": "remote"})),
        ("trust_view", json!({"name": "remote", "bindings": []})),
        ("export_config", json!({"format": "claude"})),
        ("export_config", json!({"format": "vscode"})),
        ("export_config", json!({"format": "cursor"})),
        // A local server does not sign in: refused before anything is asked.
        (
            "sign_in",
            json!({"server": "local", "clientId": null, "onEvent": ch}),
        ),
        (
            "sign_in_continue",
            json!({"ticket": "run-0123456789abcdef0123456789abcdef", "yes": true}),
        ),
    ];
    let mut answered = 0;
    for (cmd, args) in calls {
        let out = call(&app, cmd, args.clone()).unwrap_or_else(|e| e);
        assert_clean(cmd, &args, &out);
        answered += 1;
    }
    assert_eq!(answered, 10);

    // The listing says what is held, without it.
    let listed: Value =
        serde_json::from_str(&call(&app, "credentials", json!({})).unwrap()).unwrap();
    let remote = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == "remote")
        .unwrap()
        .clone();
    assert_eq!(remote["remote"], json!(true), "{remote}");
    assert_eq!(remote["client_secret_set"], json!(true), "{remote}");
    let sign_in = &remote["sign_in"];
    assert_eq!(sign_in["issuer"], json!("https://auth.example.com"));
    assert_eq!(sign_in["has_token"], json!(true));
    assert_eq!(sign_in["refreshable"], json!(true));
    assert_eq!(sign_in["registration"], json!("dynamic"));
    assert_eq!(sign_in["client_id"], json!("client_audit"));
    assert_eq!(sign_in["scopes"], json!(["mcp"]));
    assert_eq!(sign_in["expires_at_ms"], json!(1_700_003_600_000.0));
    let local = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == "local")
        .unwrap();
    assert_eq!(local["secrets"][0]["set"], json!(true), "{local}");

    // Signing out deletes the entry (no revocation endpoint: nothing revoked at a server).
    let out = call(&app, "sign_out", json!({"server": "remote"})).unwrap();
    assert_clean("sign_out", &json!({}), &out);
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["revocation"], json!("not_offered"), "{out}");
    let gone = tauri::async_runtime::block_on(app.secrets.is_set(tokens_key())).unwrap();
    assert!(!gone, "the sign-in is still in the keyring");
    let after = call(&app, "credentials", json!({})).unwrap();
    assert_clean("credentials", &json!({}), &after);
    let after: Value = serde_json::from_str(&after).unwrap();
    assert!(after["servers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["sign_in"].is_null()));
}

#[test]
fn hostile_sign_in_arguments_get_typed_errors() {
    let app = app();
    let long = "a".repeat(100_000);
    let ch = "__CHANNEL__:1";
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "sign_in",
            json!({"server": "srv\u{202e}txt", "clientId": null, "onEvent": ch}),
            "not_found",
        ),
        (
            "sign_in",
            json!({"server": "nope", "clientId": null, "onEvent": ch}),
            "not_found",
        ),
        (
            "sign_in",
            json!({"server": "remote", "clientId": long, "onEvent": ch}),
            "invalid",
        ),
        (
            "sign_in",
            json!({"server": "local", "clientId": null, "onEvent": ch}),
            "invalid",
        ),
        (
            "sign_in_continue",
            json!({"ticket": long, "yes": true}),
            "invalid",
        ),
        (
            "sign_in_continue",
            json!({"ticket": "../../etc", "yes": false}),
            "invalid",
        ),
        ("sign_out", json!({"server": "nope"}), "not_found"),
        ("sign_out", json!({"server": "local"}), "invalid"),
        (
            "set_client_secret",
            json!({"server": "remote", "value": "  "}),
            "invalid",
        ),
        (
            "set_client_secret",
            json!({"server": "remote", "value": "x".repeat(9000)}),
            "invalid",
        ),
        (
            "set_client_secret",
            json!({"server": "nope", "value": "x"}),
            "not_found",
        ),
    ];
    for (cmd, args, code) in cases {
        let shown = format!(
            "{cmd} {}",
            &args.to_string()[..args.to_string().len().min(120)]
        );
        match call(&app, cmd, args) {
            Err(e) => {
                assert!(e.len() < 4096, "{shown}: the error echoes the input");
                assert!(e.contains(&format!("\"{code}\"")), "{shown}: {e}");
            }
            Ok(out) => panic!("{shown}: accepted, answered {out}"),
        }
    }
    // No sign-in was waiting, so an answer to an unknown ticket reaches nothing.
    assert_eq!(
        call(
            &app,
            "sign_in_continue",
            json!({"ticket": "run-0123456789abcdef0123456789abcdef", "yes": true})
        )
        .unwrap(),
        "false"
    );
}

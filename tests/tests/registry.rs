//! Issue 14 point 3: the MCP Registry. A registry of ours on loopback
//! (`tests/src/fake_registry.rs`) serves `server.json` entries in the published shape, hostile
//! ones included; the core's client searches, pages, caches and hides what is not active; an
//! entry becomes an unapproved server whose exact argv, env and headers are what the person
//! approves, with secret values in the keyring and never in the config (SP-01, SP-10, SE-01).
//!
//! The CLI tests at the end store secrets in the real OS keyring, so they run only with
//! `SWITCHBOARD_TEST_KEYRING` (see TESTING.md); the rest use the in-memory store.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::time::Duration;

use switchboard_core::config::launch::SearchPath;
use switchboard_core::config::{TransportSpec, ValueSource};
use switchboard_core::host::{AddOptions, TrustState};
use switchboard_core::redact::Secret;
use switchboard_core::registry::{
    self, Answers, ClientOptions, Freshness, InputKind, RegistryClient, RegistryError, SearchQuery,
};
use switchboard_core::supervisor::ServerStatus;
use switchboard_tests::fake_registry::{hostile_entries, FakeRegistry, RegistryMode, METACHARS};
use switchboard_tests::scenario::keyring_available;
use switchboard_tests::*;

const ACTIVE: &[&str] = &[
    "io.example/everything",
    "io.example/weather-remote",
    "io.example/python-tool",
    "io.example/container",
    "io.example/huge-description",
    "io.example/unknown-type",
    "io.example/flag-identifier",
];

fn client(reg: &FakeRegistry, cache: Option<&std::path::Path>) -> RegistryClient {
    RegistryClient::new(
        &reg.url,
        ClientOptions {
            cache_dir: cache.map(|c| c.to_path_buf()),
            ..ClientOptions::default()
        },
    )
    .unwrap()
}

fn query(text: Option<&str>, limit: u32) -> SearchQuery {
    SearchQuery {
        text: text.map(str::to_owned),
        limit,
        ..SearchQuery::default()
    }
}

fn names(page: &registry::Page) -> Vec<String> {
    page.entries.iter().map(|e| e.server.name.clone()).collect()
}

#[tokio::test]
async fn search_shows_active_entries_and_hides_the_rest() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    let page = client(&reg, None).search(&query(None, 100)).await.unwrap();
    assert_eq!(names(&page), ACTIVE);
    assert_eq!(page.hidden, 2, "deprecated and deleted are hidden");
    assert_eq!(
        page.skipped, 2,
        "entries that are not server.json are skipped"
    );
    assert_eq!(page.next_cursor, None);
    assert_eq!(page.freshness, Freshness::Live);
    // The 1 MB description is cut as it is read.
    let huge = &page.entries[4].server.description;
    assert!(
        huge.chars().count() <= registry::wire::DESCRIPTION_MAX + 1,
        "{}",
        huge.len()
    );

    let weather = client(&reg, None)
        .search(&query(Some("weather"), 10))
        .await
        .unwrap();
    assert_eq!(names(&weather), ["io.example/weather-remote"]);
}

#[tokio::test]
async fn paging_follows_the_cursor_to_the_end() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    let c = client(&reg, None);
    let mut q = query(None, 3);
    let mut seen = Vec::new();
    let mut pages = 0;
    let (mut hidden, mut skipped) = (0, 0);
    loop {
        let page = c.search(&q).await.unwrap();
        pages += 1;
        seen.extend(names(&page));
        hidden += page.hidden;
        skipped += page.skipped;
        match page.next_cursor {
            Some(next) => q.cursor = Some(next),
            None => break,
        }
        assert!(pages < 10, "the cursor never ends");
    }
    assert_eq!(pages, 4, "11 items in pages of 3");
    assert_eq!(seen, ACTIVE);
    assert_eq!((hidden, skipped), (2, 2));
}

#[tokio::test]
async fn cache_answers_within_its_ttl_and_when_the_registry_is_down() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    let cache = tempfile::tempdir().unwrap();
    let c = client(&reg, Some(cache.path()));
    let first = c.search(&query(Some("example"), 50)).await.unwrap();
    assert_eq!(first.freshness, Freshness::Live);
    assert_eq!(reg.served(), 1);
    let again = c.search(&query(Some("example"), 50)).await.unwrap();
    assert!(
        matches!(again.freshness, Freshness::Cached { .. }),
        "{:?}",
        again.freshness
    );
    assert_eq!(
        reg.served(),
        1,
        "a fresh cached answer is used without asking"
    );
    assert_eq!(names(&again), names(&first));

    // Past its time to live, the registry is asked; it is down, so the cached page is shown
    // and marked offline.
    reg.set_mode(RegistryMode::Down);
    let stale = RegistryClient::new(
        &reg.url,
        ClientOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            ttl: Duration::ZERO,
            ..ClientOptions::default()
        },
    )
    .unwrap();
    let offline = stale.search(&query(Some("example"), 50)).await.unwrap();
    assert_eq!(reg.served(), 2);
    assert!(
        matches!(&offline.freshness, Freshness::Offline { reason, .. } if reason.contains("503")),
        "{:?}",
        offline.freshness
    );
    assert_eq!(names(&offline), names(&first));
    // Nothing cached for another query: the failure is reported.
    let err = stale.search(&query(Some("weather"), 50)).await.unwrap_err();
    assert!(matches!(err, RegistryError::Unreachable { .. }), "{err}");

    // A forced refresh asks even when fresh.
    reg.set_mode(RegistryMode::Normal);
    let refreshed = c
        .search(&SearchQuery {
            refresh: true,
            ..query(Some("example"), 50)
        })
        .await
        .unwrap();
    assert_eq!(refreshed.freshness, Freshness::Live);
}

#[tokio::test]
async fn malformed_and_endless_answers_fail_cleanly() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    reg.set_mode(RegistryMode::MalformedJson);
    let err = client(&reg, None)
        .search(&query(None, 10))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Malformed { .. }), "{err}");

    reg.set_mode(RegistryMode::Endless);
    let small = RegistryClient::new(
        &reg.url,
        ClientOptions {
            max_body: 256 * 1024,
            ..ClientOptions::default()
        },
    )
    .unwrap();
    let err = small.search(&query(None, 10)).await.unwrap_err();
    assert!(
        matches!(err, RegistryError::TooLarge { max, .. } if max == 256 * 1024),
        "{err}"
    );
    // The default cap (4 MiB) holds too.
    let err = client(&reg, None)
        .search(&query(None, 10))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::TooLarge { .. }), "{err}");
}

#[tokio::test]
async fn registries_are_https_unless_on_this_machine() {
    for bad in [
        "http://registry.example.com",
        "ftp://x",
        "not a url",
        "https://u:p@x.example",
    ] {
        assert!(
            matches!(
                RegistryClient::new(bad, ClientOptions::default()),
                Err(RegistryError::BadUrl { .. })
            ),
            "{bad}"
        );
    }
    assert!(RegistryClient::new(registry::DEFAULT_URL, ClientOptions::default()).is_ok());
}

#[tokio::test]
async fn entries_that_are_not_active_or_not_runnable_are_refused() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    let c = client(&reg, None);
    for name in ["io.example/deprecated", "io.example/deleted"] {
        let err = c.server(name, None).await.unwrap_err();
        assert!(
            matches!(err, RegistryError::NotActive { .. }),
            "{name}: {err}"
        );
    }
    let err = c.server("io.example/nope", None).await.unwrap_err();
    assert!(matches!(err, RegistryError::NotFound { .. }), "{err}");

    let (unknown, _) = c.server("io.example/unknown-type", None).await.unwrap();
    let opts = registry::options(&unknown.server);
    assert!(
        opts[0]
            .refused
            .as_deref()
            .unwrap()
            .contains("\"cargo\" are not supported"),
        "{opts:?}"
    );
    let (flag, _) = c.server("io.example/flag-identifier", None).await.unwrap();
    assert!(registry::options(&flag.server)[0]
        .refused
        .as_deref()
        .unwrap()
        .contains("starts with '-'"));
    let id = registry::suggested_id(&flag.server.name).unwrap();
    let err = registry::propose(&flag.server, 0, id, &Answers::new()).unwrap_err();
    assert!(matches!(err, RegistryError::Refused { .. }), "{err}");

    // The 1 MB description entry is installable, and its options are ordinary.
    let (huge, _) = c.server("io.example/huge-description", None).await.unwrap();
    assert!(huge.server.description.len() < 10_000);
    assert_eq!(registry::default_option(&huge.server), Some(0));
}

/// A bin dir with an `npx` that records its argv (NUL-separated) and one env var, touches a
/// canary, then becomes the fake MCP server.
fn fake_npx(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\ntouch '{canary}'\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '{argv}'\nprintf '%s' \"$EVERYTHING_API_KEY\" > '{key}'\nexec '{fake}'\n",
        canary = dir.join("canary").display(),
        argv = dir.join("argv").display(),
        key = dir.join("key").display(),
        fake = fake_server().display(),
    );
    let npx = bin.join("npx");
    std::fs::write(&npx, script).unwrap();
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn install_adds_an_unapproved_server_that_runs_the_exact_argv_once_approved() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    let work = tempfile::tempdir().unwrap();
    let bin = fake_npx(work.path());
    let (host, dir) = test_host_with(|b| {
        b.search_path(SearchPath {
            host: vec![bin.clone()],
            login_shell: vec![],
        })
    })
    .await;
    let (entry, _) = client(&reg, None)
        .server("io.example/everything", None)
        .await
        .unwrap();
    let option = registry::default_option(&entry.server).unwrap();
    let inputs = &registry::options(&entry.server)[option].inputs;
    let key = inputs
        .iter()
        .find(|i| i.name == "EVERYTHING_API_KEY")
        .unwrap();
    assert!(key.secret && key.required);
    assert!(inputs.iter().any(|i| i.name == "--root" && i.required));

    let mut answers = Answers::new();
    answers.set(InputKind::Arg, "--root", Secret::new("/srv/my files"));
    answers.set(
        InputKind::Env,
        "EVERYTHING_API_KEY",
        Secret::new("key-CANARY-123"),
    );
    let id = registry::suggested_id(&entry.server.name).unwrap();
    assert_eq!(id.as_str(), "everything");
    let p = registry::propose(&entry.server, option, id.clone(), &answers).unwrap();
    host.add_server_with(
        p.spec,
        AddOptions {
            secrets: p.secrets,
            ..AddOptions::default()
        },
    )
    .await
    .unwrap();

    let expected = [
        "-y",
        "@example/server-everything@2.1.0",
        METACHARS,
        "--root",
        "/srv/my files",
        "--mode",
        "fast",
    ];
    let spec = host.server(&id).await.unwrap();
    let TransportSpec::Stdio(s) = &spec.transport else {
        panic!("{spec:?}")
    };
    assert_eq!(s.command, "npx");
    assert_eq!(s.args, expected);
    let env: Vec<(&str, &ValueSource)> =
        s.env.iter().map(|v| (v.name.as_str(), &v.value)).collect();
    assert!(
        matches!(env[0], ("EVERYTHING_API_KEY", ValueSource::Secret(_))),
        "{env:?}"
    );
    assert_eq!(env[1], ("LOG_LEVEL", &ValueSource::Plain("info".into())));
    let ValueSource::Secret(name) = env[0].1 else {
        unreachable!()
    };
    assert!(host.server_secret_is_set(&id, name).await.unwrap());
    assert_no_file_contains(dir.path(), "key-CANARY-123");

    // Nothing runs before consent.
    let h = host.start_server(&id).await.unwrap();
    let status = h.wait_settled(Duration::from_secs(10)).await;
    assert!(
        matches!(status, ServerStatus::NeedsTrust { .. }),
        "{status}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !work.path().join("canary").exists(),
        "an unapproved install ran"
    );

    // The consent view shows the resolved command and every argument, metacharacters escaped
    // in one element, and warns about `npx -y`.
    let view = host.trust_view(&id).await.unwrap();
    assert_eq!(view.state, TrustState::NotApproved);
    let text: String = view
        .lines
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    assert!(
        text.contains(&bin.join("npx").display().to_string()),
        "{text}"
    );
    assert!(text.contains("rm -rf"), "{text}");
    assert!(text.contains("my files"), "{text}");
    assert!(!text.contains("key-CANARY-123"), "{text}");

    host.trust_server(&id, &view.fingerprint).await.unwrap();
    h.restart().await;
    let status = h.wait_settled(Duration::from_secs(20)).await;
    assert!(matches!(status, ServerStatus::Running { .. }), "{status}");
    let argv = std::fs::read(work.path().join("argv")).unwrap();
    let got: Vec<String> = argv
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8(a.to_vec()).unwrap())
        .collect();
    assert_eq!(
        got, expected,
        "each argument arrives as one exact argv element"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("key")).unwrap(),
        "key-CANARY-123"
    );
    assert!(!std::path::Path::new("/tmp/pwned").exists());
    host.shutdown().await;
}

#[tokio::test]
async fn remote_entries_keep_their_headers_with_secrets_in_the_keyring() {
    let reg = FakeRegistry::start(hostile_entries()).await;
    let (host, dir) = test_host().await;
    let (entry, _) = client(&reg, None)
        .server("io.example/weather-remote", None)
        .await
        .unwrap();
    let id = registry::suggested_id(&entry.server.name).unwrap();
    let mut answers = Answers::new();
    answers.set(InputKind::Var, "token", Secret::new("tok-CANARY-456"));
    answers.set(InputKind::Var, "region", Secret::new("asia"));
    let err = registry::propose(&entry.server, 0, id.clone(), &answers).unwrap_err();
    assert!(matches!(err, RegistryError::NotAChoice { .. }), "{err}");
    answers.set(InputKind::Var, "region", Secret::new("eu"));
    let p = registry::propose(&entry.server, 0, id.clone(), &answers).unwrap();
    host.add_server_with(
        p.spec,
        AddOptions {
            secrets: p.secrets,
            ..AddOptions::default()
        },
    )
    .await
    .unwrap();
    let spec = host.server(&id).await.unwrap();
    let TransportSpec::Http(h) = &spec.transport else {
        panic!("{spec:?}")
    };
    assert_eq!(h.url, "https://eu.weather.example.com/mcp");
    assert_eq!(h.headers[0].name, "Authorization");
    let ValueSource::Secret(name) = &h.headers[0].value else {
        panic!("{:?}", h.headers)
    };
    assert!(host.server_secret_is_set(&id, name).await.unwrap());
    assert_eq!(h.headers[1].value, ValueSource::Plain("switchboard".into()));
    assert_no_file_contains(dir.path(), "tok-CANARY-456");
    let view = host.trust_view(&id).await.unwrap();
    assert_eq!(view.state, TrustState::NotApproved);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, step by step: its checks read in order
async fn cli_searches_shows_and_installs_with_secrets_from_stdin_into_the_keyring() {
    if !keyring_available() {
        return;
    }
    let reg = FakeRegistry::start(hostile_entries()).await;
    let url = reg.url.clone();
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_path_buf();
    let name = format!("everything-{}", std::process::id());
    let out = tokio::task::spawn_blocking(move || {
        let search = run_cli(
            &d,
            &["registry", "search", "--json"],
            "",
            &[("SWITCHBOARD_REGISTRY_URL", &url)],
        );
        let show = run_cli(
            &d,
            &[
                "registry",
                "show",
                "io.example/everything",
                "--registry",
                &url,
            ],
            "",
            &[],
        );
        // A secret on the command line is refused before anything is written.
        let on_argv = run_cli(
            &d,
            &[
                "registry",
                "install",
                "io.example/everything",
                "--registry",
                &url,
                "--as",
                &name,
                "--arg",
                "root=/srv",
                "--env",
                "EVERYTHING_API_KEY=cli-CANARY-789",
            ],
            "",
            &[],
        );
        let install = run_cli(
            &d,
            &[
                "registry",
                "install",
                "io.example/everything",
                "--registry",
                &url,
                "--as",
                &name,
                "--arg",
                "root=/srv",
                "--json",
            ],
            "cli-CANARY-789\n",
            &[],
        );
        let refused = run_cli(
            &d,
            &[
                "registry",
                "install",
                "io.example/unknown-type",
                "--registry",
                &url,
            ],
            "",
            &[],
        );
        let deprecated = run_cli(
            &d,
            &[
                "registry",
                "install",
                "io.example/deprecated",
                "--registry",
                &url,
            ],
            "",
            &[],
        );
        (search, show, on_argv, install, refused, deprecated, name)
    })
    .await
    .unwrap();
    let (search, show, on_argv, install, refused, deprecated, name) = out;
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(search.status.success(), "{}", text(&search));
    let json: serde_json::Value = serde_json::from_slice(&search.stdout).unwrap();
    let listed: Vec<&str> = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ACTIVE);
    assert_eq!(json["hidden_not_active"], 2);
    assert!(show.status.success(), "{}", text(&show));
    assert!(
        text(&show).contains("EVERYTHING_API_KEY (required)"),
        "{}",
        text(&show)
    );

    assert_eq!(on_argv.status.code(), Some(64), "{}", text(&on_argv));
    assert!(
        text(&on_argv).contains("never taken from the command line"),
        "{}",
        text(&on_argv)
    );

    assert!(install.status.success(), "{}", text(&install));
    let added: serde_json::Value = serde_json::from_slice(&install.stdout).unwrap();
    assert_eq!(added["added"], name.as_str());
    assert_eq!(added["secrets_stored"][0], "EVERYTHING_API_KEY");
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("not supported"),
        "{}",
        text(&refused)
    );
    assert!(!deprecated.status.success());
    assert!(
        text(&deprecated).contains("deprecated"),
        "{}",
        text(&deprecated)
    );

    // The registry goes down: the cached list is shown, and the command says so.
    reg.set_mode(RegistryMode::Down);
    let (d, url) = (data.path().to_path_buf(), reg.url.clone());
    let offline = tokio::task::spawn_blocking(move || {
        run_cli(
            &d,
            &["registry", "search", "--refresh", "--registry", &url],
            "",
            &[],
        )
    })
    .await
    .unwrap();
    assert!(offline.status.success(), "{}", text(&offline));
    assert!(
        text(&offline).contains("could not be reached (HTTP 503)"),
        "{}",
        text(&offline)
    );
    assert!(
        text(&offline).contains("io.example/everything"),
        "{}",
        text(&offline)
    );

    assert_no_file_contains(data.path(), "cli-CANARY-789");
    // The real keyring holds it, under the server's own namespace.
    let host = switchboard_core::host::HostBuilder::new(data.path())
        .build()
        .await
        .unwrap();
    let id = switchboard_core::ids::ServerId::new(&name).unwrap();
    let spec = host.server(&id).await.unwrap();
    let TransportSpec::Stdio(s) = &spec.transport else {
        panic!()
    };
    assert_eq!(s.args[2], METACHARS);
    let secret = switchboard_core::ids::SecretName::new("EVERYTHING_API_KEY").unwrap();
    assert!(host.server_secret_is_set(&id, &secret).await.unwrap());
    host.remove_server(&id).await.unwrap();
    host.shutdown().await;
}

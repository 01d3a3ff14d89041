//! Tests of [`super`]: resolution, fingerprints, consent lines and the warning classifier.
use super::*;
use crate::config::{NamedValue, Timeouts, ValueSource};
use crate::ids::ServerId;

fn spec(command: &str, args: &[&str]) -> ServerSpec {
    ServerSpec {
        id: ServerId::new("s").unwrap(),
        transport: TransportSpec::Stdio(StdioSpec {
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: vec![NamedValue {
                name: "TOKEN".into(),
                value: ValueSource::Plain("x".into()),
            }],
            cwd: None,
        }),
        enabled: true,
        timeouts: Timeouts::default(),
    }
}

fn sp(dirs: &[&Path]) -> SearchPath {
    SearchPath {
        host: dirs.iter().map(|d| d.to_path_buf()).collect(),
        login_shell: vec![],
    }
}

fn make_exe(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn resolves_on_path_then_login_shell() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let exe = make_exe(b.path(), "mytool");
    let mut search = sp(&[a.path()]);
    assert!(matches!(
        resolve_program("mytool", a.path(), &search),
        Err(ResolveError::NotFound { .. })
    ));
    search.login_shell = vec![b.path().to_path_buf()];
    assert_eq!(
        resolve_program("mytool", a.path(), &search).unwrap(),
        (exe, Resolution::LoginShellPath)
    );
}

#[test]
fn login_shell_probe_reads_path_between_markers_and_survives_noise() {
    let d = tempfile::tempdir().unwrap();
    // A "shell" whose start-up files print noise and set a PATH the app does not have.
    let shell = make_exe(d.path(), "fake-shell");
    std::fs::write(
        &shell,
        "#!/bin/sh\necho 'welcome banner'\nPATH=/opt/homebrew/bin:relative/dir:/usr/local/bin\nexport PATH\neval \"$3\"\n",
    )
    .unwrap();
    let got = probe_shell_path(&shell);
    assert_eq!(
        got,
        vec![
            PathBuf::from("/opt/homebrew/bin"),
            PathBuf::from("/usr/local/bin")
        ],
        "relative entries are dropped"
    );
    // A shell that hangs is abandoned after the timeout with nothing found.
    let slow = make_exe(d.path(), "slow-shell");
    std::fs::write(&slow, "#!/bin/sh\nsleep 30\n").unwrap();
    let started = std::time::Instant::now();
    assert!(probe_shell_path(&slow).is_empty());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(probe_shell_path(Path::new("/nonexistent/shell")).is_empty());
}

#[test]
fn never_resolves_from_app_cwd_via_relative_path_entries() {
    // A PATH hijack: `node` planted in the current directory and a "." PATH entry.
    let cwd = tempfile::tempdir().unwrap();
    make_exe(cwd.path(), "node");
    let search = SearchPath {
        host: vec![PathBuf::from("."), PathBuf::from("")],
        login_shell: vec![],
    };
    assert!(resolve_program("node", cwd.path(), &search).is_err());
}

#[test]
fn non_executable_and_unc() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("plain");
    std::fs::write(&p, "x").unwrap();
    assert!(matches!(
        resolve_program(p.to_str().unwrap(), d.path(), &sp(&[])),
        Err(ResolveError::NotExecutable { .. })
    ));
    assert!(matches!(
        resolve_program("\\\\host\\share\\x.exe", d.path(), &sp(&[])),
        Err(ResolveError::Unc(_))
    ));
}

#[test]
fn fingerprint_changes_with_any_part() {
    let d = tempfile::tempdir().unwrap();
    make_exe(d.path(), "srv");
    let search = sp(&[d.path()]);
    let base = LaunchPlan::resolve(&spec("srv", &["a"]), d.path(), &search).unwrap();
    let same = LaunchPlan::resolve(&spec("srv", &["a"]), d.path(), &search).unwrap();
    assert_eq!(base.fingerprint(), same.fingerprint());
    let other_arg = LaunchPlan::resolve(&spec("srv", &["b"]), d.path(), &search).unwrap();
    assert_ne!(base.fingerprint(), other_arg.fingerprint());
    // Moving an argument boundary must change it too ("a b" vs "a","b").
    let split = LaunchPlan::resolve(&spec("srv", &["a", "b"]), d.path(), &search).unwrap();
    let joined = LaunchPlan::resolve(&spec("srv", &["a b"]), d.path(), &search).unwrap();
    assert_ne!(split.fingerprint(), joined.fingerprint());
    let mut with_env = spec("srv", &["a"]);
    if let TransportSpec::Stdio(s) = &mut with_env.transport {
        s.env.push(NamedValue {
            name: "EXTRA".into(),
            value: ValueSource::Plain("1".into()),
        });
    }
    let with_env = LaunchPlan::resolve(&with_env, d.path(), &search).unwrap();
    assert_ne!(base.fingerprint(), with_env.fingerprint());
}

#[test]
fn consent_shows_everything_escaped() {
    let d = tempfile::tempdir().unwrap();
    make_exe(d.path(), "srv");
    let long = "x".repeat(5000);
    let plan = LaunchPlan::resolve(
        &spec("srv", &["--flag", "evil\u{202E}txt", "\x1b[2Jclear", &long]),
        d.path(),
        &sp(&[d.path()]),
    )
    .unwrap();
    let lines = plan.consent_lines();
    let text: String = lines.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
    assert!(text.contains("arg[0]: --flag"));
    assert!(text.contains("\\u{202E}"));
    assert!(text.contains("\\e[2Jclear"));
    assert!(text.contains(&long), "long args are never truncated");
    assert!(!text.contains('\u{202E}') && !text.contains('\x1b'));
    assert!(text.contains("env TOKEN: (hidden"), "{text}");
    assert!(!plan.warnings().is_empty());
}

fn with_env(mut spec: ServerSpec, name: &str, value: ValueSource) -> ServerSpec {
    spec.values_mut().push(NamedValue {
        name: name.into(),
        value,
    });
    spec
}

/// SP-03: values and bindings are part of what is approved, not only names.
#[test]
fn env_values_and_bindings_change_the_fingerprint_and_show_in_consent() {
    let d = tempfile::tempdir().unwrap();
    make_exe(d.path(), "srv");
    let search = sp(&[d.path()]);
    let plan = |v: ValueSource| {
        LaunchPlan::resolve(
            &with_env(spec("srv", &[]), "NODE_OPTIONS", v),
            d.path(),
            &search,
        )
        .unwrap()
    };
    let a = plan(ValueSource::Plain("--max-old-space-size=100".into()));
    let b = plan(ValueSource::Plain("--require /tmp/evil.js".into()));
    assert_ne!(
        a.fingerprint(),
        b.fingerprint(),
        "a changed value voids approval"
    );
    let own = plan(ValueSource::Secret(
        crate::ids::SecretName::new("NODE_OPTIONS").unwrap(),
    ));
    let bound = plan(ValueSource::Bound(
        Binding::parse("provider:openai").unwrap(),
    ));
    let other = plan(ValueSource::Bound(
        Binding::parse("server:gh/NODE_OPTIONS").unwrap(),
    ));
    let prints = [&a, &b, &own, &bound, &other].map(|p| p.fingerprint());
    for (i, x) in prints.iter().enumerate() {
        for y in &prints[i + 1..] {
            assert_ne!(x, y);
        }
    }
    let text: String = b
        .consent_lines()
        .iter()
        .map(|(k, v)| format!("{k}: {v}\n"))
        .collect();
    assert!(
        text.contains("env NODE_OPTIONS: '--require /tmp/evil.js'"),
        "{text}"
    );
    assert!(
        b.warnings().iter().any(|w| w.contains("NODE_OPTIONS")),
        "{:?}",
        b.warnings()
    );
    let shown: String = bound
        .consent_lines()
        .iter()
        .map(|(_, v)| v.clone())
        .collect();
    assert!(shown.contains("API key of provider openai"), "{shown}");
    assert!(bound
        .warnings()
        .iter()
        .any(|w| w.contains("not this server's own")));
}

#[test]
fn loader_variables_are_flagged() {
    for v in [
        "LD_PRELOAD",
        "ld_library_path",
        "DYLD_INSERT_LIBRARIES",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "RUBYOPT",
        "JAVA_TOOL_OPTIONS",
        "PATH",
    ] {
        assert!(is_loader_var(v), "{v}");
    }
    for v in ["HOME", "LOG_LEVEL", "GITHUB_TOKEN"] {
        assert!(!is_loader_var(v), "{v}");
    }
}

/// SP-10: remote servers are approved on their URL and every header.
#[test]
fn remote_plans_cover_url_and_headers() {
    let remote = |url: &str, v: ValueSource| ServerSpec {
        id: ServerId::new("r").unwrap(),
        transport: TransportSpec::Http(HttpSpec {
            url: url.into(),
            headers: vec![NamedValue {
                name: "Authorization".into(),
                value: v,
            }],
        }),
        enabled: true,
        timeouts: Timeouts::default(),
    };
    let d = tempfile::tempdir().unwrap();
    let plan = |url: &str, v: ValueSource| {
        LaunchPlan::resolve(&remote(url, v), d.path(), &sp(&[])).unwrap()
    };
    let own = ValueSource::Secret(crate::ids::SecretName::new("Authorization").unwrap());
    let base = plan("https://a.example/mcp", own.clone());
    assert_ne!(
        base.fingerprint(),
        plan("https://b.example/mcp", own.clone()).fingerprint()
    );
    let bound = ValueSource::Bound(Binding::parse("provider:openai").unwrap());
    assert_ne!(
        base.fingerprint(),
        plan("https://a.example/mcp", bound).fingerprint()
    );
    let lines = base.consent_lines();
    assert_eq!(
        lines[0],
        ("url".to_owned(), "https://a.example/mcp".to_owned())
    );
    assert_eq!(lines[1].0, "header Authorization");
    assert!(lines[1].1.contains("this server's secret Authorization"));
    assert!(plan("http://127.0.0.1:1/mcp", own)
        .warnings()
        .iter()
        .any(|w| w.contains("plain http")));
}

#[test]
fn warning_classifier() {
    let d = tempfile::tempdir().unwrap();
    let plan = |name: &str, args: &[&str]| {
        make_exe(d.path(), name);
        LaunchPlan::resolve(&spec(name, args), d.path(), &sp(&[d.path()]))
            .unwrap()
            .warnings()
    };
    assert!(plan("bash", &["-c", "echo hi"])[0].contains("inline"));
    assert!(plan("sudo", &["srv"])[0].contains("elevated"));
    assert!(plan("npx", &["-y", "some-server"])[0].contains("not pinned"));
    assert!(plan("npx", &["-y", "some-server@1.2.3"]).is_empty());
    assert!(plan("cat", &["/root/.ssh/id_rsa"])[0].contains("sensitive"));
    assert!(plan("node", &["server.js"]).is_empty());
}

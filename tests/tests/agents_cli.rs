//! `switchboard agent` (issue 15, point 1) through the real binary on temporary data dirs:
//! profiles added, listed, shown, edited and removed; exported as TOML and imported into a
//! second data dir as equal profiles; imports refused, whole, for an "allow" override, an
//! unknown provider, a taken name without `--replace` and an unknown field.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;

use serde_json::Value;
use switchboard_tests::chat_cli::ok;
use switchboard_tests::run_cli;

fn cli(data: &Path, args: &[&str]) -> std::process::Output {
    run_cli(data, args, "", &[])
}

fn json(data: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(&cli(data, &all))).unwrap()
}

/// Runs a command that must fail; returns its JSON error object.
fn refused(data: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = cli(data, &all);
    assert!(
        !o.status.success(),
        "{args:?} succeeded: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: no JSON error ({e}): {o:?}"));
    v["error"].clone()
}

/// A provider that needs no key (Ollama's profile) at a closed loopback port: agents only need
/// it to be configured.
fn provider(data: &Path, name: &str) {
    ok(&cli(
        data,
        &[
            "provider",
            "add",
            name,
            "--kind",
            "ollama",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
    ));
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

fn full_profiles(data: &Path) {
    provider(data, "claude");
    provider(data, "local");
    ok(&cli(
        data,
        &[
            "agent",
            "add",
            "coder",
            "--provider",
            "local",
            "--model",
            "qwen2.5-coder",
            "--description",
            "Writes code",
            "--server",
            "memory",
            "--server",
            "files",
            "--tool",
            "memory/read_*",
            "--tool",
            "files/*",
            "--ask",
            "files/write_*",
            "--deny",
            "memory/delete_*",
            "--no-delegation",
            "--max-tokens",
            "5000",
            "--max-cost",
            "0.25",
            "--max-calls",
            "10",
            "--max-time",
            "120",
        ],
    ));
    let system = data.join("planner.txt");
    std::fs::write(&system, "You plan.\nThen \"you\" delegate.\n").unwrap();
    ok(&cli(
        data,
        &[
            "agent",
            "add",
            "planner",
            "--provider",
            "claude",
            "--description",
            "Plans the work and delegates",
            "--system-file",
            system.to_str().unwrap(),
            "--delegate",
            "coder",
        ],
    ));
}

#[test]
fn agents_are_added_listed_shown_edited_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    full_profiles(data);

    assert_eq!(names(&json(data, &["agent", "list"])), ["coder", "planner"]);
    let coder = json(data, &["agent", "show", "coder"]);
    assert_eq!(coder["provider"], "local");
    assert_eq!(coder["model"], "qwen2.5-coder");
    assert_eq!(
        coder["scope"]["servers"],
        serde_json::json!(["memory", "files"])
    );
    assert_eq!(
        coder["scope"]["tools"],
        serde_json::json!(["memory/read_*", "files/*"])
    );
    assert_eq!(
        coder["policy"],
        serde_json::json!([
            {"tool": "files/write_*", "action": "ask"},
            {"tool": "memory/delete_*", "action": "deny"}
        ])
    );
    assert_eq!(coder["delegates"], serde_json::json!([]));
    assert_eq!(
        coder["budget"],
        serde_json::json!({"tokens": 5000, "cost_usd": 0.25, "tool_calls": 10, "wall_secs": 120})
    );
    let planner = json(data, &["agent", "show", "planner"]);
    assert_eq!(planner["system"], "You plan.\nThen \"you\" delegate.\n");
    assert_eq!(planner["delegates"], serde_json::json!(["coder"]));
    assert!(planner.get("model").is_none(), "{planner}");
    let text = ok(&cli(data, &["agent", "show", "coder"]));
    assert!(text.contains("override: deny memory/delete_*"), "{text}");
    assert!(text.contains("delegates to: nobody"), "{text}");
    let text = ok(&cli(data, &["agent", "list"]));
    assert!(
        text.contains("planner\tclaude (default model)\tPlans the work"),
        "{text}"
    );

    // Refused: an unknown provider, an unknown delegate, a name taken, a bad name, "allow".
    let e = refused(data, &["agent", "add", "x", "--provider", "nope"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no provider named nope"),
        "{e}"
    );
    let e = refused(
        data,
        &[
            "agent",
            "add",
            "x",
            "--provider",
            "local",
            "--delegate",
            "ghost",
        ],
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no agent named ghost"),
        "{e}"
    );
    let e = refused(data, &["agent", "add", "coder", "--provider", "local"]);
    assert_eq!(e["code"], "exists", "{e}");
    let e = refused(data, &["agent", "add", "Bad.Name", "--provider", "local"]);
    assert!(e["message"].as_str().unwrap().contains("not valid"), "{e}");
    let e = refused(data, &["agent", "edit", "coder", "--tool", "no-slash"]);
    assert!(
        e["message"].as_str().unwrap().contains("scope.tools[0]"),
        "{e}"
    );
    let e = refused(data, &["agent", "edit", "coder", "--max-cost", "-1"]);
    assert!(!e.is_null(), "a negative cost was accepted");
    let e = refused(data, &["agent", "edit", "planner", "--delegate", "planner"]);
    assert!(e["message"].as_str().unwrap().contains("itself"), "{e}");
    assert_eq!(names(&json(data, &["agent", "list"])), ["coder", "planner"]);

    // Edit: only what is given changes; a list given replaces the list.
    let edited = json(
        data,
        &[
            "agent",
            "edit",
            "coder",
            "--provider",
            "claude",
            "--clear-model",
            "--tool",
            "memory/*",
            "--any-delegate",
            "--clear-budget",
            "--max-calls",
            "3",
        ],
    );
    assert_eq!(edited["provider"], "claude");
    assert!(edited.get("model").is_none(), "{edited}");
    assert_eq!(
        edited["scope"]["servers"],
        serde_json::json!(["memory", "files"])
    );
    assert_eq!(edited["scope"]["tools"], serde_json::json!(["memory/*"]));
    assert!(edited.get("delegates").is_none(), "{edited}");
    assert_eq!(edited["budget"], serde_json::json!({"tool_calls": 3}));
    assert_eq!(edited["description"], "Writes code");
    assert_eq!(json(data, &["agent", "show", "coder"]), edited);

    // A provider an agent runs on stays until the agent moves or goes.
    let e = refused(data, &["provider", "remove", "claude"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("agents coder, planner"),
        "{e}"
    );

    // An agent another one delegates to stays until that one lets go of it.
    let e = refused(data, &["agent", "remove", "coder"]);
    assert!(e["message"].as_str().unwrap().contains("planner"), "{e}");
    ok(&cli(data, &["agent", "edit", "planner", "--no-delegation"]));
    ok(&cli(data, &["agent", "remove", "coder"]));
    assert_eq!(names(&json(data, &["agent", "list"])), ["planner"]);
    let e = refused(data, &["agent", "show", "coder"]);
    assert_eq!(e["code"], "not_found", "{e}");
    let e = refused(data, &["agent", "remove", "coder"]);
    assert_eq!(e["code"], "not_found", "{e}");
}

#[test]
fn export_then_import_into_another_data_dir_gives_equal_profiles() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    full_profiles(a.path());
    let file = a.path().join("agents.toml");
    ok(&cli(
        a.path(),
        &["agent", "export", "--out", file.to_str().unwrap()],
    ));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("[[agent]]") && text.contains("[[agent.policy]]"),
        "{text}"
    );
    assert_eq!(ok(&cli(a.path(), &["agent", "export"])), text);

    provider(b.path(), "claude");
    provider(b.path(), "local");
    let report = json(b.path(), &["agent", "import", file.to_str().unwrap()]);
    assert_eq!(report["added"], serde_json::json!(["coder", "planner"]));
    assert_eq!(
        json(b.path(), &["agent", "list"]),
        json(a.path(), &["agent", "list"])
    );
    assert_eq!(ok(&cli(b.path(), &["agent", "export"])), text);
    // The import is in the audit log.
    let audit = ok(&cli(b.path(), &["audit", "list", "--json"]));
    assert!(audit.contains("agents_imported"), "{audit}");
}

#[test]
fn imports_are_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    provider(data, "local");
    let good = "[[agent]]\nname = \"helper\"\nprovider = \"local\"\n\n[[agent]]\nname = \"second\"\nprovider = \"local\"\ndelegates = [\"helper\"]\n";
    let import = |name: &str, text: &str, extra: &[&str]| {
        let path = data.join(name);
        std::fs::write(&path, text).unwrap();
        let mut args = vec!["agent", "import", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(data, &args)
    };

    let allow = good.replace(
        "delegates = [\"helper\"]\n",
        "delegates = [\"helper\"]\n[[agent.policy]]\ntool = \"memory/*\"\naction = \"allow\"\n",
    );
    let e = run(&import("allow.toml", &allow, &[]));
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("only tighten") && m.contains("agent second"),
        "{e}"
    );

    let e = run(&import(
        "provider.toml",
        &good.replace("\"local\"\ndelegates", "\"elsewhere\"\ndelegates"),
        &[],
    ));
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no provider named elsewhere"),
        "{e}"
    );

    let e = run(&import(
        "field.toml",
        &good.replace(
            "name = \"helper\"\n",
            "name = \"helper\"\ncolour = \"red\"\n",
        ),
        &[],
    ));
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("agent helper") && m.contains("colour"), "{e}");
    assert!(
        json(data, &["agent", "list"])
            .as_array()
            .unwrap()
            .is_empty(),
        "a refused import saved something"
    );

    // A name taken: refused (nothing changes) unless --replace.
    let args = import("good.toml", good, &[]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&cli(data, &argv));
    let changed = good.replace(
        "name = \"second\"\n",
        "name = \"second\"\ndescription = \"new\"\n",
    ) + "[[agent]]\nname = \"third\"\nprovider = \"local\"\n";
    let e = run(&import("again.toml", &changed, &[]));
    assert!(
        e["message"].as_str().unwrap().contains("already exists"),
        "{e}"
    );
    assert_eq!(names(&json(data, &["agent", "list"])), ["helper", "second"]);
    assert_eq!(json(data, &["agent", "show", "second"])["description"], "");
    let args = import("again.toml", &changed, &["--replace"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut with_json = vec!["--json"];
    with_json.extend_from_slice(&argv);
    let report: Value = serde_json::from_str(&ok(&cli(data, &with_json))).unwrap();
    assert_eq!(report["added"], serde_json::json!(["third"]));
    assert_eq!(report["replaced"], serde_json::json!(["helper", "second"]));
    assert_eq!(
        json(data, &["agent", "show", "second"])["description"],
        "new"
    );
}

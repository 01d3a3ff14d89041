//! Unit tests of `settings`: defaults, validation, the atomic save and damaged files.
#![allow(clippy::unwrap_used)] // test code: a panic is a failed test

use super::*;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn files(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn no_file_means_the_defaults_and_no_warning() {
    let d = dir();
    let l = load(d.path());
    assert_eq!(l.settings, Settings::default());
    assert_eq!(l.settings.idle_stop_secs, 600);
    assert_eq!(l.settings.registry_url, DEFAULT_REGISTRY_URL);
    assert!(l.warning().is_none());
    assert!(files(d.path()).is_empty(), "loading wrote something");
}

#[test]
fn a_save_is_read_back_whole() {
    let d = dir();
    let want = Settings {
        theme: Theme::Dark,
        default_provider: Some("local".into()),
        default_model: Some("llama3.2".into()),
        registry_url: "http://127.0.0.1:9999/".into(),
        log_level: LogLevel::Debug,
        idle_stop_secs: 90,
        tools_warn_percent: 40,
    };
    let saved = save(d.path(), want.clone()).unwrap();
    // The trailing slash goes; everything else is kept as given.
    assert_eq!(saved.registry_url, "http://127.0.0.1:9999");
    let l = load(d.path());
    assert_eq!(l.settings, saved);
    assert!(l.problems.is_empty());
    // Only the file itself: no temporary left behind.
    assert_eq!(files(d.path()), [FILE_NAME]);
}

#[test]
fn blank_provider_and_model_mean_none() {
    let s = Settings {
        default_provider: Some("  ".into()),
        default_model: Some(String::new()),
        ..Settings::default()
    }
    .validated()
    .unwrap();
    assert_eq!(s.default_provider, None);
    assert_eq!(s.default_model, None);
}

#[test]
fn invalid_values_are_refused_and_nothing_is_written() {
    let d = dir();
    let cases: Vec<(Settings, &str)> = vec![
        (
            Settings {
                idle_stop_secs: 5,
                ..Settings::default()
            },
            "idle_stop_secs",
        ),
        (
            Settings {
                idle_stop_secs: MAX_IDLE_STOP_SECS + 1,
                ..Settings::default()
            },
            "idle_stop_secs",
        ),
        (
            Settings {
                registry_url: "ftp://x.example".into(),
                ..Settings::default()
            },
            "registry_url",
        ),
        (
            Settings {
                registry_url: "http://registry.example".into(),
                ..Settings::default()
            },
            "registry_url",
        ),
        (
            Settings {
                registry_url: "not a url".into(),
                ..Settings::default()
            },
            "registry_url",
        ),
        (
            Settings {
                registry_url: "https://u:p@x.example".into(),
                ..Settings::default()
            },
            "registry_url",
        ),
        (
            Settings {
                default_model: Some("a\nb".into()),
                ..Settings::default()
            },
            "default_model",
        ),
        (
            Settings {
                default_provider: Some("p".repeat(5000)),
                ..Settings::default()
            },
            "default_provider",
        ),
    ];
    for (s, field) in cases {
        match save(d.path(), s.clone()) {
            Err(SettingsError::Invalid { field: f, .. }) => assert_eq!(f, field, "{s:?}"),
            other => panic!("{s:?} gave {other:?}"),
        }
    }
    assert!(files(d.path()).is_empty());
    // 0 means "never stop" and is fine, as are both ends of the range.
    for secs in [0, MIN_IDLE_STOP_SECS, MAX_IDLE_STOP_SECS] {
        save(
            d.path(),
            Settings {
                idle_stop_secs: secs,
                ..Settings::default()
            },
        )
        .unwrap();
    }
}

#[test]
fn a_file_that_is_not_json_gives_defaults_a_warning_and_a_copy() {
    let d = dir();
    std::fs::write(path(d.path()), b"{ theme: dark, oops").unwrap();
    let l = load(d.path());
    assert_eq!(l.settings, Settings::default());
    let warning = l.warning().unwrap();
    assert!(warning.contains("not valid JSON"), "{warning}");
    let backup = l.backup.clone().unwrap();
    assert!(warning.contains(&backup.display().to_string()), "{warning}");
    assert_eq!(std::fs::read(&backup).unwrap(), b"{ theme: dark, oops");
    // The original is untouched until the person saves.
    assert_eq!(
        std::fs::read(path(d.path())).unwrap(),
        b"{ theme: dark, oops"
    );
    // Read again (the next start, the page opened again): the one copy is reused.
    assert_eq!(load(d.path()).backup, Some(backup));
    assert_eq!(files(d.path()).len(), 2, "{:?}", files(d.path()));
}

#[test]
fn one_bad_field_costs_only_that_field() {
    let d = dir();
    std::fs::write(
        path(d.path()),
        br#"{"theme":"dark","idle_stop_secs":-3,"log_level":"loud","registry_url":"https://r.example/","future_field":1}"#,
    )
    .unwrap();
    let l = load(d.path());
    assert_eq!(l.settings.theme, Theme::Dark);
    assert_eq!(l.settings.registry_url, "https://r.example");
    assert_eq!(l.settings.idle_stop_secs, DEFAULT_IDLE_STOP_SECS);
    assert_eq!(l.settings.log_level, LogLevel::Info);
    assert_eq!(l.problems.len(), 2, "{:?}", l.problems);
    let w = l.warning().unwrap();
    assert!(
        w.contains("idle_stop_secs") && w.contains("log_level"),
        "{w}"
    );
    assert!(
        !w.contains("future_field"),
        "an unknown field is not a problem: {w}"
    );
    assert!(l.backup.is_some());
}

#[test]
fn a_json_value_that_is_not_an_object_is_a_problem() {
    let d = dir();
    std::fs::write(path(d.path()), b"[1,2]").unwrap();
    let l = load(d.path());
    assert_eq!(l.settings, Settings::default());
    assert_eq!(l.problems, ["the file is not a JSON object"]);
}

#[test]
fn saving_over_a_damaged_file_replaces_it() {
    let d = dir();
    std::fs::write(path(d.path()), b"\xff\xfe garbage").unwrap();
    let l = load(d.path());
    assert!(l.warning().is_some());
    save(
        d.path(),
        Settings {
            theme: Theme::Light,
            ..l.settings
        },
    )
    .unwrap();
    let again = load(d.path());
    assert!(again.problems.is_empty());
    assert_eq!(again.settings.theme, Theme::Light);
    // The damaged copy is still there for the person.
    assert!(files(d.path())
        .iter()
        .any(|f| f.starts_with("settings.json.bad-")));
}

#[test]
fn the_file_is_plain_readable_json() {
    let d = dir();
    save(d.path(), Settings::default()).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path(d.path())).unwrap()).unwrap();
    assert_eq!(v["theme"], "system");
    assert_eq!(v["log_level"], "info");
    assert_eq!(v["idle_stop_secs"], 600);
    assert_eq!(v["default_provider"], serde_json::Value::Null);
}

#[test]
fn log_levels_spell_as_tracing_does() {
    for (l, s) in [
        (LogLevel::Error, "error"),
        (LogLevel::Warn, "warn"),
        (LogLevel::Info, "info"),
        (LogLevel::Debug, "debug"),
        (LogLevel::Trace, "trace"),
    ] {
        assert_eq!(l.as_str(), s);
        assert_eq!(serde_json::to_value(l).unwrap(), s);
    }
}

#[test]
fn the_tools_warning_share_is_kept_and_checked() {
    let d = dir();
    assert_eq!(Settings::default().tools_warn_percent, 25);
    let s = Settings {
        tools_warn_percent: 101,
        ..Settings::default()
    };
    assert!(save(d.path(), s).is_err());
    std::fs::write(path(d.path()), br#"{"tools_warn_percent": "lots"}"#).unwrap();
    let l = load(d.path());
    assert_eq!(l.settings.tools_warn_percent, 25);
    assert_eq!(l.problems.len(), 1, "{:?}", l.problems);
}

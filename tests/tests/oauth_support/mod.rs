//! Shared by the CLI sign-in tests (`oauth_hostile`, `oauth_refresh`): the `switchboard` CLI on
//! a data dir with `fake-browser` as its browser, every word it says kept for the canary checks,
//! and the keyring gate of `oauth_cli.rs`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // not every test file uses all

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use switchboard_tests::fake_oauth::OAuthHandle;
use switchboard_tests::*;

/// Whether the real keyring is there (`make test`); otherwise the test is skipped.
pub use switchboard_tests::scenario::keyring_available;

/// One run of the CLI, decoded.
#[derive(Debug)]
pub struct Ran {
    pub ok: bool,
    pub code: Option<i32>,
    pub out: String,
    pub err: String,
    pub took: Duration,
}

impl Ran {
    /// The `--json` error code on stdout, if any.
    pub fn error_code(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_str(self.out.trim()).ok()?;
        v.pointer("/error/code")?.as_str().map(str::to_owned)
    }

    /// The `--json` error message on stdout, if any.
    pub fn error_message(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_str(self.out.trim()).ok()?;
        v.pointer("/error/message")?.as_str().map(str::to_owned)
    }
}

/// The CLI on one data dir. Everything it prints goes to `said.log` in a sibling directory
/// (not the data dir: the data dir's own canary check must not see our copy of the output).
#[derive(Clone)]
pub struct Cli {
    pub dir: PathBuf,
    pub browser_log: PathBuf,
    pub said: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Cli {
    /// A CLI on `root/data`, logs beside it in `root`.
    pub fn new(root: &Path) -> Self {
        let dir = root.join("data");
        std::fs::create_dir_all(&dir).unwrap();
        Self {
            dir,
            browser_log: root.join("browser.log"),
            said: root.join("said.log"),
            env: Vec::new(),
        }
    }

    /// Runs the CLI at TRACE level with the browser stand-in.
    pub fn run(&self, args: &[&str]) -> Ran {
        self.run_in(args, "")
    }

    /// Like [`Cli::run`], with `stdin`.
    pub fn run_in(&self, args: &[&str], stdin: &str) -> Ran {
        let browser = workspace_bin("fake-browser");
        let mut env: Vec<(&str, &str)> = vec![
            ("SWITCHBOARD_BROWSER", browser.to_str().unwrap()),
            ("FAKE_BROWSER_LOG", self.browser_log.to_str().unwrap()),
            ("SWITCHBOARD_LOG", "switchboard=trace,rmcp=trace"),
        ];
        env.extend(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let start = Instant::now();
        let o: Output = run_cli(&self.dir, args, stdin, &env);
        let took = start.elapsed();
        let mut all = std::fs::read(&self.said).unwrap_or_default();
        all.extend_from_slice(format!("\n$ {args:?}\n").as_bytes());
        all.extend_from_slice(&o.stdout);
        all.extend_from_slice(&o.stderr);
        std::fs::write(&self.said, all).unwrap();
        Ran {
            ok: o.status.success(),
            code: o.status.code(),
            out: String::from_utf8_lossy(&o.stdout).into_owned(),
            err: String::from_utf8_lossy(&o.stderr).into_owned(),
            took,
        }
    }

    /// Runs and fails the test unless it succeeds.
    pub fn ok(&self, args: &[&str]) -> Ran {
        let r = self.run(args);
        assert!(r.ok, "{args:?} failed:\n{}\n{}", r.out, r.err);
        r
    }

    /// Runs and fails the test if it succeeds.
    pub fn fails(&self, args: &[&str]) -> Ran {
        let r = self.run(args);
        assert!(!r.ok, "{args:?} succeeded:\n{}\n{}", r.out, r.err);
        r
    }

    /// The lines `fake-browser` logged (one per page opened).
    pub fn browsed(&self) -> Vec<String> {
        std::fs::read_to_string(&self.browser_log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Everything the CLI printed so far.
    pub fn said(&self) -> String {
        std::fs::read_to_string(&self.said).unwrap_or_default()
    }

    /// Adds `name` at `url` and approves it.
    pub fn add_remote(&self, name: &str, url: &str) {
        self.ok(&["server", "add", name, "--url", url]);
        self.ok(&["server", "trust", name, "--yes"]);
    }
}

/// Runs blocking CLI work off the runtime (the fixture lives on it).
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

/// Every token and secret the fixture issued: access, refresh, client secrets.
pub fn canaries(state: &OAuthHandle) -> Vec<String> {
    let mut all = state.access_tokens();
    all.extend(state.refresh_tokens());
    all.extend(state.client_secrets());
    all
}

/// Fails if `text` holds any of `canaries`, naming `what`.
pub fn assert_no_canary(what: &str, text: &str, canaries: &[String]) {
    for c in canaries {
        assert!(!text.contains(c.as_str()), "{what} holds a secret ({c})");
    }
}

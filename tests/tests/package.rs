//! The installable package (issue 14), as a person gets it: Tauri's bundler makes the `.deb`,
//! `apt-get install ./….deb` installs it on this machine, `switchboard --version` answers from
//! the PATH with the version and the commit, the desktop entry (valid, and the handler of
//! `switchboard://` links in the system's MIME cache) and the icons are where a desktop looks
//! for them, the installed app opens its window under Xvfb (screenshot
//! `tests/results/e2e/70-installed-deb.png`), and `apt-get remove` takes every file away again.
//!
//! The bundle is made from the debug build `make test` already has (the bundler's debug mode,
//! which compiles nothing: it packs `target/debug/switchboard-desktop` and the CLI named in the
//! config override below); `make package` makes the release bundles. Installing needs root and
//! apt: without them the test skips, and fails under `SWITCHBOARD_REQUIRE_PEERS=1` (`make
//! test`). Whatever fails, a guard removes the package and the bundle directory, so the machine
//! is left as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::webdriver::Driver;
use switchboard_tests::{node, peer_missing, workspace_bin};

/// The Debian package name (the lower-cased `productName` of tauri.conf.json).
const PACKAGE: &str = "switchboard";
const APP: &str = "/usr/bin/switchboard-desktop";
const CLI: &str = "/usr/bin/switchboard";
const ENTRY: &str = "/usr/share/applications/Switchboard.desktop";
const ICON_DIR: &str = "/usr/share/icons/hicolor";
const MIME_CACHE: &str = "/usr/share/applications/mimeinfo.cache";
/// The sizes in `bundle.icon`, each installed as `<size>x<size>/apps/<Icon>.png`.
const ICON_SIZES: [u32; 3] = [32, 128, 512];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Root and apt, or `None` after saying why (a failure under `SWITCHBOARD_REQUIRE_PEERS=1`).
fn can_install() -> Option<()> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(str::to_owned));
    if euid.as_deref() != Some("0") {
        return peer_missing("installing a .deb needs root (the test runs apt-get install)");
    }
    for tool in ["apt-get", "dpkg", "dpkg-query", "desktop-file-validate"] {
        if !on_path(tool) {
            return peer_missing(&format!("{tool} is not installed"));
        }
    }
    Some(())
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
}

/// The Tauri CLI's entry script, installed in ui/ by `make ui` (`@tauri-apps/cli`).
fn tauri_cli() -> Option<PathBuf> {
    let js = repo_root().join("ui/node_modules/@tauri-apps/cli/tauri.js");
    if js.is_file() {
        Some(js)
    } else {
        peer_missing("the Tauri CLI is not in ui/node_modules/@tauri-apps/cli (`make ui`)")
    }
}

/// Runs a command to the end; panics with its output when it cannot start.
fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn ok(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn apt(args: &[&str]) -> Output {
    run(Command::new("apt-get")
        .args(["-y", "-q", "-o", "DPkg::Lock::Timeout=300"])
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

/// Whether dpkg has the package installed.
fn installed() -> bool {
    let out = run(Command::new("dpkg-query").args(["-W", "-f=${Status}", PACKAGE]));
    String::from_utf8_lossy(&out.stdout).contains("install ok installed")
}

/// The installed package, removed when dropped (a failed test leaves no package behind).
struct Installed {
    removed: bool,
}

impl Installed {
    fn remove(&mut self) {
        self.removed = true;
        ok("apt-get remove", &apt(&["remove", PACKAGE]));
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        if !self.removed {
            let _ = apt(&["remove", PACKAGE]);
        }
    }
}

/// The bundler's output directory (the .deb and its 400 MB staging copy), deleted when dropped.
struct BundleDir(PathBuf);

impl Drop for BundleDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bundles the debug build into a `.deb` with the Tauri CLI; returns the file.
fn bundle_deb(tauri: &Path, out: &BundleDir) -> PathBuf {
    let profile = workspace_bin("switchboard-desktop")
        .parent()
        .unwrap()
        .to_path_buf();
    // The release CLI is what tauri.conf.json packs; here the debug one beside the app.
    let cli = workspace_bin("switchboard");
    let config = serde_json::json!({"bundle": {"linux": {"deb": {"files": {CLI: cli}}}}});
    let _ = std::fs::remove_dir_all(&out.0);
    let bundled = run(Command::new(node())
        .arg(tauri)
        .args(["bundle", "--debug", "--bundles", "deb", "--ci"])
        // Leaves target/debug/switchboard-desktop as it is: other tests run that file.
        .arg("--no-binary-patching")
        .arg("--config")
        .arg(config.to_string())
        .current_dir(repo_root()));
    ok("tauri bundle --debug --bundles deb", &bundled);
    assert_eq!(out.0, profile.join("bundle/deb"));
    let debs: Vec<PathBuf> = std::fs::read_dir(&out.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "one .deb in {}: {debs:?}", out.0.display());
    let name = debs[0].file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        name.starts_with(&format!("Switchboard_{version}_")),
        "{name}"
    );
    debs[0].clone()
}

/// The commit the CLI's build script saw: git's short hash, else SWITCHBOARD_COMMIT, else
/// "unknown" (the same order as src-tauri/crates/buildinfo/build.rs).
fn expected_commit() -> String {
    let git = Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(repo_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    git.or_else(|| std::env::var("SWITCHBOARD_COMMIT").ok())
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// The `key=value` lines of a desktop entry's `[Desktop Entry]` group.
fn desktop_entry(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip_while(|l| l.trim() != "[Desktop Entry]")
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn key<'a>(entry: &'a [(String, String)], k: &str) -> &'a str {
    entry
        .iter()
        .find(|(key, _)| key == k)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("the desktop entry has no {k}: {entry:?}"))
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "{} is not a PNG",
        path.display()
    );
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

/// The desktop file that handles `switchboard://` links in the MIME cache that
/// desktop-file-utils' dpkg trigger rebuilds when a package adds or removes a desktop entry.
fn link_handler() -> Option<String> {
    let cache = std::fs::read_to_string(MIME_CACHE).unwrap_or_default();
    cache
        .lines()
        .find_map(|l| l.strip_prefix("x-scheme-handler/switchboard="))
        .map(|v| v.trim_end_matches(';').to_owned())
}

/// Checks the desktop entry, what it runs and its icons; returns the icon files.
fn check_desktop_entry(files: &[PathBuf]) -> Vec<PathBuf> {
    let valid = run(Command::new("desktop-file-validate").arg(ENTRY));
    ok(
        "desktop-file-validate (desktop-file-utils, `make deps`)",
        &valid,
    );
    assert_eq!(
        link_handler().as_deref(),
        Some("Switchboard.desktop"),
        "{MIME_CACHE} does not send switchboard:// links to the app"
    );
    let text = std::fs::read_to_string(ENTRY).unwrap_or_else(|e| panic!("{ENTRY}: {e}"));
    let entry = desktop_entry(&text);
    assert_eq!(key(&entry, "Type"), "Application", "{text}");
    assert_eq!(key(&entry, "Name"), "Switchboard", "{text}");
    // The app, by a name the PATH finds, with the link it was opened for (%u).
    let exec: Vec<&str> = key(&entry, "Exec").split_whitespace().collect();
    assert_eq!(
        exec.first().map(|e| Path::new("/usr/bin").join(e)),
        Some(APP.into())
    );
    assert!(exec.contains(&"%u"), "Exec does not pass the link: {text}");
    assert!(
        key(&entry, "MimeType")
            .split(';')
            .any(|m| m == "x-scheme-handler/switchboard"),
        "switchboard:// links are not registered: {text}"
    );
    let icon = key(&entry, "Icon");
    ICON_SIZES
        .iter()
        .map(|&n| {
            let p = Path::new(ICON_DIR).join(format!("{n}x{n}/apps/{icon}.png"));
            assert!(files.contains(&p), "{} is not in the package", p.display());
            assert_eq!(png_size(&p), (n, n), "{}", p.display());
            p
        })
        .collect()
}

/// Whether a process runs the file `exe` (the installed app, not the build tree's).
fn running(exe: &str) -> bool {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten().any(|p| {
                std::fs::read_link(p.path().join("exe")).is_ok_and(|l| l == Path::new(exe))
            })
        })
        .unwrap_or(false)
}

/// Opens the installed app on a throwaway data directory and takes a screenshot.
async fn open_installed_app() {
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data.as_path())])
        .await
        .unwrap();
    let s = driver.session(Path::new(APP)).await.unwrap();
    // The first-run screen: the page asked the installed app's host for its (empty) server list.
    s.wait_text(".empty", "No servers yet", Duration::from_secs(60))
        .await
        .unwrap();
    assert!(running(APP), "no process runs {APP}");
    // Reading the laid-out text also lets the window paint it before the screenshot.
    let text = s.execute("return document.body.innerText").await.unwrap();
    assert!(
        text.as_str()
            .unwrap_or_default()
            .contains("Add the sample server"),
        "{text}"
    );
    let shot = artifacts().join("70-installed-deb.png");
    s.screenshot(&shot).await.unwrap();
    assert!(png_size(&shot).0 > 0);
    s.close().await.unwrap();
    assert!(
        data.join("switchboard.sqlite").is_file(),
        "the installed app did not use its SWITCHBOARD_DATA_DIR"
    );
}

#[tokio::test]
async fn the_deb_installs_runs_and_removes_cleanly() {
    let (Some(()), Some(tauri)) = (can_install(), tauri_cli()) else {
        return;
    };
    let profile = workspace_bin("switchboard").parent().unwrap().to_path_buf();
    let out = BundleDir(profile.join("bundle/deb"));
    let deb = bundle_deb(&tauri, &out);
    if installed() {
        eprintln!("note: {PACKAGE} was installed before the test; it is replaced and removed");
    }

    let mut package = Installed { removed: false };
    ok(
        "apt-get install",
        &apt(&["install", &deb.to_string_lossy()]),
    );
    assert!(
        installed(),
        "dpkg does not list {PACKAGE} after apt-get install"
    );
    let listed = ok("dpkg -L", &run(Command::new("dpkg").args(["-L", PACKAGE])));
    let files: Vec<PathBuf> = listed
        .lines()
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .collect();
    for f in [APP, CLI, ENTRY] {
        assert!(
            files.contains(&PathBuf::from(f)),
            "{f} is not in the package: {files:?}"
        );
    }

    // The CLI from the PATH: the version and the commit, the same as the build tree's.
    let version = ok(
        "switchboard --version",
        &run(Command::new("switchboard")
            .arg("--version")
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")),
    );
    let want = format!(
        "switchboard {} ({})",
        env!("CARGO_PKG_VERSION"),
        expected_commit()
    );
    assert_eq!(
        version.trim(),
        want,
        "a stale build? run `cargo build --workspace --all-targets` first"
    );
    let built = ok(
        "target/debug/switchboard --version",
        &run(Command::new(workspace_bin("switchboard")).arg("--version")),
    );
    assert_eq!(version, built);
    // And it works: an empty server list from a fresh data directory.
    let data = tempfile::tempdir().unwrap();
    let list = ok(
        "switchboard server list --json",
        &run(Command::new(CLI)
            .args(["--json", "server", "list"])
            .env("SWITCHBOARD_DATA_DIR", data.path())),
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&list).unwrap(),
        serde_json::json!([]),
        "{list}"
    );

    let icons = check_desktop_entry(&files);
    if e2e_available() {
        open_installed_app().await;
    }

    package.remove();
    assert!(
        !installed(),
        "dpkg still lists {PACKAGE} after apt-get remove"
    );
    assert_eq!(link_handler(), None, "switchboard:// still has a handler");
    for f in files.iter().chain(&icons) {
        assert!(
            !f.exists(),
            "{} is still there after apt-get remove",
            f.display()
        );
    }
}

//! A minimal W3C WebDriver client for the end-to-end tests: enough to drive the real app window
//! through `tauri-driver` (which forwards to WebKitWebDriver): create a session for the app
//! binary, find elements by CSS, click, read text, take screenshots.
//!
//! Hand-written over `reqwest` (already a dependency) instead of pulling a full client crate:
//! the tests need six endpoints.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine;
use serde_json::{json, Value};

mod scripts;

/// A running `tauri-driver` with its own port, killed on drop.
pub struct Driver {
    _child: crate::KillGroupOnDrop,
    port: u16,
}

/// Where `tauri-driver` is: `SWITCHBOARD_TAURI_DRIVER`, `.tools/cargo/bin`, or PATH.
pub fn tauri_driver() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SWITCHBOARD_TAURI_DRIVER") {
        return Some(PathBuf::from(p));
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/cargo/bin/tauri-driver");
    if local.exists() {
        return Some(local);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("tauri-driver"))
            .find(|p| p.exists())
    })
}

impl Driver {
    /// Starts `tauri-driver` on free ports; `env` goes to the app it launches.
    pub async fn start(env: &[(&str, &Path)]) -> Result<Self> {
        let bin = tauri_driver().context("tauri-driver is not installed (run `make deps`)")?;
        let (port, native) = (crate::free_port(), crate::free_port());
        let mut cmd = std::process::Command::new(bin);
        crate::group_command(&mut cmd)
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native.to_string(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = crate::KillGroupOnDrop(cmd.spawn().context("could not start tauri-driver")?);
        // tauri-driver listens at once but forwards `POST /session` to the
        // WebKitWebDriver it spawned; asked before that one listens, it drops
        // the connection ("connection closed before message completed") and
        // no app starts. Waiting for both ports closes that race.
        let up = crate::eventually(Duration::from_secs(20), || {
            [port, native]
                .iter()
                .all(|p| std::net::TcpStream::connect(("127.0.0.1", *p)).is_ok())
        })
        .await;
        if !up {
            bail!("tauri-driver did not listen on {port} (native driver on {native})");
        }
        Ok(Self {
            _child: child,
            port,
        })
    }

    /// Opens the app.
    pub async fn session(&self, app: &Path) -> Result<Session> {
        let base = format!("http://127.0.0.1:{}", self.port);
        let http = reqwest::Client::new();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "tauri:options": {"application": app.to_string_lossy()}
        }}});
        let v: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await?
            .json()
            .await?;
        let id = v
            .pointer("/value/sessionId")
            .and_then(Value::as_str)
            .with_context(|| format!("no session: {v}"))?
            .to_owned();
        Ok(Session {
            http,
            url: format!("{base}/session/{id}"),
        })
    }
}

/// Where a click landed.
enum Landed {
    /// On the element asked for (or one matching the same selector).
    Hit,
    /// Elsewhere, or nowhere: what was clicked instead.
    Missed(String),
}

/// A WebDriver session on the app window.
pub struct Session {
    http: reqwest::Client,
    url: String,
}

impl Session {
    async fn call(&self, method: reqwest::Method, path: &str, body: Value) -> Result<Value> {
        let req = self.http.request(method, format!("{}{path}", self.url));
        let req = if body.is_null() { req } else { req.json(&body) };
        let v: Value = req.send().await?.json().await?;
        if let Some(err) = v.pointer("/value/error") {
            bail!(
                "webdriver {path}: {err} {}",
                v.pointer("/value/message").unwrap_or(&Value::Null)
            );
        }
        Ok(v["value"].clone())
    }

    /// Every element matching a CSS selector.
    pub async fn find_all(&self, css: &str) -> Result<Vec<String>> {
        let v = self
            .call(
                reqwest::Method::POST,
                "/elements",
                json!({"using": "css selector", "value": css}),
            )
            .await?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_object()?.values().next()?.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Waits until an element matching `css` exists and returns its id. The page re-renders
    /// on every host event, so a lookup that races a re-render is simply retried.
    pub async fn wait_for(&self, css: &str, timeout: Duration) -> Result<String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Ok(Some(id)) = self.find_all(css).await.map(|v| v.into_iter().next()) {
                return Ok(id);
            }
            if std::time::Instant::now() > deadline {
                bail!(
                    "no element matches {css} after {timeout:?}\n{}",
                    self.describe().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the text of the first element matching `css` contains `needle`.
    pub async fn wait_text(&self, css: &str, needle: &str, timeout: Duration) -> Result<String> {
        let deadline = std::time::Instant::now() + timeout;
        let mut last = String::new();
        loop {
            if let Ok(Some(id)) = self.find_all(css).await.map(|v| v.into_iter().next()) {
                last = self.text(&id).await.unwrap_or_default();
                if last.contains(needle) {
                    return Ok(last);
                }
            }
            if std::time::Instant::now() > deadline {
                bail!(
                    "{css} never contained {needle:?}; last text: {last:?}\n{}",
                    self.describe().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The rendered text of an element.
    pub async fn text(&self, element: &str) -> Result<String> {
        let v = self
            .call(
                reqwest::Method::GET,
                &format!("/element/{element}/text"),
                Value::Null,
            )
            .await?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }

    /// Finds the first element matching `css` and clicks it, once it stands still. Retried
    /// when a re-render made the element stale between the lookup and the click, and when the
    /// click did not reach an element matching `css`: the page moved it between the point
    /// WebDriver computed and the press (a line filled in above it), or rebuilt it between the
    /// press and the release. A person would click again; so does this, saying so on stderr.
    pub async fn click_on(&self, css: &str, timeout: Duration) -> Result<()> {
        let deadline = std::time::Instant::now() + timeout;
        let mut misses = Vec::new();
        loop {
            let id = self.wait_for(css, timeout).await?;
            match self.click_landing(&id, Some(css)).await {
                Ok(Landed::Hit) => return Ok(()),
                Ok(Landed::Missed(why)) => {
                    eprintln!("e2e: a click on {css} missed ({why}); clicking again");
                    misses.push(why);
                    if misses.len() >= 3 || std::time::Instant::now() > deadline {
                        bail!(
                            "every click on {css} missed: {}\n{}",
                            misses.join("; "),
                            self.describe().await
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e)
                    if std::time::Instant::now() < deadline && e.to_string().contains("stale") =>
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Clicks an element once it stands still (see [`click_landing`](Self::click_landing)).
    pub async fn click(&self, element: &str) -> Result<()> {
        self.click_landing(element, None).await.map(|_| ())
    }

    /// Waits until the element stops moving, as a person's eye would before a click, then
    /// clicks it and says where the click landed. Cards and panes fill in lines (a cost, a
    /// sparkline) after they are drawn; WebDriver computes the point it clicks before it
    /// presses, and a line filled in between moves the element from under that point. The
    /// page also gets a trace of the presses and clicks it receives, which a failed wait
    /// prints ([`Session::describe`]).
    async fn click_landing(&self, element: &str, css: Option<&str>) -> Result<Landed> {
        let target = json!({ scripts::ELEMENT_KEY: element });
        // A page that cannot run them still gets the click, once, unchecked.
        let armed = self
            .call(
                reqwest::Method::POST,
                "/execute/async",
                json!({"script": scripts::settle_and_arm(), "args": [target, css]}),
            )
            .await
            .is_ok();
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            json!({}),
        )
        .await?;
        if !armed {
            return Ok(Landed::Hit);
        }
        // The click's handlers ran before WebDriver answered; a few reads cover a slow page.
        for _ in 0..5 {
            match self.execute(scripts::LANDED).await {
                Ok(Value::String(s)) if s == "hit" => return Ok(Landed::Hit),
                Ok(Value::String(s)) => return Ok(Landed::Missed(s)),
                Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                // The click closed or navigated the page: it landed.
                Err(_) => return Ok(Landed::Hit),
            }
        }
        let quiet = self
            .execute(&format!(
                "const e = document.querySelector({}); return !e || e.disabled === true;",
                serde_json::to_string(css.unwrap_or("#no-such-element"))?
            ))
            .await;
        // A disabled button takes no click, by design; nothing to retry.
        Ok(match (css, quiet) {
            (Some(_), Ok(Value::Bool(false))) => Landed::Missed("no click event".into()),
            _ => Landed::Hit,
        })
    }

    /// Types text into an input or textarea.
    pub async fn type_text(&self, element: &str, text: &str) -> Result<()> {
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            json!({"text": text}),
        )
        .await
        .map(|_| ())
    }

    /// Replaces the value of the first input matching `css` and fires `input`, as typing would.
    pub async fn set_value(&self, css: &str, value: &str) -> Result<()> {
        let script = format!(
            "const i = document.querySelector({}); i.value = {}; i.dispatchEvent(new Event('input', {{ bubbles: true }})); return 1;",
            serde_json::to_string(css)?,
            serde_json::to_string(value)?
        );
        self.execute(&script).await.map(|_| ())
    }

    /// Runs a script in the page and returns its result.
    pub async fn execute(&self, script: &str) -> Result<Value> {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
        .await
    }

    /// What the window shows, for a failed wait's message: the page, open dialogs, visible
    /// errors, the last presses and clicks with their targets, and the start of the page's text.
    /// A flake seen only in CI is then explained by its log.
    pub async fn describe(&self) -> String {
        match self.execute(scripts::DESCRIBE).await {
            Ok(v) => format!("the window then:\n{}", v.as_str().unwrap_or_default()),
            Err(e) => format!("the window could not be described: {e}"),
        }
    }

    /// The page's current URL.
    pub async fn url(&self) -> Result<String> {
        let v = self.call(reqwest::Method::GET, "/url", Value::Null).await?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }

    /// Saves a PNG screenshot of the window.
    pub async fn screenshot(&self, path: &Path) -> Result<()> {
        let v = self
            .call(reqwest::Method::GET, "/screenshot", Value::Null)
            .await?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .context("screenshot is not base64")?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, png)?;
        Ok(())
    }

    /// Ends the session (closes the app).
    pub async fn close(self) -> Result<()> {
        self.http.delete(&self.url).send().await?;
        Ok(())
    }
}

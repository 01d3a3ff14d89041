//! `fake-browser <url>`: a stand-in for the system browser in sign-in tests, given to the app
//! through `SWITCHBOARD_BROWSER`.
//!
//! It does what a person with an already signed-in browser does: open the authorization URL,
//! let the authorization server's auto-consent redirect it, and land on the app's loopback
//! redirect page. Redirects are followed by hand (up to 10 hops, to any host, loopback
//! included) so the log can name where it started; it sends no cookies and runs no scripts.
//!
//! It prints nothing on stdout (the app may read its output). When `FAKE_BROWSER_LOG` names a
//! file, it appends one line: `<url> <final status>` (or `<url> refused` / `<url> error: ...`).
//! Exit status: 0 when the last answer was 2xx, 1 otherwise.
//!
//! `FAKE_BROWSER_MODE=refuse` logs and exits 0 without fetching: the person who closed the tab.

use std::io::Write;
use std::process::ExitCode;

/// Redirect hops followed before giving up.
const MAX_HOPS: usize = 10;

fn log(line: &str) {
    let Some(path) = std::env::var_os("FAKE_BROWSER_LOG") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Follows redirects from `start`; returns the final status.
async fn browse(start: &str) -> anyhow::Result<reqwest::StatusCode> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(std::time::Duration::from_secs(30))
        .build()?;
    let mut url = reqwest::Url::parse(start)?;
    for _ in 0..=MAX_HOPS {
        let resp = client.get(url.clone()).send().await?;
        let status = resp.status();
        if !status.is_redirection() {
            return Ok(status);
        }
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| anyhow::anyhow!("{status} without a Location"))?;
        url = url.join(location)?;
    }
    anyhow::bail!("more than {MAX_HOPS} redirects")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: fake-browser <url>");
        return ExitCode::from(2);
    };
    if std::env::var("FAKE_BROWSER_MODE").as_deref() == Ok("refuse") {
        log(&format!("{url} refused"));
        return ExitCode::SUCCESS;
    }
    match browse(&url).await {
        Ok(status) => {
            log(&format!("{url} {}", status.as_u16()));
            if status.is_success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            log(&format!("{url} error: {e:#}"));
            eprintln!("fake-browser: {e:#}");
            ExitCode::from(1)
        }
    }
}

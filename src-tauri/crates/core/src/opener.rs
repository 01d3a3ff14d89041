//! The one way Switchboard opens a URL in the system browser (RN-02): elicitation URLs (AP-07)
//! now, links and OAuth later.
//!
//! Only a [`CheckedUrl`] can be opened: [`check`] (the `url_check` leaf, re-exported here) runs
//! before anything is displayed as openable. Nothing is fetched here, ever (no prefetch, no
//! favicon).
//!
//! [`open`] hands a checked URL to the platform's browser launcher (the `webbrowser` crate,
//! which starts the browser directly, never through a shell), or to a program the host was
//! configured with (tests use one that records what it was given).

use std::path::Path;

pub use crate::url_check::{check, CheckedUrl, UrlRefusal, MAX_URL};

/// Opens a checked URL: with `browser` when given (a program taking the URL as its only
/// argument), else with the platform's default browser.
pub fn open(url: &CheckedUrl, browser: Option<&Path>) -> std::io::Result<()> {
    match browser {
        Some(program) => {
            let mut child = std::process::Command::new(program)
                .arg(&url.url)
                .stdin(std::process::Stdio::null())
                .spawn()?;
            // Reaped on a thread of its own, so no zombie is left until the app exits.
            std::thread::spawn(move || child.wait());
            Ok(())
        }
        None => webbrowser::open(&url.url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_browser_gets_the_url_as_one_argument() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("opened");
        let script = dir.path().join("browser.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nprintf '%s' \"$1\" > {}\n", out.display()),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            let url = check("https://example.com/a?b=c&d=$(id)").unwrap();
            open(&url, Some(&script)).unwrap();
            for _ in 0..100 {
                if out.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert_eq!(std::fs::read_to_string(&out).unwrap(), url.url);
        }
    }
}

//! The browser stand-in for an in-process host's sign-in ([`FollowRedirect`]): what a person's
//! browser does with the authorization page of [`super::FakeOAuth`] (auto-consent), without a
//! browser. The CLI tests use the `fake-browser` binary instead, for the same job in another
//! process.

use std::sync::atomic::{AtomicUsize, Ordering};

use switchboard_core::oauth::{Handoff, StepEvent};
use switchboard_core::url_check::CheckedUrl;

/// Fetches the authorization page and delivers its redirect to the host's loopback listener,
/// as a browser would. Counts the pages it opened ([`FollowRedirect::opened`]).
#[derive(Default)]
pub struct FollowRedirect {
    opened: AtomicUsize,
}

impl FollowRedirect {
    /// How many authorization pages it opened.
    pub fn opened(&self) -> usize {
        self.opened.load(Ordering::SeqCst)
    }
}

#[async_trait::async_trait]
impl Handoff for FollowRedirect {
    fn step(&self, _event: StepEvent) {}

    async fn open(&self, url: &CheckedUrl) -> Result<(), String> {
        self.opened.fetch_add(1, Ordering::SeqCst);
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| e.to_string())?;
        let answer = client
            .get(&url.url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let location = answer
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("{} without a redirect", answer.status()))?
            .to_owned();
        tokio::spawn(async move {
            let _ = client.get(&location).send().await;
        });
        Ok(())
    }
}

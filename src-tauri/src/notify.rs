//! Approvals that reach the person (issue 14, point 6): the window title and the tray say how
//! many requests wait, and a request that arrives while the window is not focused raises a
//! desktop notification; clicking it brings the window, and with it the dialog, to the front.
//!
//! The core decides what waits and what to say ([`Host::attention`], [`Announced`]); this
//! file only watches the host's events and shows the result. It listens on its own
//! subscription, so the web view's event loop in `main.rs` is untouched.
//!
//! Notifications go over D-Bus (`org.freedesktop.Notifications`) through `notify-rust`, not
//! `tauri-plugin-notification`: the plugin's desktop side shows a notification and drops its
//! handle (no actions, no click), while `notify-rust` sends a default action and waits for
//! `ActionInvoked` asynchronously. No notification daemon (a bare session) is logged once and
//! otherwise ignored: the title and the tray still count.

use switchboard_core::events::HostEvent;
use switchboard_core::host::{Announced, Attention, Host, Notice, Waiter};
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::tray::Tray;

/// The action a click on the notification's body invokes (the spec's name for it).
const DEFAULT_ACTION: &str = "default";

/// Watches the host for waiting requests for as long as the app runs.
pub fn watch<R: Runtime>(app: &AppHandle<R>, host: Host) {
    let mut watcher = Watcher {
        tray: Tray::create(app),
        app: app.clone(),
        announced: Announced::default(),
        daemon_missing_logged: false,
        waiting: watch::channel(0).0,
    };
    let mut events = host.subscribe();
    tauri::async_runtime::spawn(async move {
        watcher.refresh(&host);
        loop {
            match events.recv().await {
                Ok(HostEvent::ApprovalsChanged | HostEvent::QuestionsChanged)
                | Err(RecvError::Lagged(_)) => {}
                Ok(_) => continue,
                Err(RecvError::Closed) => break,
            }
            watcher.refresh(&host);
        }
    });
}

/// What the watching task keeps between two looks.
struct Watcher<R: Runtime> {
    app: AppHandle<R>,
    tray: Option<Tray<R>>,
    announced: Announced,
    daemon_missing_logged: bool,
    /// How many requests wait; a notification still up is withdrawn when this reaches 0.
    waiting: watch::Sender<usize>,
}

impl<R: Runtime> Watcher<R> {
    /// Shows the current count and announces what is new, when the person is elsewhere.
    fn refresh(&mut self, host: &Host) {
        let now = host.attention();
        let fresh: Vec<Waiter> = self.announced.fresh(&now).into_iter().cloned().collect();
        self.waiting.send_replace(now.count());
        let window = self.app.get_webview_window("main");
        if let Some(w) = &window {
            if let Err(e) = w.set_title(&now.title()) {
                tracing::debug!(error = %e, "could not set the window title");
            }
        }
        if let Some(t) = &self.tray {
            t.show(&now);
        }
        if fresh.is_empty() {
            return;
        }
        // Asked only when something is new: the answer comes from the window's own thread.
        let focused = window
            .as_ref()
            .and_then(|w| w.is_focused().ok())
            .unwrap_or(false);
        if focused {
            return;
        }
        let notice = summary_notice(&now, &fresh);
        let app = self.app.clone();
        let log_missing = !self.daemon_missing_logged;
        self.daemon_missing_logged = true;
        let waiting = self.waiting.subscribe();
        tauri::async_runtime::spawn(async move { notify(app, notice, log_missing, waiting).await });
    }
}

/// One notification for what arrived: the request itself, or a count when several came at
/// once (a batch of tool calls must not become a pile of bubbles).
fn summary_notice(now: &Attention, fresh: &[Waiter]) -> Notice {
    match fresh {
        [one] => one.notice(),
        _ => Notice {
            summary: format!("{} requests need your attention", fresh.len()),
            body: format!("{} Click to review them in Switchboard.", now.status_line()),
        },
    }
}

/// Raises the notification and, when it is clicked, brings the window to the front.
async fn notify<R: Runtime>(
    app: AppHandle<R>,
    notice: Notice,
    log_missing: bool,
    mut waiting: watch::Receiver<usize>,
) {
    let shown = notify_rust::Notification::new()
        .appname("Switchboard")
        .summary(&notice.summary)
        .body(&Notice::markup_escaped(&notice.body))
        .icon("dialog-question")
        .action(DEFAULT_ACTION, "Review")
        .show_async()
        .await;
    let handle = match shown {
        Ok(h) => h,
        Err(e) => {
            if log_missing {
                tracing::warn!(error = %e, "no desktop notifications (is a notification daemon running?)");
            }
            return;
        }
    };
    tracing::info!(
        id = handle.id(),
        "raised a notification for a waiting request"
    );
    let clicked = handle.wait_for_action_async(|response| {
        if matches!(
            response,
            notify_rust::NotificationResponse::Default
                | notify_rust::NotificationResponse::Action(_)
        ) {
            focus_window(&app);
        }
    });
    // Everything answered in the window (or elsewhere): the notification has nothing left to
    // point at, so it is withdrawn, and this task ends instead of waiting for a click forever.
    let all_answered = async {
        // The guard `wait_for` returns is dropped here, before anything else is awaited.
        waiting.wait_for(|n| *n == 0).await.is_ok()
    };
    let answered = tokio::select! {
        _ = clicked => false,
        answered = all_answered => answered,
    };
    if answered {
        handle.close_async().await;
    }
}

/// Shows, unminimizes and focuses the main window; the dialog is modal in it.
pub fn focus_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window("main") else {
        return;
    };
    let _ = w.show();
    let _ = w.unminimize();
    if let Err(e) = w.set_focus() {
        tracing::warn!(error = %e, "could not focus the window");
    }
}

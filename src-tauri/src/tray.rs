//! The tray (status) icon: how many requests wait, and a way back to the window.
//!
//! On Linux Tauri's tray is an AppIndicator (`libayatana-appindicator3`, loaded at run time).
//! A desktop without a tray, or a machine without the library, must not cost the app its
//! window: creating the tray can fail, or panic inside the loader, and either way the app
//! carries on without it and says so once in the log.

use switchboard_core::host::Attention;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Runtime};

/// The menu item that brings the window back.
const SHOW_ID: &str = "tray-show";

/// The tray icon and the menu line that counts what waits.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    line: MenuItem<R>,
}

impl<R: Runtime> Tray<R> {
    /// Creates the tray, or `None` (logged) where there can be none.
    pub fn create(app: &AppHandle<R>) -> Option<Self> {
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Self::build(app)));
        match built {
            Ok(Ok(tray)) => Some(tray),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "no tray icon; the window title still counts waiting requests");
                None
            }
            Err(_) => {
                tracing::warn!("no tray icon (the AppIndicator library could not be loaded); the window title still counts waiting requests");
                None
            }
        }
    }

    fn build(app: &AppHandle<R>) -> tauri::Result<Self> {
        let line = MenuItem::with_id(app, "tray-waiting", "Nothing waiting", false, None::<&str>)?;
        let show = MenuItem::with_id(app, SHOW_ID, "Show Switchboard", true, None::<&str>)?;
        let menu = Menu::with_items(app, &[&line, &show])?;
        let mut builder = TrayIconBuilder::with_id("switchboard")
            .menu(&menu)
            .tooltip("Switchboard")
            .on_menu_event(|app, event| {
                if event.id().as_ref() == SHOW_ID {
                    crate::notify::focus_window(app);
                }
            });
        if let Some(icon) = app.default_window_icon() {
            builder = builder.icon(icon.clone());
        }
        let icon = builder.build(app)?;
        Ok(Self { icon, line })
    }

    /// Shows the count: in the menu, the tooltip and (where the tray has one) the label.
    pub fn show(&self, now: &Attention) {
        let text = now.status_line();
        let label = match now.count() {
            0 => None,
            n => Some(n.to_string()),
        };
        let results = [
            self.line.set_text(&text),
            self.icon.set_tooltip(Some(format!("Switchboard: {text}"))),
            self.icon.set_title(label),
        ];
        for r in results {
            if let Err(e) = r {
                tracing::debug!(error = %e, "could not update the tray");
            }
        }
    }
}

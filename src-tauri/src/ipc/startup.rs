//! Why the app could not start, for the window to say (ST-04).
//!
//! When the host cannot open the data directory (a damaged database, a database from a newer
//! Switchboard), the app still opens its window, with no host behind it, and the web view
//! shows this message instead of the pages: the same sentence the CLI prints, naming the file
//! and the ways out. Every other command needs the host and is refused in that state.

use tauri::State;

/// The reason the host is missing; `None` when it started.
#[derive(Debug, Default)]
pub struct StartupProblem(pub Option<String>);

/// Fired once by the window when its first page is on screen; what waits for it (the servers
/// kept always on, `main.rs`) starts then, so it does not compete with the first render.
#[derive(Debug, Default)]
pub struct FirstRender(pub std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>);

/// The window drew its first page: background work held for it may start. Idempotent.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn window_ready(first: State<'_, FirstRender>) {
    let sender = first
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(sender) = sender {
        let _ = sender.send(());
    }
}

/// Why Switchboard could not open its data, or `null` when it did.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn startup_problem(problem: State<'_, StartupProblem>) -> Option<String> {
    problem.0.clone()
}

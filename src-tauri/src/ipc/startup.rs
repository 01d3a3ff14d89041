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

/// Why Switchboard could not open its data, or `null` when it did.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub fn startup_problem(problem: State<'_, StartupProblem>) -> Option<String> {
    problem.0.clone()
}

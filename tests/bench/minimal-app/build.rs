//! Generates the Tauri context (config, embedded page, icon) for the minimal app.
fn main() {
    tauri_build::build();
}

//! The minimal Tauri 2 app of the desktop benchmark (scripts/bench-desktop.sh): one window, one
//! static page, no commands, no plugins. Its idle memory is the floor of the stack Switchboard
//! runs on (tauri + wry + WebKitGTK).
#![deny(unsafe_code)]

fn main() {
    if let Err(e) = tauri::Builder::default().run(tauri::generate_context!()) {
        eprintln!("minimal app: {e}");
        std::process::exit(1);
    }
}

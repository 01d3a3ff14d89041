//! Build script for the desktop shell: Tauri's codegen, with capabilities kept under
//! `src-tauri/` although `tauri.conf.json` sits at the repository root.
fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*"),
    )
    .unwrap_or_else(|e| panic!("tauri build step failed: {e:#}"));
}

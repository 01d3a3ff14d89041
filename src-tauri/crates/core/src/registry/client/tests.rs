use super::*;

#[test]
fn the_cache_keeps_only_the_newest_files() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..10 {
        std::fs::write(dir.path().join(format!("{i}.json")), "{}").unwrap();
        let t = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 + i);
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join(format!("{i}.json")))
            .unwrap();
        f.set_modified(t).unwrap();
    }
    std::fs::write(dir.path().join("other.txt"), "x").unwrap();
    prune(dir.path(), 4);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["6.json", "7.json", "8.json", "9.json", "other.txt"]);
}

#[test]
fn endpoints_keep_a_base_path_and_encode_the_name() {
    let c = RegistryClient::new("https://example.com/mirror/", ClientOptions::default()).unwrap();
    let u = c.endpoint(&["v0.1", "servers", "io.x/a b", "versions", "latest"]);
    assert_eq!(
        u.as_str(),
        "https://example.com/mirror/v0.1/servers/io.x%2Fa%20b/versions/latest"
    );
}

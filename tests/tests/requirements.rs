//! The requirement map stays true: every `XX-NN` tag the code cites is defined in
//! `docs/requirements.md`, and every test that file names still exists.
//!
//! Why a test and not a convention: tags are how issues, commits and code comments point at
//! what must hold. A tag that is defined nowhere in the repository sends the next engineer
//! looking outside it, and a "shown by" that names a deleted test is a promise nobody keeps.
//! The scan is plain string work (no regex crate for one pattern), over the same folders the
//! product's code lives in.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The groups a requirement tag may start with.
const GROUPS: &[&str] = &[
    "SP", "TD", "AP", "RN", "AU", "SE", "TA", "RL", "FZ", "ST", "OB", "RD", "LK", "GW", "OR",
];

/// The folders whose files may cite tags.
const ROOTS: &[&str] = &["src-tauri", "tests", "ui/src", "scripts"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every tag in `text`: a known group, `-`, two digits, not inside a longer word.
fn tags_in(text: &str) -> BTreeSet<String> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut found = BTreeSet::new();
    for i in 0..b.len().saturating_sub(4) {
        let tag = &b[i..i + 5];
        let shape = tag[0].is_ascii_uppercase()
            && tag[1].is_ascii_uppercase()
            && tag[2] == b'-'
            && tag[3].is_ascii_digit()
            && tag[4].is_ascii_digit();
        let bounded = (i == 0 || !word(b[i - 1])) && b.get(i + 5).is_none_or(|c| !word(*c));
        let tag = std::str::from_utf8(tag).unwrap_or_default();
        if shape && bounded && GROUPS.contains(&&tag[..2]) {
            found.insert(tag.to_owned());
        }
    }
    found
}

/// The source files under `dir` (build output and installed packages left out).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "node_modules" | "dist" | "results"
            ) {
                sources(&p, out);
            }
        } else if [".rs", ".ts", ".py", ".sh", ".js"]
            .iter()
            .any(|x| name.ends_with(x))
        {
            out.push(p);
        }
    }
}

/// Each tag the code cites, with the files that cite it.
fn cited() -> BTreeMap<String, Vec<PathBuf>> {
    let root = repo();
    let mut files = Vec::new();
    for dir in ROOTS {
        sources(&root.join(dir), &mut files);
    }
    let mut map: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for t in tags_in(&text) {
            map.entry(t).or_default().push(f.clone());
        }
    }
    map
}

/// The tags `doc` defines (`- **XX-NN** — ... Shown by: `a`, `b`.`), each with its tests.
fn defined(doc: &str) -> BTreeMap<String, Vec<String>> {
    let mut map = BTreeMap::new();
    for line in doc.lines() {
        let Some(rest) = line.strip_prefix("- **") else {
            continue;
        };
        let Some((tag, body)) = rest.split_once("**") else {
            continue;
        };
        let refs = body
            .split_once("Shown by:")
            .map(|(_, r)| r.split('`').skip(1).step_by(2).map(str::to_owned).collect())
            .unwrap_or_default();
        map.insert(tag.to_owned(), refs);
    }
    map
}

/// Why `reference` does not show `tag`, if it does not.
fn broken(tag: &str, reference: &str) -> Option<String> {
    let (path, name) = match reference.split_once("::") {
        Some((p, n)) => (p, Some(n)),
        None => (reference, None),
    };
    let Ok(text) = std::fs::read_to_string(repo().join(path)) else {
        return Some(format!("{tag}: {path} does not exist"));
    };
    let has_tests = ["#[test]", "#[tokio::test", "proptest!", "it(\"", "test(\""]
        .iter()
        .any(|m| text.contains(m));
    match name {
        Some(n) if path.ends_with(".rs") && !text.contains(&format!("fn {n}(")) => {
            Some(format!("{tag}: {path} has no test fn {n}"))
        }
        Some(n) if !path.ends_with(".rs") && !text.contains(&format!("\"{n}\"")) => {
            Some(format!("{tag}: {path} has no test \"{n}\""))
        }
        None if !tags_in(&text).contains(tag) => Some(format!("{tag}: {path} does not cite it")),
        _ if !has_tests => Some(format!("{tag}: {path} holds no test")),
        _ => None,
    }
}

/// Everything wrong between what the code cites and what `doc` defines.
fn problems(cited: &BTreeMap<String, Vec<PathBuf>>, doc: &str) -> Vec<String> {
    let defs = defined(doc);
    let mut out = Vec::new();
    for (tag, files) in cited {
        if !defs.contains_key(tag) {
            out.push(format!(
                "{tag} is cited (e.g. {}) but not defined",
                files[0].display()
            ));
        }
    }
    for (tag, refs) in &defs {
        if refs.is_empty() {
            out.push(format!("{tag}: no test named"));
        }
        out.extend(refs.iter().filter_map(|r| broken(tag, r)));
    }
    out
}

#[test]
fn every_cited_requirement_is_defined_with_tests_that_exist() {
    let doc = std::fs::read_to_string(repo().join("docs/requirements.md")).unwrap();
    let cited = cited();
    assert!(cited.len() > 50, "the scan found too few tags: {cited:?}");
    let found = problems(&cited, &doc);
    assert!(
        found.is_empty(),
        "docs/requirements.md is out of step with the code:\n{}",
        found.join("\n")
    );
}

/// The check can fail: an undefined tag, a missing file, a renamed test and a tag-less file
/// are each reported, and a tag inside a longer word is no tag.
#[test]
fn the_check_reports_what_is_missing() {
    assert_eq!(
        tags_in("SP-01, (RD-03) XSP-02 SP-033 ZZ-01 SP-4"),
        ["RD-03", "SP-01"].map(String::from).into()
    );
    let cited: BTreeMap<String, Vec<PathBuf>> =
        [("SP-01".to_owned(), vec![PathBuf::from("x.rs")])].into();
    let doc = "- **RD-01** — text. Shown by: `tests/tests/nope.rs`, \
               `tests/tests/requirements.rs::no_such_test`, `tests/Cargo.toml`.\n\
               - **AP-01** — text.\n";
    let found = problems(&cited, doc).join("\n");
    for needle in [
        "SP-01 is cited",
        "nope.rs does not exist",
        "no test fn no_such_test",
        "Cargo.toml does not cite it",
        "AP-01: no test named",
    ] {
        assert!(found.contains(needle), "{needle} not in:\n{found}");
    }
}

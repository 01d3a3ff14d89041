//! ARCHITECTURE.md's dependency table, kept true: every path a core module names into another
//! (`use crate::x::..`, `crate::x::..` in code and in macro bodies, `super::..` that climbs out)
//! is checked against the table's row for it; the modules inside `llm` and the CLI's modules
//! form no import cycle; `llm::profiles` (vendor data) depends on nothing else in `llm`.
//!
//! Why a test and not a review note: the table went untrue one convenient import at a time
//! (chat -> host, mcp -> store for a clock, a ring in `llm`, two CLI files using each other),
//! and each one only ever looked small. The sources are parsed with `syn` rather than grepped
//! so comments, strings and doc links do not count and `super::` resolves inside inline and
//! `#[path]` modules. A failure names the file and line of each offending path. And no module
//! of the workspace is mounted with `#[path]` at all (issue 26: the file tree is the module tree).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

mod house;

/// Modules that may depend on other leaves only (the table's first row, plus `clock`, `status`,
/// `redact`, `transcript` and `roots`, which were split out as leaves after it was written).
const LEAVES: &[&str] = &[
    "ids",
    "events",
    "config",
    "clock",
    "status",
    "redact",
    "transcript",
    "roots",
    // The plain data store keeps and approval decides with (they used to import each other).
    "audit_data",
    "policy_data",
    "pin_data",
    // Agent profiles (issue 15): kept by store, validated by host, enforced by the agent runtime.
    "agent_data",
    // The URL check, pure, apart from the browser launcher in `opener`.
    "url_check",
    // What servers offer and their compiled schemas, out of `mcp` so approval need not use it.
    "catalog",
    "schema",
    // The person's settings file (theme, log level, idle time, registry URL): plain data.
    "settings",
    // Tool pipelines as plain data (definitions, mappings, their check): kept by store, run by host.
    "pipeline_data",
    // Out of `mcp` (issue 26): pure parts the connection and the supervisor both use.
    // The skill types and checks, tool-text hygiene, each server's stderr tail and trace, and
    // the child process with its group and the reaper of leftovers.
    "skill_data",
    "hygiene",
    "server_logs",
    "server_process",
    // Untrusted text made visible (issue 26: out of `config`, so the sandbox below it can use it).
    "escape",
    // The sandbox of local servers (issue 26: out of `config` and `host`): the setting `config`
    // holds and fingerprints, and the running of it (bubblewrap, pasta, the filtering proxy).
    "sandbox",
];

/// What `module` may depend on besides the leaves; `None` when it may depend on everything.
/// A module missing here fails the test: give it a row in ARCHITECTURE.md and here.
fn row(module: &str) -> Option<Option<&'static [&'static str]>> {
    Some(match module {
        m if LEAVES.contains(&m) => Some(&[]),
        "secrets" | "store" | "llm" => Some(&[]),
        // OAuth sign-in over rmcp's auth types (issue 26: out of `mcp::connection`, below it).
        "oauth" => Some(&["secrets"]),
        "mcp" => Some(&["oauth", "secrets"]),
        // One task per server over its connection (issue 26: out of `mcp`, above it).
        "supervisor" => Some(&["mcp"]),
        "approval" => Some(&["store"]),
        // Not in the table's first draft: the browser launcher, over the `url_check` leaf.
        "opener" => Some(&[]),
        // The MCP Registry client and server.json -> proposal (issue 14): leaves only
        // (config, ids, redact, clock); the shells compose it with the host.
        "registry" => Some(&[]),
        "chat" => Some(&["llm", "mcp", "approval", "store"]),
        // The one error of the core's facade (issue 26): the host and every feature answer
        // with it, so it names the errors of the layers below.
        "error" => Some(&["approval", "mcp", "oauth", "secrets", "store"]),
        // Features out of `host` (issue 26): each owns its state and its store tables and gets
        // narrow handles from the host, never the host itself.
        "metrics" => Some(&["error", "store"]),
        "models" => Some(&["approval", "error", "llm", "outbound", "secrets", "store"]),
        "redaction" => Some(&[
            "approval", "chat", "error", "llm", "models", "outbound", "store",
        ]),
        "skills" => Some(&["approval", "error", "mcp"]),
        "pipelines" => Some(&["approval", "error", "llm", "mcp", "store"]),
        "agents" => Some(&["approval", "chat", "error", "llm", "mcp", "store"]),
        "discovery" => Some(&["chat", "error", "llm", "store"]),
        "catalog_cost" => Some(&["chat", "error", "llm", "mcp", "models", "store"]),
        // Outbound redaction wraps a turn's provider and tool runner (issue 16).
        "outbound" => Some(&["llm", "chat", "mcp"]),
        // The composition root, and the test doors around its seam.
        "host" | "harness" => None,
        _ => return None,
    })
}

/// Edges the code still has against the table, each to be removed (and its row here deleted:
/// the test fails while a listed edge no longer occurs, so this list only shrinks).
const DEPARTURES: &[(&str, &str, &str)] = &[];

/// One parsed source file and the module path it is.
struct Source {
    file: PathBuf,
    module: Vec<String>,
    ast: syn::File,
}

/// A path one module names: where it is written, the module it is written in, and what it
/// resolves to (crate-absolute segments).
#[derive(Clone, Debug)]
struct Ref {
    at: String,
    from: Vec<String>,
    to: Vec<String>,
}

fn crates() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../src-tauri/crates")
}

fn crate_dir(name: &str) -> PathBuf {
    crates().join(name).join("src")
}

/// Parses `file` and, recursively, every `mod x;` it declares.
fn load(file: &Path, module: Vec<String>, out: &mut Vec<Source>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let here = file.parent().unwrap();
    let owns_dir = matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("lib.rs" | "main.rs" | "mod.rs")
    );
    let dir = if owns_dir {
        here.to_path_buf()
    } else {
        here.join(file.file_stem().unwrap())
    };
    for item in &ast.items {
        let syn::Item::Mod(m) = item else { continue };
        if m.content.is_some() {
            continue;
        }
        let name = m.ident.to_string();
        let child = match path_attr(&m.attrs) {
            Some(p) => here.join(p),
            None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
            None => dir.join(&name).join("mod.rs"),
        };
        let mut module = module.clone();
        module.push(name);
        load(&child, module, out);
    }
    out.push(Source {
        file: file.to_path_buf(),
        module,
        ast,
    });
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Collects the paths of one file that start at `crate`, `super` or `self`.
struct Collect<'a> {
    file: &'a Path,
    scope: Vec<String>,
    refs: Vec<Ref>,
}

impl Collect<'_> {
    fn add(&mut self, segments: &[String], line: usize) {
        let Some(first) = segments.first() else {
            return;
        };
        let mut to = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.scope.clone(),
            "super" => {
                let mut s = self.scope.clone();
                s.pop();
                s
            }
            _ => return,
        };
        for s in &segments[1..] {
            match s.as_str() {
                "super" => {
                    to.pop();
                }
                "self" => {}
                _ => to.push(s.clone()),
            }
        }
        self.refs.push(Ref {
            at: format!("{}:{line}", self.file.display()),
            from: self.scope.clone(),
            to,
        });
    }

    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                let line = if prefix.is_empty() {
                    p.ident.span().start().line
                } else {
                    line
                };
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, line);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.add(prefix, line.max(n.ident.span().start().line));
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.add(prefix, line.max(r.ident.span().start().line));
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.add(prefix, line),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix, line);
                }
            }
        }
    }

    /// `crate::a::b` (or `$crate::`, `super::`) inside a macro's tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (tts.get(j), tts.get(j + 1))
                    {
                        let Some(TokenTree::Ident(next)) = tts.get(j + 2) else {
                            break;
                        };
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.add(&segments, id.span().start().line);
                    }
                    i = j - 1;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collect<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if let Some((_, items)) = &m.content {
            self.scope.push(m.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.scope.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&u.tree, &mut Vec::new(), 0);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = p.segments.first() {
            self.add(&segments, first.ident.span().start().line);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        syn::visit::visit_macro(self, m);
        self.tokens(m.tokens.clone());
    }
}

/// Every module-crossing path of the crate rooted at `root`.
fn refs(root: &str) -> (Vec<Source>, Vec<Ref>) {
    let mut sources = Vec::new();
    load(
        &crate_dir(root).join(root_file(root)),
        Vec::new(),
        &mut sources,
    );
    let crates = crates();
    let mut all = Vec::new();
    for s in &sources {
        let mut c = Collect {
            file: s.file.strip_prefix(&crates).unwrap_or(&s.file),
            scope: s.module.clone(),
            refs: Vec::new(),
        };
        c.visit_file(&s.ast);
        all.extend(c.refs);
    }
    (sources, all)
}

fn root_file(krate: &str) -> &'static str {
    if krate == "cli" {
        "main.rs"
    } else {
        "lib.rs"
    }
}

/// The graph of the children of `parent` (`[]` for the crate's top level): an edge `a -> b`
/// when a file in `a` names something in `b`, with where it first does.
fn graph(
    sources: &[Source],
    refs: &[Ref],
    parent: &[String],
) -> BTreeMap<(String, String), String> {
    let depth = parent.len();
    let children: BTreeSet<&String> = sources
        .iter()
        .filter(|s| s.module.len() == depth + 1 && s.module.starts_with(parent))
        .map(|s| &s.module[depth])
        .collect();
    let mut edges = BTreeMap::new();
    for r in refs {
        if !(r.from.starts_with(parent) && r.to.starts_with(parent)) {
            continue;
        }
        let (Some(a), Some(b)) = (r.from.get(depth), r.to.get(depth)) else {
            continue;
        };
        if a != b && children.contains(a) && children.contains(b) {
            edges
                .entry((a.clone(), b.clone()))
                .or_insert_with(|| r.at.clone());
        }
    }
    edges
}

/// A cycle of `edges` as `a -> b (at) -> ... -> a`, if there is one.
fn cycle(edges: &BTreeMap<(String, String), String>) -> Option<String> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    fn visit<'a>(
        n: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        done: &mut BTreeSet<&'a str>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|p| *p == n) {
            let mut c = path[i..].to_vec();
            c.push(n);
            return Some(c);
        }
        if !done.insert(n) {
            return None;
        }
        path.push(n);
        for m in next.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, next, done, path) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for n in next.keys() {
        if let Some(c) = visit(n, &next, &mut done, &mut Vec::new()) {
            let steps: Vec<String> = c
                .windows(2)
                .map(|w| {
                    let at = &edges[&(w[0].to_owned(), w[1].to_owned())];
                    format!("{} -> {} ({at})", w[0], w[1])
                })
                .collect();
            return Some(steps.join(", "));
        }
    }
    None
}

#[test]
fn core_modules_depend_only_as_the_table_says() {
    let (sources, refs) = refs("core");
    let modules: BTreeSet<&String> = sources
        .iter()
        .filter(|s| s.module.len() == 1)
        .map(|s| &s.module[0])
        .collect();
    let mut problems = Vec::new();
    for m in &modules {
        if row(m).is_none() {
            problems.push(format!(
                "core module `{m}` has no row in ARCHITECTURE.md's table (add it there and here)"
            ));
        }
    }
    let mut departures_seen = BTreeSet::new();
    for r in &refs {
        let (Some(from), Some(to)) = (r.from.first(), r.to.first()) else {
            continue;
        };
        if from == to || !modules.contains(to) {
            continue;
        }
        let Some(Some(allowed)) = row(from) else {
            continue;
        };
        if LEAVES.contains(&to.as_str()) || allowed.contains(&to.as_str()) {
            continue;
        }
        if DEPARTURES.iter().any(|(a, b, _)| a == from && b == to) {
            departures_seen.insert((from.clone(), to.clone()));
            continue;
        }
        problems.push(format!(
            "{}: `{from}` may not depend on `{to}` (crate::{})",
            r.at,
            r.to.join("::")
        ));
    }
    for (a, b, why) in DEPARTURES {
        if !departures_seen.contains(&(a.to_string(), b.to_string())) {
            problems.push(format!(
                "`{a}` no longer depends on `{b}`: delete its row from DEPARTURES ({why})"
            ));
        }
    }
    // The leaves may use each other, but not in a ring (the table's edges alone are a DAG).
    let mut edges = graph(&sources, &refs, &[]);
    edges.retain(|(a, b), _| !DEPARTURES.iter().any(|(x, y, _)| x == a && y == b));
    if let Some(c) = cycle(&edges) {
        problems.push(format!("core modules import each other: {c}"));
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn llm_has_no_import_cycle_and_its_profiles_are_a_leaf() {
    let (sources, refs) = refs("core");
    let llm = ["llm".to_owned()];
    let edges = graph(&sources, &refs, &llm);
    assert!(
        edges.contains_key(&("openai".to_owned(), "profiles".to_owned())),
        "the scan saw no edge openai -> profiles (its quirks); it is not reading llm: {edges:?}"
    );
    if let Some(c) = cycle(&edges) {
        panic!("llm's modules import each other: {c}");
    }
    let from_profiles: Vec<_> = edges.iter().filter(|((a, _), _)| a == "profiles").collect();
    assert!(
        from_profiles.is_empty(),
        "llm::profiles is vendor data and depends on nothing else in llm: {from_profiles:?}"
    );
}

#[test]
fn cli_modules_form_no_import_cycle() {
    let (sources, refs) = refs("cli");
    let edges = graph(&sources, &refs, &[]);
    assert!(
        edges.contains_key(&("approve".to_owned(), "questions".to_owned())),
        "the scan saw no edge approve -> questions; it is not reading the CLI: {edges:?}"
    );
    if let Some(c) = cycle(&edges) {
        panic!("the CLI's modules import each other: {c}");
    }
}

#[test]
fn the_scan_finds_an_upward_path_and_a_ring() {
    let file: syn::File = syn::parse_quote! {
        mod chat {
            mod turn {
                use super::super::host::Started;
                fn f() { tracing::info!("{}", crate::llm::x()); }
            }
        }
    };
    let mut c = Collect {
        file: Path::new("t.rs"),
        scope: Vec::new(),
        refs: Vec::new(),
    };
    c.visit_file(&file);
    let to: Vec<String> = c.refs.iter().map(|r| r.to.join("::")).collect();
    assert!(to.contains(&"host::Started".to_owned()), "{to:?}");
    assert!(to.contains(&"llm::x".to_owned()), "{to:?}");
    let ring: BTreeMap<(String, String), String> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(a, b)| ((a.to_owned(), b.to_owned()), "f.rs:1".to_owned()))
        .collect();
    assert!(cycle(&ring).is_some());
    let mut line = ring.clone();
    line.remove(&("c".to_owned(), "a".to_owned()));
    assert!(cycle(&line).is_none());
}

/// Every `.rs` file of the workspace, product and tests, without build output (`target/`),
/// installed packages (`node_modules/`) and tools (`.tools/`).
fn workspace_sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("..")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir:?}: {e}")) {
            let path = entry.unwrap().path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                if !matches!(name, "target" | "node_modules" | ".tools" | ".git") {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The lines of the `#[path]` attributes (bare or inside `cfg_attr`) on the modules of a file.
#[derive(Default)]
struct PathMounts(Vec<usize>);

impl<'ast> Visit<'ast> for PathMounts {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        for a in &m.attrs {
            let mounts = a.path().is_ident("path")
                || (a.path().is_ident("cfg_attr")
                    && a.meta.require_list().is_ok_and(|l| {
                        let tts: Vec<TokenTree> = l.tokens.clone().into_iter().collect();
                        tts.windows(2).any(|w| {
                            matches!((&w[0], &w[1]), (TokenTree::Ident(i), TokenTree::Punct(p))
                                if i == "path" && p.as_char() == '=')
                        })
                    }));
            if mounts {
                self.0.push(a.pound_token.span.start().line);
            }
        }
        syn::visit::visit_item_mod(self, m);
    }
}

/// The file tree is the module tree (issue 26): no `#[path]` mount anywhere in the workspace.
/// A file with children is `foo.rs` + `foo/child.rs`, tests live in `foo/tests.rs`, and what
/// a binary and the tests share is a module of the harness library (`tests/src/lib.rs`).
#[test]
fn no_module_is_mounted_with_a_path_attribute() {
    let sample: syn::File = syn::parse_quote! {
        #[path = "x.rs"] mod a;
        mod b { #[cfg_attr(test, path = "y.rs")] mod c; }
        mod d;
    };
    let mut found = PathMounts::default();
    found.visit_file(&sample);
    assert_eq!(found.0.len(), 2, "the scan misses a #[path]: {:?}", found.0);

    let files = workspace_sources();
    assert!(
        files.len() > 100,
        "the scan found only {} files",
        files.len()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let mut found = PathMounts::default();
        found.visit_file(&ast);
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        for line in found.0 {
            problems.push(format!(
                "{shown}:{line}: a #[path] mount; make the file tree the module tree"
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

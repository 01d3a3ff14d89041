//! Argument constraints offered with an "always" grant ("always, with these arguments"): from
//! the call a person is looking at, one condition per string argument that keeps a later call
//! close to this one (AP-02). The person picks which to keep; the grant is a rule with them.
//!
//! - a URL: the same registrable domain (subdomains included);
//! - an absolute path: under the folder holding it (or the folder itself);
//! - SQL (an argument named like a query that parses): only statements of the kinds it has;
//! - anything else short: exactly this value.

use std::path::Path;

use serde_json::{Map, Value};

use super::policy::{host_of, looks_like_path, looks_like_url, normalize, sql_kinds};
use super::rules::Condition;

/// Longest value offered as an exact match.
const EXACT_MAX: usize = 200;

/// Conditions that hold for `arguments`, one per string argument it can say something useful
/// about, in argument order.
pub fn suggest_constraints(arguments: &Map<String, Value>, home: Option<&Path>) -> Vec<Condition> {
    let mut out = Vec::new();
    for (key, value) in arguments {
        let Value::String(text) = value else { continue };
        let arg = Some(key.clone());
        if looks_like_url(key, text) {
            if let Some(host) = host_of(text) {
                let domain = psl::domain_str(&host).unwrap_or(&host).to_owned();
                out.push(Condition::DomainIn {
                    arg,
                    domains: vec![domain],
                });
                continue;
            }
        }
        if looks_like_path(key, text) {
            if let Some(path) = normalize(text, home) {
                let folder = if text.ends_with('/') {
                    path.as_path()
                } else {
                    path.parent().unwrap_or(&path)
                };
                out.push(Condition::PathUnder {
                    arg,
                    prefixes: vec![folder.to_string_lossy().into_owned()],
                });
                continue;
            }
        }
        let lower = key.to_ascii_lowercase();
        if matches!(lower.as_str(), "sql" | "query" | "statement") || lower.ends_with("_sql") {
            if let Some(mut kinds) = sql_kinds(text) {
                kinds.sort();
                kinds.dedup();
                out.push(Condition::SqlOnly {
                    arg: key.clone(),
                    operations: kinds,
                });
                continue;
            }
        }
        if text.chars().count() <= EXACT_MAX {
            out.push(Condition::Matches {
                arg: key.clone(),
                pattern: regex::escape(text),
            });
        }
    }
    out
}

/// A condition in words, for a prompt or a list of grants.
pub fn describe(c: &Condition) -> String {
    let which = |arg: &Option<String>, what: &str| match arg {
        Some(a) => format!("{a:?}"),
        None => format!("every {what} argument"),
    };
    match c {
        Condition::PathUnder { arg, prefixes } => {
            format!("{} is under {}", which(arg, "path"), prefixes.join(" or "))
        }
        Condition::DomainIn { arg, domains } => format!(
            "{} is on {} (or a subdomain)",
            which(arg, "URL"),
            domains.join(" or ")
        ),
        Condition::SqlOnly { arg, operations } => format!(
            "{arg:?} holds only {} statements",
            operations.join(" / ").to_uppercase()
        ),
        Condition::Matches { arg, pattern } => match unescape_exact(pattern) {
            Some(value) => format!("{arg:?} is exactly {value:?}"),
            None => format!("{arg:?} matches /{pattern}/"),
        },
        Condition::ReadOnlyHint => "the tool claims to be read-only (trusted servers)".into(),
        Condition::Writes => "the call is a write".into(),
    }
}

/// The literal a pattern made by `regex::escape` stands for, when it is one.
fn unescape_exact(pattern: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            c if "^$.|?*+()[]{}".contains(c) => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_of_argument_gets_its_constraint() {
        let args = json!({
            "url": "https://docs.example.co.uk/a/b?c=d",
            "path": "/home/ada/notes/today.md",
            "dir": "~/projects/",
            "query": "SELECT * FROM t; select 1",
            "mode": "fast.*",
            "count": 3,
            "blob": "x".repeat(500)
        });
        let got = suggest_constraints(args.as_object().unwrap(), Some(Path::new("/home/ada")));
        assert_eq!(
            got,
            vec![
                Condition::PathUnder {
                    arg: Some("dir".into()),
                    prefixes: vec!["/home/ada/projects".into()]
                },
                Condition::Matches {
                    arg: "mode".into(),
                    pattern: r"fast\.\*".into()
                },
                Condition::PathUnder {
                    arg: Some("path".into()),
                    prefixes: vec!["/home/ada/notes".into()]
                },
                Condition::SqlOnly {
                    arg: "query".into(),
                    operations: vec!["select".into()]
                },
                Condition::DomainIn {
                    arg: Some("url".into()),
                    domains: vec!["example.co.uk".into()]
                },
            ]
        );
        let words: Vec<String> = got.iter().map(describe).collect();
        assert_eq!(words[1], r#""mode" is exactly "fast.*""#);
        assert_eq!(words[3], r#""query" holds only SELECT statements"#);
        assert_eq!(words[4], r#""url" is on example.co.uk (or a subdomain)"#);
        assert_eq!(
            describe(&Condition::Matches {
                arg: "a".into(),
                pattern: "b.*".into()
            }),
            r#""a" matches /b.*/"#
        );
    }
}

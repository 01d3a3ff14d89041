//! LLM-facing tool names (TD-03).
//!
//! MCP allows tool names up to 128 characters with dots and other punctuation; OpenAI and
//! Gemini accept `^[a-zA-Z0-9_-]{1,64}$`, and two servers may both expose `search`. The model
//! therefore sees a name derived from (server id, tool name): `server__tool`, sanitized. A name
//! that had to be changed (a lossy character replacement or a truncation) or that would collide
//! with another one, compared case-insensitively because some providers fold case, gets a stable
//! suffix of the SHA-256 of the exact pair. The server's self-reported `serverInfo.name` is never
//! used: servers choose it, users choose the server id.
//!
//! The only way back is the exact reverse map in [`ToolNames`]; a name the model made up
//! resolves to nothing and never reaches a server.

use std::collections::{BTreeMap, HashMap};

use sha2::{Digest, Sha256};

use crate::ids::ToolRef;

/// The longest name accepted by the strictest provider.
pub const MAX_LEN: usize = 64;
const SEP: &str = "__";

/// A bidirectional, deterministic mapping between tools and the names a model sees.
#[derive(Clone, Debug, Default)]
pub struct ToolNames {
    forward: HashMap<ToolRef, String>,
    reverse: HashMap<String, ToolRef>,
}

fn sanitize(s: &str) -> (String, bool) {
    let mut lossy = false;
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                lossy = true;
                '_'
            }
        })
        .collect();
    (out, lossy)
}

fn hash_hex(t: &ToolRef, len: usize) -> String {
    let mut h = Sha256::new();
    h.update(t.server.as_str().as_bytes());
    h.update([0u8]);
    h.update(t.tool.as_bytes());
    hex::encode(h.finalize())[..len].to_owned()
}

/// Switchboard's own built-in tools are named `switchboard__...` (`chat::cap`): a server tool
/// whose plain name would start so (a server named `switchboard`) is hashed instead, and a
/// hashed name (`{prefix}_{hex}`) never equals a built-in one.
const RESERVED_PREFIX: &str = "switchboard__";

fn hashed(base: &str, t: &ToolRef, hash_len: usize) -> String {
    let keep = MAX_LEN - hash_len - 1;
    let prefix: String = base.chars().take(keep).collect();
    format!("{prefix}_{}", hash_hex(t, hash_len))
}

/// Whether a name satisfies `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid(name: &str) -> bool {
    (1..=MAX_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ToolNames {
    /// Builds the mapping for a set of tools. The result depends only on the set, not on the
    /// order it is given in.
    pub fn build(tools: impl IntoIterator<Item = ToolRef>) -> Self {
        let mut tools: Vec<ToolRef> = tools.into_iter().collect();
        tools.sort();
        tools.dedup();
        // First pass: the plain name, or a hashed one when the plain name lost information.
        let mut names: BTreeMap<ToolRef, String> = BTreeMap::new();
        for t in &tools {
            let (server, lossy_s) = sanitize(t.server.as_str());
            let (tool, lossy_t) = sanitize(&t.tool);
            let base = format!("{server}{SEP}{tool}");
            let name = if lossy_s
                || lossy_t
                || base.len() > MAX_LEN
                || tool.is_empty()
                || base.to_ascii_lowercase().starts_with(RESERVED_PREFIX)
            {
                hashed(&base, t, 8)
            } else {
                base
            };
            names.insert(t.clone(), name);
        }
        // Then resolve case-insensitive collisions by hashing every member of a colliding group,
        // lengthening the hash until the group is unique.
        for hash_len in [8, 16, 32] {
            let mut groups: HashMap<String, Vec<ToolRef>> = HashMap::new();
            for (t, n) in &names {
                groups
                    .entry(n.to_ascii_lowercase())
                    .or_default()
                    .push(t.clone());
            }
            let colliding: Vec<ToolRef> = groups
                .into_values()
                .filter(|g| g.len() > 1)
                .flatten()
                .collect();
            if colliding.is_empty() {
                break;
            }
            for t in colliding {
                let (server, _) = sanitize(t.server.as_str());
                let (tool, _) = sanitize(&t.tool);
                let n = hashed(&format!("{server}{SEP}{tool}"), &t, hash_len);
                names.insert(t, n);
            }
        }
        let mut out = Self::default();
        for (t, n) in names {
            out.reverse.insert(n.clone(), t.clone());
            out.forward.insert(t, n);
        }
        out
    }

    /// The name the model sees for a tool.
    pub fn llm_name(&self, tool: &ToolRef) -> Option<&str> {
        self.forward.get(tool).map(String::as_str)
    }

    /// The tool a model-supplied name refers to; exact match only.
    pub fn resolve(&self, llm_name: &str) -> Option<&ToolRef> {
        self.reverse.get(llm_name)
    }

    /// How many tools are mapped.
    pub fn len(&self) -> usize {
        self.forward.len()
    }

    /// Whether no tools are mapped.
    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ServerId;

    fn t(server: &str, tool: &str) -> ToolRef {
        ToolRef {
            server: ServerId::new(server).unwrap(),
            tool: tool.into(),
        }
    }

    fn check_bijective(names: &ToolNames, tools: &[ToolRef]) {
        let mut seen = std::collections::HashSet::new();
        for tool in tools {
            let n = names.llm_name(tool).unwrap();
            assert!(is_valid(n), "{n:?} is not a valid LLM tool name");
            assert!(seen.insert(n.to_ascii_lowercase()), "duplicate {n}");
            assert_eq!(names.resolve(n), Some(tool));
        }
    }

    /// A server named `switchboard` cannot take the name of a built-in tool (the big-output
    /// reader; the agents' state tools use another shape altogether).
    #[test]
    fn a_server_named_switchboard_never_gets_a_builtin_name() {
        let tools = [
            t("switchboard", "read_tool_output"),
            t("Switchboard", "Read_Tool_Output"),
            t("switchboard", "other"),
        ];
        let names = ToolNames::build(tools.clone());
        check_bijective(&names, &tools);
        for tool in &tools {
            let name = names.llm_name(tool).unwrap();
            // `chat::cap::READ_OUTPUT_TOOL` (spelled out: `mcp` sits below `chat`).
            assert_ne!(
                name.to_ascii_lowercase(),
                "switchboard__read_tool_output",
                "{tool}"
            );
        }
    }

    #[test]
    fn plain_names_stay_readable() {
        let tools = [t("github", "search"), t("fs", "read_file")];
        let names = ToolNames::build(tools.clone());
        assert_eq!(names.llm_name(&tools[0]), Some("github__search"));
        assert_eq!(names.llm_name(&tools[1]), Some("fs__read_file"));
        check_bijective(&names, &tools);
    }

    #[test]
    fn hard_cases_are_unique_and_valid() {
        let long = "x".repeat(128);
        let tools = vec![
            t("a", "search"),
            t("b", "search"),
            t("a", &long),
            t("a", &format!("{long}y")),
            t("a", "files.read"),
            t("a", "files_read"),
            t("a", "Search"),
            t("a", "SEARCH"),
            t("srv.with.dots", "tool"),
            t("srv_with_dots", "tool"),
            t("a", "emoji🙂"),
            t("a", ""),
            t(&"s".repeat(64), "t"),
        ];
        let names = ToolNames::build(tools.clone());
        check_bijective(&names, &tools);
    }

    #[test]
    fn deterministic_regardless_of_order() {
        let tools = vec![t("a", "x.y"), t("b", "x_y"), t("a", "X.Y"), t("c", "q")];
        let mut rev = tools.clone();
        rev.reverse();
        let (n1, n2) = (ToolNames::build(tools.clone()), ToolNames::build(rev));
        for tool in &tools {
            assert_eq!(n1.llm_name(tool), n2.llm_name(tool));
        }
    }

    #[test]
    fn unknown_names_resolve_to_nothing() {
        let names = ToolNames::build([t("github", "search")]);
        assert!(names.resolve("github__searc").is_none());
        assert!(names.resolve("GITHUB__SEARCH").is_none());
        assert!(names.resolve("search").is_none());
    }
}

//! Ranking the catalog for `switchboard__find_tools` (progressive discovery, issue 16 point 2).
//!
//! Plain and deterministic on purpose: the model writes a few words, every tool gets a score
//! from where those words appear (its name first, then its server, then its description), and
//! ties go to the name's order, so the same query over the same catalog always answers the
//! same lines. No embeddings: nothing leaves the machine to rank, nothing is downloaded, and a
//! person can predict why a tool was found.

/// One tool as the search sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate<'a> {
    /// Its server.
    pub server: &'a str,
    /// Its MCP name.
    pub tool: &'a str,
    /// Its description (or title).
    pub description: &'a str,
}

/// The words of `s`, lowercase, split at anything that is not a letter or a digit.
pub fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How well `c` matches the query `q` (its [`words`] and the whole query, lowercase); 0 is no
/// match at all.
pub fn score(c: &Candidate<'_>, q: &[String], whole: &str) -> u32 {
    let tool = c.tool.to_lowercase();
    let server = c.server.to_lowercase();
    let description = c.description.to_lowercase();
    let (tool_words, server_words, desc_words) =
        (words(c.tool), words(c.server), words(c.description));
    let mut total = 0;
    for w in q {
        total += if tool_words.contains(w) {
            8
        } else if tool.contains(w.as_str()) {
            5
        } else {
            0
        };
        total += if server_words.contains(w) {
            4
        } else if server.contains(w.as_str()) {
            2
        } else {
            0
        };
        total += if desc_words.contains(w) {
            3
        } else if description.contains(w.as_str()) {
            1
        } else {
            0
        };
    }
    // The query as written naming the tool (or `server/tool`) outright wins.
    if !whole.is_empty() {
        if tool == whole || format!("{server}/{tool}") == whole {
            total += 50;
        } else if tool.contains(whole) {
            total += 10;
        }
    }
    total
}

/// The indexes of the best `limit` matches of `query` among `all`, best first. An empty query
/// lists the tools in name order (with a server filter, that is "what does this server have").
pub fn rank(all: &[Candidate<'_>], query: &str, limit: usize) -> (Vec<usize>, usize) {
    let q = words(query);
    let whole = query.trim().to_lowercase();
    let mut scored: Vec<(u32, usize)> = all
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                if q.is_empty() {
                    1
                } else {
                    score(c, &q, &whole)
                },
                i,
            )
        })
        .filter(|(s, _)| *s > 0)
        .collect();
    let found = scored.len();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| all[a.1].server.cmp(all[b.1].server))
            .then_with(|| all[a.1].tool.cmp(all[b.1].tool))
    });
    (
        scored.into_iter().take(limit).map(|(_, i)| i).collect(),
        found,
    )
}

/// The first line of a description, cut to `max` characters.
pub fn first_line(s: &str, max: usize) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c<'a>(server: &'a str, tool: &'a str, description: &'a str) -> Candidate<'a> {
        Candidate {
            server,
            tool,
            description,
        }
    }

    fn catalog() -> Vec<Candidate<'static>> {
        vec![
            c(
                "github",
                "create_issue",
                "Open a new issue in a repository.",
            ),
            c("github", "list_issues", "List the issues of a repository."),
            c("jira", "create_ticket", "Create a Jira ticket (an issue)."),
            c("fs", "read_file", "Read a file from disk.\nSecond line."),
            c("fs", "write_file", "Write a file."),
            c("weather", "forecast", "The weather forecast for a city."),
        ]
    }

    fn names(all: &[Candidate<'_>], idx: &[usize]) -> Vec<String> {
        idx.iter()
            .map(|i| format!("{}/{}", all[*i].server, all[*i].tool))
            .collect()
    }

    #[test]
    fn name_words_beat_descriptions_and_ties_go_by_name() {
        let all = catalog();
        let (idx, found) = rank(&all, "create issue", 10);
        assert_eq!(
            names(&all, &idx),
            [
                "github/create_issue",
                "jira/create_ticket",
                "github/list_issues"
            ]
        );
        assert_eq!(found, 3);
        let (idx, _) = rank(&all, "file", 10);
        assert_eq!(names(&all, &idx), ["fs/read_file", "fs/write_file"]);
    }

    #[test]
    fn a_server_word_finds_its_tools_and_nothing_matches_nothing() {
        let all = catalog();
        let (idx, found) = rank(&all, "weather", 10);
        assert_eq!(names(&all, &idx), ["weather/forecast"]);
        assert_eq!(found, 1);
        let (idx, found) = rank(&all, "spaceship", 10);
        assert!(idx.is_empty());
        assert_eq!(found, 0);
    }

    #[test]
    fn the_exact_name_wins_and_the_limit_cuts() {
        let all = catalog();
        let (idx, _) = rank(&all, "fs/write_file", 1);
        assert_eq!(names(&all, &idx), ["fs/write_file"]);
        let (idx, found) = rank(&all, "", 2);
        assert_eq!(names(&all, &idx), ["fs/read_file", "fs/write_file"]);
        assert_eq!(found, 6);
    }

    #[test]
    fn ranking_is_deterministic_whatever_the_input_order() {
        let all = catalog();
        let mut reversed = all.clone();
        reversed.reverse();
        let (a, _) = rank(&all, "issue repository", 10);
        let (b, _) = rank(&reversed, "issue repository", 10);
        assert_eq!(names(&all, &a), names(&reversed, &b));
    }

    #[test]
    fn first_line_is_the_first_non_empty_line_cut() {
        assert_eq!(first_line("\n  Read a file.\nMore.", 80), "Read a file.");
        assert_eq!(first_line("abcdefghij", 5), "abcd…");
        assert_eq!(first_line("", 5), "");
    }
}

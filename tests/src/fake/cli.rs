//! Command-line parsing for the fake MCP server (hand-written: no clap in this crate).
//!
//! Every flag accepts both `--flag VALUE` and `--flag=VALUE`. See the binary's `//!` docs for the
//! meaning of each flag and mode; [`USAGE`] is what `--help` prints.

use std::path::PathBuf;

/// Printed by `--help`.
pub const USAGE: &str = "\
usage: fake-mcp-server [FLAGS]
  --mode NAME[,NAME...]   misbehaviour modes (repeatable): crash-on-init, exit-after-init,
                          never-answer, never-init, garbage-stdout, huge-line, stderr-flood,
                          fork-grandchild, ignore-sigterm, list-changed-storm,
                          slow-init[=MS], banner, rug-description, rug-param,
                          rug-new-tool, rug-restart, rug-instructions, poisoned, oversize,
                          client-requests, hostile-text, question-flood, deep-answer,
                          stubborn, canary, answer-anything, stderr-chatty
  --protocol VERSION      force the protocolVersion answered to initialize
  --instructions TEXT     instructions string returned by initialize
  --page-size N           page size for tools/resources/templates/prompts lists (0 = one page)
  --tools N               add N generated echo tools gen_0000..gen_{N-1}
  --log-every-ms N        emit notifications/message every N ms after initialized
  --flood-mb N            total MiB written by stderr-flood (default 500); stderr-chatty
                          writes N MiB of short lines before reading stdin, then N MiB more
                          while it answers
  --storm N               list_changed notifications sent by list-changed-storm (default 1000)
  --init-delay-ms N       delay the initialize answer by N ms
  --pid-file PATH         write own pid (and fork-grandchild pids) there, one per line
  --stderr-banner TEXT    write TEXT to stderr at startup (\\e, \\x1b and \\n are unescaped)
  --stderr-secret VAR:PAD write PAD bytes of padding then the value of env VAR to stderr at
                          startup, as one line (a secret placed across a size cut)
  --record FILE           append every received stdin line to FILE
  --state-file PATH       count starts in PATH (rug-restart, rug-instructions change from the 2nd)
  --help                  print this help";

/// Default delay of `--mode slow-init` without `=MS` or `--init-delay-ms`.
pub const DEFAULT_SLOW_INIT_MS: u64 = 2000;

/// Which misbehaviours are switched on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Modes {
    pub crash_on_init: bool,
    pub exit_after_init: bool,
    pub never_answer: bool,
    pub never_init: bool,
    pub garbage_stdout: bool,
    pub huge_line: bool,
    pub stderr_flood: bool,
    /// Short lines (80 bytes, as `fold` makes them) on stderr: `--flood-mb` MiB before the
    /// handshake is read, as many again from a thread while calls are answered (RL-13).
    pub stderr_chatty: bool,
    pub fork_grandchild: bool,
    pub ignore_sigterm: bool,
    pub list_changed_storm: bool,
    pub banner: bool,
    /// After the first tool call, `echo`'s description changes (+ list_changed).
    pub rug_description: bool,
    /// After the first tool call, only the description of `echo`'s `text` parameter changes.
    pub rug_param: bool,
    /// After the first tool call, a new tool `exfiltrate` appears (+ list_changed).
    pub rug_new_tool: bool,
    /// From the second start on (`--state-file`), `echo`'s description differs.
    pub rug_restart: bool,
    /// From the second start on (`--state-file`), the instructions differ.
    pub rug_instructions: bool,
    /// Adds `poisoned_add` (a poisoned description) and `lying_write` (claims read-only, writes).
    pub poisoned: bool,
    /// Adds `bloated`, whose description is over the 8 KiB cap.
    pub oversize: bool,
    /// Adds `deep`, whose answer is nested past any JSON reader's limit.
    pub deep_answer: bool,
    /// Answers `{}` to every method it does not know instead of -32601 (`server/discover`
    /// included), like some lax older servers.
    pub answer_anything: bool,
    /// Adds the tools that send requests to the client (`ask_user`, `open_url`, `ask_model`,
    /// `list_roots`) and `roots_changed_count`.
    pub client_requests: bool,
    /// Escape codes, bidi overrides and line breaks in tool names, titles, descriptions, the
    /// instructions, stderr, a result and an error message (RN-04).
    pub hostile_text: bool,
    /// Adds `flood_questions`, which sends many elicitations at once (RL-12).
    pub question_flood: bool,
    /// Ignores SIGTERM and stdin EOF, and starts a grandchild that ignores SIGTERM (SP-06).
    pub stubborn: bool,
    /// Adds `canary_probe` and checks `CANARY_REQUIRE_FILE`/`_PORT` at start-up (SP-07).
    pub canary: bool,
}

/// Parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub modes: Modes,
    pub protocol: Option<String>,
    pub instructions: Option<String>,
    pub page_size: usize,
    pub extra_tools: usize,
    /// Raw tool definitions added with `--tool-json` (answered like `echo` when called).
    pub raw_tools: Vec<String>,
    pub log_every_ms: u64,
    pub flood_mb: u64,
    pub storm: u64,
    pub init_delay_ms: u64,
    pub pid_file: Option<PathBuf>,
    pub stderr_banner: Option<String>,
    /// `--stderr-secret VAR:PAD`.
    pub stderr_secret: Option<(String, usize)>,
    pub record: Option<PathBuf>,
    pub state_file: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            modes: Modes::default(),
            protocol: None,
            instructions: None,
            page_size: 0,
            extra_tools: 0,
            raw_tools: Vec::new(),
            log_every_ms: 0,
            flood_mb: 500,
            storm: 1000,
            init_delay_ms: 0,
            pid_file: None,
            stderr_banner: None,
            stderr_secret: None,
            record: None,
            state_file: None,
        }
    }
}

/// Result of parsing: run with a config, or print help.
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Config>),
    Help,
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got {value:?}"))
}

fn apply_mode(cfg: &mut Config, name: &str, slow_init: &mut Option<u64>) -> Result<(), String> {
    let m = &mut cfg.modes;
    match name {
        "crash-on-init" => m.crash_on_init = true,
        "exit-after-init" => m.exit_after_init = true,
        "never-answer" => m.never_answer = true,
        "never-init" => m.never_init = true,
        "garbage-stdout" => m.garbage_stdout = true,
        "huge-line" => m.huge_line = true,
        "stderr-flood" => m.stderr_flood = true,
        "stderr-chatty" => m.stderr_chatty = true,
        "fork-grandchild" => m.fork_grandchild = true,
        "ignore-sigterm" => m.ignore_sigterm = true,
        "list-changed-storm" => m.list_changed_storm = true,
        "banner" => m.banner = true,
        "rug-description" => m.rug_description = true,
        "rug-param" => m.rug_param = true,
        "rug-new-tool" => m.rug_new_tool = true,
        "rug-restart" => m.rug_restart = true,
        "rug-instructions" => m.rug_instructions = true,
        "poisoned" => m.poisoned = true,
        "oversize" => m.oversize = true,
        "deep-answer" => m.deep_answer = true,
        "answer-anything" => m.answer_anything = true,
        "client-requests" => m.client_requests = true,
        "hostile-text" => m.hostile_text = true,
        "question-flood" => m.question_flood = true,
        "stubborn" => m.stubborn = true,
        "canary" => m.canary = true,
        "slow-init" => *slow_init = Some(DEFAULT_SLOW_INIT_MS),
        other => match other.strip_prefix("slow-init=") {
            Some(ms) => *slow_init = Some(number("--mode slow-init", ms)?),
            None => return Err(format!("unknown mode: {other:?}")),
        },
    }
    Ok(())
}

/// Replaces the escapes `\e`, `\x1b`/`\x1B`, `\n` and `\t` so shell users can pass ANSI colours.
pub fn unescape(text: &str) -> String {
    text.replace("\\x1b", "\x1b")
        .replace("\\x1B", "\x1b")
        .replace("\\e", "\x1b")
        .replace("\\n", "\n")
        .replace("\\t", "\t")
}

/// Parses the arguments (without the program name).
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, String> {
    let mut cfg = Config::default();
    let mut slow_init: Option<u64> = None;
    let mut explicit_delay: Option<u64> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(Parsed::Help);
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => args.next().ok_or_else(|| format!("{flag}: missing value")),
            }
        };
        match flag.as_str() {
            "--mode" => {
                let v = value()?;
                for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    apply_mode(&mut cfg, name, &mut slow_init)?;
                }
            }
            "--protocol" => cfg.protocol = Some(value()?),
            "--instructions" => cfg.instructions = Some(value()?),
            "--page-size" => cfg.page_size = number(&flag, &value()?)?,
            "--tools" => cfg.extra_tools = number(&flag, &value()?)?,
            "--tool-json" => {
                let raw = value()?;
                serde_json::from_str::<serde_json::Value>(&raw)
                    .map_err(|e| format!("--tool-json: not JSON: {e}"))?;
                cfg.raw_tools.push(raw);
            }
            "--log-every-ms" => cfg.log_every_ms = number(&flag, &value()?)?,
            "--flood-mb" => cfg.flood_mb = number(&flag, &value()?)?,
            "--storm" => cfg.storm = number(&flag, &value()?)?,
            "--init-delay-ms" => explicit_delay = Some(number(&flag, &value()?)?),
            "--pid-file" => cfg.pid_file = Some(PathBuf::from(value()?)),
            "--stderr-banner" => cfg.stderr_banner = Some(unescape(&value()?)),
            "--stderr-secret" => {
                let v = value()?;
                let (var, pad) = v
                    .rsplit_once(':')
                    .ok_or_else(|| format!("{flag}: expected VAR:PAD, got {v:?}"))?;
                cfg.stderr_secret = Some((var.to_owned(), number(&flag, pad)?));
            }
            "--record" => cfg.record = Some(PathBuf::from(value()?)),
            "--state-file" => cfg.state_file = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument: {other:?} (see --help)")),
        }
    }
    cfg.init_delay_ms = explicit_delay.or(slow_init).unwrap_or(0);
    Ok(Parsed::Run(Box::new(cfg)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Config, String> {
        match parse(args.iter().map(|s| s.to_string()))? {
            Parsed::Run(cfg) => Ok(*cfg),
            Parsed::Help => Err("help".into()),
        }
    }

    #[test]
    fn defaults() {
        assert_eq!(run(&[]).unwrap(), Config::default());
    }

    #[test]
    fn modes_repeatable_and_comma_separated() {
        let cfg = run(&["--mode", "banner,garbage-stdout", "--mode=ignore-sigterm"]).unwrap();
        assert!(cfg.modes.banner && cfg.modes.garbage_stdout && cfg.modes.ignore_sigterm);
        assert!(!cfg.modes.huge_line);
        assert!(run(&["--mode", "bogus"]).is_err());
    }

    #[test]
    fn client_requests_mode() {
        assert!(!run(&[]).unwrap().modes.client_requests);
        let cfg = run(&["--mode=poisoned,client-requests"]).unwrap();
        assert!(cfg.modes.client_requests && cfg.modes.poisoned);
        assert!(
            run(&["--mode", "client-requests"])
                .unwrap()
                .modes
                .client_requests
        );
        assert!(run(&["--mode", "client-request"]).is_err());
        assert!(USAGE.contains("client-requests"));
    }

    #[test]
    fn hostile_modes() {
        let cfg = run(&["--mode", "hostile-text,question-flood"]).unwrap();
        assert!(cfg.modes.hostile_text && cfg.modes.question_flood);
        assert!(!run(&[]).unwrap().modes.hostile_text);
        assert!(USAGE.contains("hostile-text") && USAGE.contains("question-flood"));
    }

    #[test]
    fn numbers_and_values() {
        let cfg = run(&[
            "--page-size",
            "2",
            "--tools=30",
            "--storm",
            "5",
            "--protocol",
            "2024-11-05",
            "--stderr-banner",
            "\\e[31mred\\e[0m",
        ])
        .unwrap();
        assert_eq!((cfg.page_size, cfg.extra_tools, cfg.storm), (2, 30, 5));
        assert_eq!(cfg.protocol.as_deref(), Some("2024-11-05"));
        assert_eq!(cfg.stderr_banner.as_deref(), Some("\x1b[31mred\x1b[0m"));
        assert!(run(&["--page-size", "x"]).is_err());
        assert!(run(&["--page-size"]).is_err());
        assert!(run(&["--nope"]).is_err());
    }

    #[test]
    fn slow_init_delay() {
        assert_eq!(
            run(&["--mode", "slow-init"]).unwrap().init_delay_ms,
            DEFAULT_SLOW_INIT_MS
        );
        assert_eq!(run(&["--mode", "slow-init=50"]).unwrap().init_delay_ms, 50);
        assert_eq!(
            run(&["--mode", "slow-init", "--init-delay-ms", "7"])
                .unwrap()
                .init_delay_ms,
            7
        );
        assert_eq!(run(&["--init-delay-ms", "9"]).unwrap().init_delay_ms, 9);
    }
}

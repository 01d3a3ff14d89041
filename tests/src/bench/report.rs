//! Summaries: the median of the rounds per figure, the ratios against the targets of the issue,
//! the machine, and the printed table.

use std::fmt::Write as _;

use serde::Serialize;

use super::{median, Figure, Outcome};

/// The machine a run came from.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Machine {
    /// Logical CPUs.
    pub cpus: usize,
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// Memory, from /proc/meminfo.
    pub memory: String,
    /// `PRETTY_NAME` from /etc/os-release.
    pub os: String,
    /// The kernel release.
    pub kernel: String,
    /// `rustc --version` (the compiler on PATH when the bench ran).
    pub rustc: String,
    /// `node --version` of the node that ran the TypeScript peer.
    pub node: String,
    /// `python --version` of the python that ran the Python peer.
    pub python: String,
}

impl Machine {
    /// Reads what Linux tells about this machine; unknown fields stay "unknown".
    pub fn probe() -> Self {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        let memory = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0))
            .unwrap_or_else(|| "unknown".into());
        let os = read("/etc/os-release")
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_owned())
            .unwrap_or_else(|| "unknown".into());
        Self {
            cpus: std::thread::available_parallelism().map_or(0, usize::from),
            cpu_model,
            memory,
            os,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
            rustc: String::new(),
            node: String::new(),
            python: String::new(),
        }
    }
}

/// One client over all rounds.
#[derive(Clone, Debug, Serialize)]
pub struct ClientSummary {
    /// Short key (`raw-pipe`, `raw-tokio`, `switchboard`, `switchboard-run`, `switchboard-conn`,
    /// `sqlite-commit`, `ts-sdk`, `py-sdk`, and the 2026-07-28 rows of `peers::v2`:
    /// `ts-sdk-v2-stdio`, `switchboard-v2-stdio`, `ts-sdk-v2-http`, `switchboard-v2-http`).
    pub key: &'static str,
    /// What the row is called in the table.
    pub label: String,
    /// `measured`, `unavailable` or `failed`.
    pub status: &'static str,
    /// Why it is not measured, or what went wrong in some rounds.
    pub notes: Vec<String>,
    /// The median over the measured rounds of each figure (p50, p99 and throughput each on its
    /// own), per concurrency level.
    pub median: Vec<Figure>,
    /// Every measured round.
    pub rounds: Vec<Vec<Figure>>,
}

impl ClientSummary {
    /// Summarises the outcomes of the rounds.
    pub fn new(key: &'static str, label: String, outcomes: &[Outcome]) -> Self {
        let mut rounds = Vec::new();
        let mut notes = Vec::new();
        let mut unavailable = None;
        for (i, o) in outcomes.iter().enumerate() {
            match o {
                Outcome::Measured(f) => rounds.push(f.clone()),
                Outcome::Unavailable(why) => unavailable = Some(why.clone()),
                Outcome::Failed(why) => notes.push(format!("round {}: {why}", i + 1)),
            }
        }
        let status = if !rounds.is_empty() {
            "measured"
        } else if let Some(why) = unavailable {
            notes.insert(0, why);
            "unavailable"
        } else {
            "failed"
        };
        let median = rounds
            .first()
            .map(|first| {
                first
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let of = |g: fn(&Figure) -> f64| {
                            median(
                                &rounds
                                    .iter()
                                    .filter_map(|r| r.get(i))
                                    .map(g)
                                    .collect::<Vec<_>>(),
                            )
                        };
                        Figure {
                            c: f.c,
                            calls: f.calls,
                            p50_us: of(|f| f.p50_us),
                            p99_us: of(|f| f.p99_us),
                            throughput: of(|f| f.throughput),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            key,
            label,
            status,
            notes,
            median,
            rounds,
        }
    }

    /// The median figure at `c`, if measured.
    pub fn at(&self, c: usize) -> Option<&Figure> {
        self.median.iter().find(|f| f.c == c)
    }
}

/// One ratio, with a verdict when the issue sets a target for it.
#[derive(Clone, Debug, Serialize)]
pub struct Ratio {
    /// What is compared.
    pub name: String,
    /// The ratio, when both sides were measured.
    pub value: Option<f64>,
    /// The target, e.g. `< 1.0x`; empty for information only.
    pub target: String,
    /// `PASS`, `MISS`, `n/a`, or empty for information only.
    pub verdict: &'static str,
}

enum Goal {
    Below(f64),
    AtMost(f64),
    AtLeast(f64),
    Info,
}

fn ratio(name: String, value: Option<f64>, goal: Goal) -> Ratio {
    let (target, ok) = match goal {
        Goal::Below(t) => (format!("< {t:.1}x"), value.map(|v| v < t)),
        Goal::AtMost(t) => (format!("<= {t:.1}x"), value.map(|v| v <= t)),
        Goal::AtLeast(t) => (format!(">= {t:.1}x"), value.map(|v| v >= t)),
        Goal::Info => (String::new(), None),
    };
    let verdict = match (target.is_empty(), ok) {
        (true, _) => "",
        (false, Some(true)) => "PASS",
        (false, Some(false)) => "MISS",
        (false, None) => "n/a",
    };
    Ratio {
        name,
        value,
        target,
        verdict,
    }
}

/// The ratios of the targets (switchboard's `Host::call_tool` row against the
/// TypeScript SDK and the raw pipe), then a few for information.
#[allow(clippy::too_many_lines)] // the report's ratios, one after another
pub fn ratios(clients: &[ClientSummary]) -> Vec<Ratio> {
    let get = |key: &str| clients.iter().find(|c| c.key == key);
    let fig = |key: &str, c: usize| get(key).and_then(|s| s.at(c)).cloned();
    let div = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let p50 = |key: &str, c: usize| fig(key, c).map(|f| f.p50_us);
    let thr = |key: &str, c: usize| fig(key, c).map(|f| f.throughput);
    let sb = "switchboard";
    let mut out = vec![
        ratio(
            "p50 c=1: switchboard / TypeScript SDK".into(),
            div(p50(sb, 1), p50("ts-sdk", 1)),
            Goal::Below(1.0),
        ),
        ratio(
            "p50 c=1: switchboard / TypeScript SDK (aim)".into(),
            div(p50(sb, 1), p50("ts-sdk", 1)),
            Goal::AtMost(0.7),
        ),
        ratio(
            "p50 c=1: switchboard / raw pipe".into(),
            div(p50(sb, 1), p50("raw-pipe", 1)),
            Goal::AtMost(3.0),
        ),
        ratio(
            "throughput c=64: switchboard / TypeScript SDK".into(),
            div(thr(sb, 64), thr("ts-sdk", 64)),
            Goal::AtLeast(2.0),
        ),
    ];
    for c in [16, 64] {
        out.push(ratio(
            format!("p50 c={c}: switchboard / TypeScript SDK"),
            div(p50(sb, c), p50("ts-sdk", c)),
            Goal::Info,
        ));
    }
    out.push(ratio(
        "throughput c=64: switchboard / raw pipe".into(),
        div(thr(sb, 64), thr("raw-pipe", 64)),
        Goal::Info,
    ));
    out.push(ratio(
        "p50 c=1: switchboard / raw tokio client".into(),
        div(p50(sb, 1), p50("raw-tokio", 1)),
        Goal::Info,
    ));
    out.push(ratio(
        "throughput c=64: switchboard / raw tokio client".into(),
        div(thr(sb, 64), thr("raw-tokio", 64)),
        Goal::Info,
    ));
    out.push(ratio(
        "p50 c=1: switchboard / Python SDK".into(),
        div(p50(sb, 1), p50("py-sdk", 1)),
        Goal::Info,
    ));
    out.push(ratio(
        "throughput c=64: switchboard / Python SDK".into(),
        div(thr(sb, 64), thr("py-sdk", 64)),
        Goal::Info,
    ));
    out.push(ratio(
        "p50 c=1: Host::call_tool / Connection::call_tool".into(),
        div(p50(sb, 1), p50("switchboard-conn", 1)),
        Goal::Info,
    ));
    out.push(ratio(
        "throughput c=64: Host::call_tool / Connection::call_tool".into(),
        div(thr(sb, 64), thr("switchboard-conn", 64)),
        Goal::Info,
    ));
    for c in [1, 64] {
        out.push(ratio(
            format!("p50 c={c}: Host::run_tool / Host::call_tool"),
            div(p50("switchboard-run", c), p50(sb, c)),
            Goal::Info,
        ));
    }
    out.push(ratio(
        "throughput c=64: Host::run_tool / Host::call_tool".into(),
        div(thr("switchboard-run", 64), thr(sb, 64)),
        Goal::Info,
    ));
    // Issue 11: the governed path within a bare call plus one commit at c=1, and 10,000 calls/s
    // at c=64 on this machine kind.
    let bare_plus_commit = match (p50(sb, 1), p50("sqlite-commit", 1)) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    out.push(ratio(
        "p50 c=1: Host::run_tool / (Host::call_tool + one SQLite commit)".into(),
        div(p50("switchboard-run", 1), bare_plus_commit),
        Goal::AtMost(1.0),
    ));
    out.push(ratio(
        "throughput c=64: Host::run_tool / 10,000 calls/s".into(),
        thr("switchboard-run", 64).map(|t| t / 10_000.0),
        Goal::AtLeast(1.0),
    ));
    // Issue 13: Switchboard against the TypeScript SDK v2 client, both talking to the same
    // TypeScript SDK v2 server (2026-07-28 wire for the SDK; the label of Switchboard's row says
    // which revision its connection negotiated). For information: no target is set.
    for wire in ["stdio", "http"] {
        let (sb, ts) = (
            format!("switchboard-v2-{wire}"),
            format!("ts-sdk-v2-{wire}"),
        );
        out.push(ratio(
            format!("p50 c=1: switchboard / TypeScript SDK v2 ({wire}, TS v2 server)"),
            div(p50(&sb, 1), p50(&ts, 1)),
            Goal::Info,
        ));
        out.push(ratio(
            format!("throughput c=64: switchboard / TypeScript SDK v2 ({wire}, TS v2 server)"),
            div(thr(&sb, 64), thr(&ts, 64)),
            Goal::Info,
        ));
    }
    out.retain(|r| !r.target.is_empty() || r.value.is_some());
    out
}

const LABEL_W: usize = 52;

/// The human-readable table: one row per client, p50 / p99 / calls per second per level, then
/// the ratios.
pub fn table(clients: &[ClientSummary], ratios: &[Ratio], conc: &[usize]) -> String {
    let mut s = String::new();
    let _ = write!(s, "{:LABEL_W$}", "");
    for c in conc {
        let _ = write!(s, " | {:^26}", format!("c={c}"));
    }
    s.push('\n');
    let _ = write!(s, "{:LABEL_W$}", "client (median of rounds)");
    for _ in conc {
        let _ = write!(s, " | {:>8} {:>8} {:>8}", "p50 us", "p99 us", "calls/s");
    }
    s.push('\n');
    s.push_str(&"-".repeat(LABEL_W + conc.len() * 29));
    s.push('\n');
    for cl in clients {
        let _ = write!(s, "{:LABEL_W$}", cl.label);
        match cl.status {
            "measured" => {
                for c in conc {
                    match cl.at(*c) {
                        Some(f) => {
                            let _ = write!(
                                s,
                                " | {:>8.1} {:>8.1} {:>8.0}",
                                f.p50_us, f.p99_us, f.throughput
                            );
                        }
                        None => {
                            let _ = write!(s, " | {:>26}", "-");
                        }
                    }
                }
                if cl.rounds.len() > 1 {
                    let _ = write!(s, "  ({} rounds)", cl.rounds.len());
                }
            }
            status => {
                let _ = write!(
                    s,
                    " | {}: {}",
                    status.to_uppercase(),
                    cl.notes.first().map_or("", String::as_str)
                );
            }
        }
        s.push('\n');
        if cl.status == "measured" {
            for n in &cl.notes {
                let _ = writeln!(s, "{:LABEL_W$} |   note: {n}", "");
            }
        }
    }
    s.push('\n');
    let w = ratios.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in ratios {
        let value = r
            .value
            .map_or_else(|| "n/a".to_owned(), |v| format!("{v:.2}x"));
        if r.target.is_empty() {
            let _ = writeln!(s, "{:w$}  {value:>7}", r.name);
        } else {
            let _ = writeln!(
                s,
                "{:w$}  {value:>7}  target {:<8} {}",
                r.name, r.target, r.verdict
            );
        }
    }
    s
}

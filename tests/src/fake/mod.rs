//! Implementation of the `fake-mcp-server` binary (see that file's docs for flags and modes).
//!
//! - [`cli`]: argument parsing into a [`cli::Config`].
//! - [`catalog`]: static tools/resources/prompts and pure helpers (pagination, completion).
//! - [`out`]: the shared stdout writer and stderr logging.
//! - [`modes`]: process-level misbehaviours (banners, floods, grandchildren, signals).
//! - [`server`]: JSON-RPC dispatch and tool implementations.
//! - [`peer`]: the client as seen from the server: its capabilities, and the requests we send
//!   it and wait on (`--mode client-requests`).
//! - [`client_tools`]: the tools of `--mode client-requests` (elicitation, sampling, roots).
//! - [`hostile`]: `--mode hostile-text` (escape codes in every server text) and
//!   `--mode question-flood` (many elicitations at once).
//! - [`stubborn`]: `--mode stubborn` (only SIGKILL ends it, nor its grandchild).
//! - [`canary`]: `--mode canary` (tries to read a file and reach a port a sandbox should hide).

pub mod canary;
pub mod catalog;
pub mod cli;
pub mod client_tools;
pub mod hostile;
pub mod modes;
pub mod out;
pub mod peer;
pub mod server;
pub mod stubborn;

use std::fs::{File, OpenOptions};
use std::io::{BufRead, ErrorKind, Write};

use anyhow::Context;

use self::cli::Parsed;
use self::out::{elog, Out};
use self::server::Server;

/// Appends one received line to the `--record` file.
fn record_line(file: &mut File, line: &[u8]) {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line);
    buf.push(b'\n');
    let _ = file.write_all(&buf);
}

/// Entry point: parse flags, apply startup modes, then serve stdin until EOF.
pub fn run() -> anyhow::Result<()> {
    let args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    let cfg = match cli::parse(args) {
        Ok(Parsed::Run(cfg)) => *cfg,
        Ok(Parsed::Help) => {
            let _ = writeln!(std::io::stdout(), "{}", cli::USAGE);
            return Ok(());
        }
        Err(e) => {
            elog!("fake-mcp-server: {e}");
            std::process::exit(2);
        }
    };
    let modes = cfg.modes.clone();

    if let Some(banner) = &cfg.stderr_banner {
        elog!("{banner}");
    }
    if let Some((var, pad)) = &cfg.stderr_secret {
        let value = std::env::var(var).unwrap_or_default();
        elog!("{}{value} was the secret", "p".repeat(*pad));
    }
    if modes.hostile_text {
        elog!("{}", hostile::stderr_line());
    }
    if modes.crash_on_init {
        // Counted, so a test can tell one try from five.
        modes::count_start(cfg.state_file.as_deref());
        elog!("fake-mcp-server: crash-on-init: exiting with status 1");
        std::process::exit(1);
    }
    if modes.canary {
        canary::check_requirements();
    }
    if modes.ignore_sigterm || modes.stubborn {
        modes::ignore_sigterm();
    }
    let descendants = if modes.fork_grandchild {
        modes::fork_grandchildren()
    } else if modes.stubborn {
        stubborn::start_grandchild()
    } else {
        modes::Descendants::default()
    };
    if let Some(path) = &cfg.pid_file {
        modes::write_pid_file(path, &descendants);
    }
    let mut record = match &cfg.record {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening --record file {}", path.display()))?,
        ),
        None => None,
    };

    let out = Out::new(modes.garbage_stdout);
    if modes.banner {
        modes::print_banner();
    }
    if modes.garbage_stdout {
        modes::print_initial_garbage();
    }
    if modes.stderr_flood {
        modes::start_stderr_flood(cfg.flood_mb);
    }
    if modes.stderr_chatty {
        modes::stderr_chatty(cfg.flood_mb);
    }

    let server = Server::new(cfg, out);
    let mut stdin = std::io::stdin().lock();
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                elog!("stdin read error: {e}");
                break;
            }
        }
        let mut line: &[u8] = &buf;
        while let [rest @ .., b'\n' | b'\r'] = line {
            line = rest;
        }
        if let Some(file) = record.as_mut() {
            record_line(file, line);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        server.handle_line(line);
    }
    modes::on_stdin_eof(modes.ignore_sigterm || modes.stubborn)
}

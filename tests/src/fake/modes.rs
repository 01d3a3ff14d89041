//! Process-level misbehaviours that are not tied to one request: stdout banners, the stderr
//! floods (long and short lines), grandchild processes, the pid file, signal handling and self-kill.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::out::{elog, GARBAGE_LINES};

/// The lines `--mode banner` prints on stdout before anything else.
pub const BANNER_LINES: [&str; 3] = [
    "fake-mcp-server v0.1.0 starting up",
    "==================================",
    "listening on stdio (this is not JSON)",
];

/// Size of one `stderr-flood` line, newline included.
const FLOOD_LINE: usize = 64 * 1024;

/// `--mode banner`: three non-JSON lines on stdout.
pub fn print_banner() {
    let mut w = std::io::stdout().lock();
    for line in BANNER_LINES {
        let _ = writeln!(w, "{line}");
    }
    let _ = w.flush();
}

/// `--mode garbage-stdout`: every kind of garbage line once, before the first message.
pub fn print_initial_garbage() {
    let mut w = std::io::stdout().lock();
    for line in GARBAGE_LINES {
        let _ = w.write_all(line);
    }
    let _ = w.flush();
}

/// `--mode stderr-flood`: writes `mb` MiB of 64 KiB lines to stderr from a thread, as fast as
/// the reader allows. Blocks (only this thread) if nobody drains stderr.
pub fn start_stderr_flood(mb: u64) {
    let spawned = std::thread::Builder::new()
        .name("stderr-flood".into())
        .spawn(move || {
            let total = mb.saturating_mul(1024 * 1024);
            let mut line = vec![b'f'; FLOOD_LINE];
            line[FLOOD_LINE - 1] = b'\n';
            let mut written: u64 = 0;
            let mut n: u64 = 0;
            while written < total {
                let tag = format!("flood {n:08} ");
                line[..tag.len()].copy_from_slice(tag.as_bytes());
                let len =
                    usize::try_from(total - written).map_or(FLOOD_LINE, |r| r.min(FLOOD_LINE));
                // Only the final (short) line differs: end it with a newline too.
                line[len - 1] = b'\n';
                if std::io::stderr().lock().write_all(&line[..len]).is_err() {
                    return;
                }
                written += len as u64;
                n += 1;
            }
            elog!("stderr-flood done: {written} bytes");
        });
    if let Err(e) = spawned {
        elog!("stderr-flood: cannot spawn thread: {e}");
    }
}

/// `--mode stderr-chatty`: `mb` MiB of 80-byte lines on stderr now (before the handshake is
/// read, so the host must drain them to get an answer), then as many again from a thread while
/// the server answers.
pub fn stderr_chatty(mb: u64) {
    write_short_lines(mb);
    let spawned = std::thread::Builder::new()
        .name("stderr-chatty".into())
        .spawn(move || write_short_lines(mb));
    if let Err(e) = spawned {
        elog!("stderr-chatty: cannot spawn thread: {e}");
    }
}

/// Writes `mb` MiB of numbered 80-byte lines to stderr, 64 KiB at a time.
fn write_short_lines(mb: u64) {
    let total = mb.saturating_mul(1024 * 1024);
    let mut block = Vec::with_capacity(64 * 1024 + 80);
    let mut written: u64 = 0;
    let mut n: u64 = 0;
    let mut err = std::io::stderr().lock();
    while written < total {
        block.clear();
        while block.len() < 64 * 1024 {
            let _ = writeln!(block, "chatty {n:012} {}", "c".repeat(59));
            n += 1;
        }
        if err.write_all(&block).is_err() {
            return;
        }
        written += block.len() as u64;
    }
}

/// Pids of the processes started by `--mode fork-grandchild`.
#[derive(Debug, Default)]
pub struct Descendants {
    /// The `sh` child.
    pub child: Option<u32>,
    /// The two `sleep 1000` grandchildren.
    pub grandchildren: Vec<u32>,
}

/// `--mode fork-grandchild`: spawns `sh` (stdout inherited, same process group) which starts two
/// background `sleep 1000` grandchildren (stdout inherited too) and waits for them. The
/// grandchild pids come back over a pipe on the shell's stderr.
pub fn fork_grandchildren() -> Descendants {
    let script = "sleep 1000 </dev/null 2>/dev/null & a=$!; \
                  sleep 1000 </dev/null 2>/dev/null & b=$!; \
                  echo \"$a $b\" >&2; exec 2>/dev/null; wait";
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            elog!("fork-grandchild: cannot spawn sh: {e}");
            return Descendants::default();
        }
    };
    let mut found = Descendants {
        child: Some(child.id()),
        grandchildren: Vec::new(),
    };
    elog!("child-pid {}", child.id());
    if let Some(err) = child.stderr.take() {
        let mut line = String::new();
        let _ = BufReader::new(err).read_line(&mut line);
        found.grandchildren = line
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
    }
    for pid in &found.grandchildren {
        elog!("grandchild-pid {pid}");
    }
    // Dropping `child` neither waits for nor kills it: it stays alive with our stdout.
    found
}

/// Writes our pid, then the descendants' pids, one per line.
pub fn write_pid_file(path: &Path, descendants: &Descendants) {
    let mut text = format!("{}\n", std::process::id());
    for pid in descendants.child.iter().chain(&descendants.grandchildren) {
        text.push_str(&format!("{pid}\n"));
    }
    if let Err(e) = std::fs::write(path, text) {
        elog!("cannot write pid file {}: {e}", path.display());
    }
}

/// `--state-file`: counts this start in the file and returns which start it is (1-based);
/// 1 without a file. Rug pulls that show only after a restart key off it.
pub fn count_start(path: Option<&Path>) -> u64 {
    let Some(path) = path else { return 1 };
    let before: u64 = std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if let Err(e) = std::fs::write(path, format!("{}\n", before + 1)) {
        elog!("cannot write state file {}: {e}", path.display());
    }
    before + 1
}

/// `--mode ignore-sigterm`: SIGTERM no longer terminates the process.
#[allow(unsafe_code)]
pub fn ignore_sigterm() {
    // SAFETY: installing SIG_IGN for SIGTERM has no memory-safety preconditions.
    let previous = unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
    if previous == libc::SIG_ERR {
        elog!("ignore-sigterm: signal() failed");
    }
}

/// The `kill_self` tool: SIGKILL ourselves.
#[allow(unsafe_code)]
pub fn kill_self() -> ! {
    // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    // SIGKILL cannot be caught; this is only reached if kill() itself failed.
    std::process::exit(137)
}

/// What to do on stdin EOF: exit 0, or (ignore-sigterm) keep running until SIGKILL.
pub fn on_stdin_eof(ignore_sigterm: bool) -> ! {
    if ignore_sigterm {
        elog!("stdin closed; ignore-sigterm: staying alive");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    std::process::exit(0)
}

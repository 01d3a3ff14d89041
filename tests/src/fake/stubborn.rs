//! `--mode stubborn`: a server that only SIGKILL ends, with a grandchild just as stubborn.
//!
//! The server ignores SIGTERM and stays after stdin EOF (as `ignore-sigterm` does), and at
//! startup starts one grandchild in its own process group that ignores SIGTERM and has no
//! input to lose. The grandchild is what a killed host leaves behind: the parent-death signal
//! the host sets on the server is not inherited, so only the run-record sweep at the next host
//! start ends it (tests/tests/orphans.rs). `--pid-file` lists the server, then the grandchild.

use std::process::{Command, Stdio};

use super::modes::Descendants;
use super::out::elog;

/// Starts the grandchild: `sh` ignores SIGTERM, then becomes `sleep`, which inherits the
/// ignored disposition (an ignored signal stays ignored across exec). Same process group as
/// us, no stdin, no stdout: it holds nothing of the host's.
pub fn start_grandchild() -> Descendants {
    let spawned = Command::new("sh")
        .args(["-c", "trap '' TERM HUP; exec sleep 100000"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(child) => {
            elog!("stubborn-grandchild-pid {}", child.id());
            // Dropping `child` neither waits for nor kills it.
            Descendants {
                child: Some(child.id()),
                grandchildren: Vec::new(),
            }
        }
        Err(e) => {
            elog!("stubborn: cannot spawn the grandchild: {e}");
            Descendants::default()
        }
    }
}

use super::*;

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// The host: /home/ann/proj (a folder) with notes.txt (a file), /home/ann/.gitconfig, /srv/out,
/// and a JavaScript project /srv/app with node_modules.
fn host(path: &Path) -> Option<bool> {
    match path.to_str()? {
        "/home/ann/proj" | "/srv/out" | "/home/ann" | "/srv" | "/srv/app" => Some(true),
        "/srv/app/node_modules/pkg/dist/index.js" => Some(false),
        "/home/ann/proj/notes.txt" | "/home/ann/.gitconfig" => Some(false),
        _ => None,
    }
}

fn run(lines: &[&str], sandbox: &SandboxSpec) -> Vec<Blocked> {
    let lines: Vec<String> = lines.iter().map(|s| (*s).to_owned()).collect();
    let configured = [p("/home/ann/proj/notes.txt"), p("/nowhere/x")];
    let stores = crate::sandbox::credential_stores(
        &[Path::new("/home/ann")],
        Path::new("/home/ann/.local/share/switchboard"),
    );
    let cx = Context {
        sandbox,
        cwd: Path::new("/work/cwd"),
        home: Some(Path::new("/home/ann")),
        configured_paths: &configured,
        stores: &stores,
    };
    explain(&lines, &cx, &host)
        .into_iter()
        .map(|f| f.blocked)
        .collect()
}

fn path(s: &str, access: Access) -> Blocked {
    Blocked::Path { path: p(s), access }
}

fn masked(s: &str, holds: &str) -> Blocked {
    Blocked::Masked {
        path: p(s),
        holds: holds.into(),
    }
}

/// SP-12: a denial that names a credential store (forged or not) never proposes a grant of
/// it, whatever the spelling; the finding says so and carries no command.
#[test]
fn credential_stores_are_never_proposed() {
    let on = SandboxSpec::on();
    for (line, want) in [
        (
            "cannot read /home/ann/.ssh/id_ed25519: Permission denied (os error 13)",
            masked("/home/ann/.ssh", "SSH keys"),
        ),
        (
            "Error: EACCES: permission denied, open '/home/ann/.ssh'",
            masked("/home/ann/.ssh", "SSH keys"),
        ),
        (
            "open(\"/home/ann/.netrc\"): Permission denied",
            masked("/home/ann/.netrc", "login passwords for hosts"),
        ),
        (
            "EACCES: permission denied, mkdir '/home/ann/.local/share/switchboard/x'",
            masked(
                "/home/ann/.local/share/switchboard",
                crate::sandbox::DATA_DIR_HOLDS,
            ),
        ),
    ] {
        assert_eq!(run(&[line], &on), vec![want.clone()], "{line}");
        let f = Finding {
            blocked: want,
            evidence: line.into(),
        };
        let server = ServerId::new("s").unwrap();
        assert_eq!(f.grant_command(&server), None);
        let said = f.describe(&server);
        assert!(
            !said.contains("--allow") && said.contains("nothing is offered"),
            "{said}"
        );
    }
}

#[test]
fn table() {
    let on = SandboxSpec::on();
    let cases: &[(&str, &[&str], Vec<Blocked>)] = &[
        (
            "node ENOENT on a file: grant its folder",
            &["Error: ENOENT: no such file or directory, open '/home/ann/proj/notes.txt'"],
            vec![path("/home/ann/proj", Access::Read)],
        ),
        (
            "rust io error on a folder",
            &["cannot read /home/ann/proj: Permission denied (os error 13)"],
            vec![path("/home/ann/proj", Access::Read)],
        ),
        (
            "a file directly in home is granted alone",
            &["open(\"/home/ann/.gitconfig\"): No such file or directory"],
            vec![path("/home/ann/.gitconfig", Access::Read)],
        ),
        (
            "read-only file system means write",
            &["OSError: [Errno 30] Read-only file system: '/srv/out/x.json'"],
            vec![path("/srv/out", Access::Write)],
        ),
        (
            "a new file in an existing folder, written",
            &["cannot write /srv/out/new.txt: No such file or directory (os error 2)"],
            vec![path("/srv/out", Access::Write)],
        ),
        (
            "missing on the host too: a real error",
            &["Error: ENOENT: no such file or directory, open '/nowhere/config.json'"],
            vec![],
        ),
        (
            "system dirs, /tmp and the cwd are not the sandbox's doing",
            &[
                "open /usr/lib/x.so: No such file or directory",
                "open /tmp/a: Permission denied",
                "open /work/cwd/db: Permission denied",
            ],
            vec![],
        ),
        (
            "network unreachable",
            &["OSError: [Errno 101] Network is unreachable"],
            vec![Blocked::Network],
        ),
        (
            "DNS in a sandbox without network",
            &["getaddrinfo EAI_AGAIN registry.npmjs.org"],
            vec![Blocked::Network],
        ),
        (
            "a refused loopback connection",
            &["cannot connect to 127.0.0.1:4123: Connection refused (os error 111)"],
            vec![Blocked::Network],
        ),
        (
            "a refused remote connection is the remote's doing",
            &["connect ECONNREFUSED 10.0.0.5:443"],
            vec![],
        ),
        (
            "bubblewrap itself failed",
            &["bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces."],
            vec![Blocked::Unavailable {
                reason: "No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces.".into(),
            }],
        ),
        (
            "one finding per thing, however often it is repeated",
            &[
                "cannot read /home/ann/proj: Permission denied",
                "cannot read /home/ann/proj: Permission denied",
                "Network is unreachable",
                "Network is unreachable",
            ],
            vec![path("/home/ann/proj", Access::Read), Blocked::Network],
        ),
        (
            "node's loader, inside a JavaScript project: the project's root",
            &["Error: Cannot find module '/srv/app/node_modules/pkg/dist/index.js'"],
            vec![path("/srv/app", Access::Read)],
        ),
        (
            "a configured path the logs redacted",
            &["fake-mcp-server: cannot read [redacted]: No such file or directory (os error 2)"],
            vec![path("/home/ann/proj", Access::Read)],
        ),
        (
            "ordinary noise",
            &["listening on stdio", "warning: /home/ann/proj is large"],
            vec![],
        ),
    ];
    for (name, lines, want) in cases {
        assert_eq!(&run(lines, &on), want, "{name}");
    }
}

#[test]
fn grants_in_place_explain_nothing_more() {
    let read = SandboxSpec::on().granted(Path::new("/home/ann/proj"), Access::Read);
    assert!(run(
        &["cannot read /home/ann/proj/notes.txt: Permission denied"],
        &read
    )
    .is_empty());
    // Read is not enough for a write.
    assert_eq!(
        run(
            &["EROFS: read-only file system, open '/home/ann/proj/notes.txt'"],
            &read
        ),
        vec![path("/home/ann/proj", Access::Write)]
    );
    let net = SandboxSpec {
        network: true,
        ..SandboxSpec::on()
    };
    assert!(run(&["Network is unreachable"], &net).is_empty());
    let denied = SandboxSpec {
        deny: vec![p("/home/ann/proj")],
        ..SandboxSpec::on()
    };
    assert!(run(&["cannot read /home/ann/proj: Permission denied"], &denied).is_empty());
}

#[test]
fn findings_say_how_to_grant() {
    let id = ServerId::new("files").unwrap();
    let f = Finding {
        blocked: path("/home/ann/my proj", Access::Write),
        evidence: "x".into(),
    };
    assert_eq!(
        f.grant_command(&id).unwrap(),
        "switchboard server sandbox files --allow-write '/home/ann/my proj'"
    );
    assert!(f
        .describe(&id)
        .contains("kept it from writing /home/ann/my proj"));
    let n = Finding {
        blocked: Blocked::Network,
        evidence: "x".into(),
    };
    assert_eq!(
        n.grant_command(&id).unwrap(),
        "switchboard server sandbox files --network on"
    );
    let u = Finding {
        blocked: Blocked::Unavailable { reason: "r".into() },
        evidence: "x".into(),
    };
    assert!(u.grant_command(&id).is_none());
    assert!(u.describe(&id).contains("never unsandboxed"));
}

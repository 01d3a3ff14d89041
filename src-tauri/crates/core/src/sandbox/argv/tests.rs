use super::*;
use crate::sandbox::Access;

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// A merged-/usr machine with the person's home at /home/ann.
fn facts() -> Facts {
    Facts {
        bwrap: Some(p("/usr/bin/bwrap")),
        pasta: Some(p("/usr/bin/pasta")),
        system: vec![
            SystemEntry::Dir(p("/usr")),
            SystemEntry::Symlink {
                path: p("/bin"),
                target: p("usr/bin"),
            },
            SystemEntry::Symlink {
                path: p("/lib64"),
                target: p("usr/lib64"),
            },
            SystemEntry::Dir(p("/etc")),
        ],
        etc_secrets: vec![p("/etc/shadow")],
        home: Some(p("/home/ann")),
        sensitive: vec![
            (p("/home/ann/.ssh"), Kind::Dir),
            (p("/home/ann/.netrc"), Kind::File),
            (p("/home/ann/.local/share/switchboard"), Kind::Dir),
        ],
        masked_grants: vec![],
        program_prefixes: vec![],
        resolver: vec![p("/run/systemd/resolve")],
        deny_kinds: vec![],
    }
}

/// The arguments as one line, for `contains` checks.
fn line(program: &str, cwd: &str, spec: &SandboxSpec, facts: &Facts) -> String {
    let (bwrap, args) = bwrap_args(
        Path::new(program),
        &["--flag".into(), "a b".into()],
        Path::new(cwd),
        spec,
        facts,
        false,
        Some(NetFds { info: 7, block: 8 }),
    )
    .unwrap();
    assert_eq!(bwrap, p("/usr/bin/bwrap"));
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn pos(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} missing from {hay}"))
}

#[test]
fn the_base_layout_isolates_everything() {
    let l = line(
        "/usr/bin/node",
        "/home/ann/proj",
        &SandboxSpec::on(),
        &facts(),
    );
    for part in [
        "--die-with-parent --unshare-all --cap-drop ALL --proc /proc --dev /dev",
        "--ro-bind-try /usr /usr",
        "--symlink usr/bin /bin",
        "--ro-bind-try /etc /etc",
        "--ro-bind /dev/null /etc/shadow",
        "--tmpfs /tmp",
        "--tmpfs /home/ann",
        "--bind-try /home/ann/proj /home/ann/proj",
        "--unsetenv XDG_RUNTIME_DIR",
        "--chdir /home/ann/proj -- /usr/bin/node --flag a b",
    ] {
        assert!(l.contains(part), "{part:?} missing from {l}");
    }
    assert!(!l.contains("--share-net"), "network is off by default: {l}");
    assert!(!l.contains("resolve"), "{l}");
    assert!(
        !l.contains(".ssh"),
        "nothing exposes ~/.ssh, so nothing masks it: {l}"
    );
    // Parents before children: /etc before its masked secret, home before the cwd inside it.
    assert!(pos(&l, "/etc /etc") < pos(&l, "/etc/shadow"));
    assert!(pos(&l, "--tmpfs /home/ann") < pos(&l, "--bind-try /home/ann/proj"));
}

#[test]
fn grants_network_and_denials() {
    let spec = SandboxSpec {
        network: true,
        deny: vec![p("/data/in/private")],
        ..SandboxSpec::on()
            .granted(Path::new("/data/in"), Access::Read)
            .granted(Path::new("/data/out"), Access::Write)
    };
    let mut f = facts();
    f.deny_kinds = vec![(p("/data/in/private"), Kind::Dir)];
    let l = line("/usr/bin/python3", "/srv/app", &spec, &f);
    // SP-13: never the host's network namespace; bubblewrap waits for pasta.
    assert!(!l.contains("--share-net"), "{l}");
    assert!(!l.contains("HTTP_PROXY"), "no lists, no proxy: {l}");
    for part in [
        "--unshare-all --cap-drop",
        "--info-fd 7 --block-fd 8",
        "--ro-bind-try /run/systemd/resolve /run/systemd/resolve",
        "--ro-bind-try /data/in /data/in",
        "--bind-try /data/out /data/out",
        "--tmpfs /data/in/private",
    ] {
        assert!(l.contains(part), "{part:?} missing from {l}");
    }
    assert!(pos(&l, "/data/in /data/in") < pos(&l, "--tmpfs /data/in/private"));
}

#[test]
fn a_grant_of_home_still_hides_credential_stores() {
    let spec = SandboxSpec::on().granted(Path::new("/home/ann"), Access::Read);
    let l = line("/usr/bin/node", "/tmp/w", &spec, &facts());
    // The empty home comes first, the grant lands on it, the masks on top of the grant.
    let tmpfs = pos(&l, "--tmpfs /home/ann ");
    let grant = pos(&l, "--ro-bind-try /home/ann /home/ann");
    let ssh = pos(&l, "--tmpfs /home/ann/.ssh");
    let netrc = pos(&l, "--ro-bind /dev/null /home/ann/.netrc");
    let data = pos(&l, "--tmpfs /home/ann/.local/share/switchboard");
    assert!(
        tmpfs < grant && grant < ssh && grant < netrc && grant < data,
        "{l}"
    );
    // SP-12: a grant of the store itself is not enough: it stays hidden, and the grant is not
    // mounted (`gather` lists it among the masked grants)...
    let explicit = spec.granted(Path::new("/home/ann/.ssh"), Access::Read);
    let f = Facts {
        masked_grants: vec![p("/home/ann/.ssh")],
        ..facts()
    };
    let l = line("/usr/bin/node", "/tmp/w", &explicit, &f);
    assert!(l.contains("--tmpfs /home/ann/.ssh"), "{l}");
    assert!(!l.contains("--ro-bind-try /home/ann/.ssh"), "{l}");
    // ... only the person's unmask, typed with it, shows it.
    let unmasked = SandboxSpec {
        unmask: vec![p("/home/ann/.ssh")],
        ..explicit
    };
    let l = line("/usr/bin/node", "/tmp/w", &unmasked, &facts());
    assert!(!l.contains("--tmpfs /home/ann/.ssh"), "{l}");
    assert!(
        l.contains("--ro-bind-try /home/ann/.ssh /home/ann/.ssh"),
        "{l}"
    );
}

#[test]
fn the_data_directory_as_cwd_becomes_an_empty_stand_in() {
    let l = line(
        "/usr/bin/node",
        "/home/ann/.local/share/switchboard",
        &SandboxSpec::on(),
        &facts(),
    );
    assert!(
        l.contains("--tmpfs /home/ann/.local/share/switchboard"),
        "{l}"
    );
    assert!(
        !l.contains("--bind-try /home/ann/.local/share/switchboard"),
        "{l}"
    );
    assert!(
        l.contains("--chdir /home/ann/.local/share/switchboard --"),
        "{l}"
    );
}

#[test]
fn the_program_prefix_is_shown_read_only_outside_system_dirs() {
    let mut f = facts();
    f.program_prefixes = vec![p("/home/ann/.nvm/versions/node/v22"), p("/usr")];
    let l = line(
        "/home/ann/.nvm/versions/node/v22/bin/node",
        "/tmp/w",
        &SandboxSpec::on(),
        &f,
    );
    assert!(
        l.contains(
            "--ro-bind-try /home/ann/.nvm/versions/node/v22 /home/ann/.nvm/versions/node/v22"
        ),
        "{l}"
    );
    assert_eq!(l.matches("--ro-bind-try /usr /usr").count(), 1, "{l}");
    assert!(pos(&l, "--tmpfs /home/ann ") < pos(&l, "/home/ann/.nvm"));
}

#[test]
fn a_broad_prefix_shows_only_the_program() {
    for (program, prefix) in [
        ("/home/ann/server", "/home/ann"),
        ("/tmp/server", "/tmp"),
        ("/home/server", "/home"),
    ] {
        let mut f = facts();
        f.program_prefixes = vec![p(prefix)];
        let l = line(program, "/srv/w", &SandboxSpec::on(), &f);
        assert!(
            l.contains(&format!("--ro-bind-try {program} {program}")),
            "{l}"
        );
        assert!(
            !l.contains(&format!("--ro-bind-try {prefix} {prefix}")),
            "{l}"
        );
    }
}

#[test]
fn install_prefixes() {
    for (program, want) in [
        (
            "/home/a/.nvm/versions/node/v22/bin/node",
            Some("/home/a/.nvm/versions/node/v22"),
        ),
        ("/home/a/.local/bin/uvx", Some("/home/a/.local")),
        (
            "/work/repo/target/debug/server",
            Some("/work/repo/target/debug"),
        ),
        ("/opt/tool/sbin/x", Some("/opt/tool")),
        ("/bin/sh", None),
        ("/x", None),
    ] {
        assert_eq!(install_prefix(Path::new(program)), want.map(p), "{program}");
    }
}

#[test]
fn no_bubblewrap_fails_closed() {
    let f = Facts {
        bwrap: None,
        ..facts()
    };
    let got = bwrap_args(
        Path::new("/bin/x"),
        &[],
        Path::new("/tmp"),
        &SandboxSpec::on(),
        &f,
        false,
        None,
    );
    assert_eq!(got, Err(WrapError::NoBwrap));
    assert!(WrapError::NoBwrap
        .to_string()
        .contains("not started unsandboxed"));
}

#[test]
fn tmpdir_is_pointed_inside() {
    let (_, args) = bwrap_args(
        Path::new("/bin/x"),
        &[],
        Path::new("/w/x"),
        &SandboxSpec::on(),
        &facts(),
        true,
        None,
    )
    .unwrap();
    let l: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let l = l.join(" ");
    assert!(l.contains("--setenv TMPDIR /tmp"), "{l}");
}

#[test]
fn gather_reads_this_machine() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".netrc"), "x").unwrap();
    let data = tempfile::tempdir().unwrap();
    let other_home = tempfile::tempdir().unwrap();
    std::fs::create_dir(other_home.path().join(".gnupg")).unwrap();
    // A symlink into a store is the store (SP-12).
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("innocent");
    std::os::unix::fs::symlink(home.path().join(".ssh"), &link).unwrap();
    let spec = SandboxSpec {
        deny: vec![home.path().join(".netrc"), home.path().join("missing")],
        ..SandboxSpec::on()
            .granted(&link, Access::Read)
            .granted(&home.path().join(".ssh"), Access::Read)
            .granted(&other_home.path().join(".gnupg"), Access::Read)
    };
    let f = Facts::gather(
        Path::new("/usr/bin/env"),
        &spec,
        Some(home.path()),
        Some(other_home.path()),
        data.path(),
    );
    assert!(f
        .sensitive
        .contains(&(other_home.path().join(".gnupg"), Kind::Dir)));
    for g in [
        link.clone(),
        home.path().join(".ssh"),
        other_home.path().join(".gnupg"),
    ] {
        assert!(f.masked_grants.contains(&g), "{g:?}: {:?}", f.masked_grants);
    }
    let unmasked = SandboxSpec {
        unmask: vec![home.path().join(".ssh")],
        ..spec.clone()
    };
    let g = Facts::gather(
        Path::new("/usr/bin/env"),
        &unmasked,
        Some(home.path()),
        None,
        data.path(),
    );
    assert_eq!(
        g.masked_grants,
        vec![link.clone()],
        "only the typed unmask counts"
    );
    assert!(f
        .system
        .iter()
        .any(|e| matches!(e, SystemEntry::Dir(d) if d == Path::new("/usr"))));
    assert!(f.sensitive.contains(&(home.path().join(".ssh"), Kind::Dir)));
    assert!(f
        .sensitive
        .contains(&(home.path().join(".netrc"), Kind::File)));
    assert!(f
        .sensitive
        .contains(&(data.path().to_path_buf(), Kind::Dir)));
    assert_eq!(f.deny_kinds, vec![(home.path().join(".netrc"), Kind::File)]);
}

/// SP-13: network without pasta is no start at all (never the host's namespace), and a
/// server with domain lists is pointed at the proxy and told of no way around it.
#[test]
fn network_needs_pasta_and_lists_point_at_the_proxy() {
    let net = SandboxSpec {
        network: true,
        ..SandboxSpec::on()
    };
    let f = Facts {
        pasta: None,
        ..facts()
    };
    let fds = Some(NetFds { info: 3, block: 4 });
    let got = bwrap_args(
        Path::new("/bin/x"),
        &[],
        Path::new("/w"),
        &net,
        &f,
        false,
        fds,
    );
    assert_eq!(got, Err(WrapError::NoPasta));
    assert!(WrapError::NoPasta.to_string().contains("apt install passt"));
    let got = bwrap_args(
        Path::new("/bin/x"),
        &[],
        Path::new("/w"),
        &net,
        &facts(),
        false,
        None,
    );
    assert_eq!(got, Err(WrapError::NoNetFds));
    // Off: no pasta needed, no pipes.
    let off = line("/bin/x", "/w", &SandboxSpec::on(), &f);
    assert!(!off.contains("--info-fd"), "{off}");
    let listed = net.domain_allowed("example.com").unwrap();
    let l = line("/bin/x", "/w", &listed, &facts());
    for part in [
        "--setenv HTTPS_PROXY http://127.0.0.1:3128",
        "--setenv http_proxy http://127.0.0.1:3128",
        "--unsetenv NO_PROXY",
        "--unsetenv no_proxy",
    ] {
        assert!(l.contains(part), "{part:?} missing from {l}");
    }
}

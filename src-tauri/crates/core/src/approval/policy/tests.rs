//! Table tests for [`decide`]: every rule kind, the precedence, fail-closed evaluation, limits,
//! grants bound to a tool digest, TD-01 and the trifecta guard.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::*;
use crate::approval::rules::{Limit, Per, Rule, Source};
use crate::ids::{ServerId, ToolRef};

fn rule(id: &str, effect: Effect, server: &str, tool: &str, when: Vec<Condition>) -> Rule {
    Rule {
        id: id.into(),
        effect,
        server: server.into(),
        tool: tool.into(),
        on: crate::approval::rules::On::Tool,
        origin: None,
        when,
        limit: None,
        note: None,
        source: Source::User,
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn tool(server: &str, name: &str) -> ToolRef {
    ToolRef {
        server: ServerId::new(server).unwrap(),
        tool: name.into(),
    }
}

fn model() -> Origin {
    Origin::model(conv())
}

/// The one conversation of these tests.
fn conv() -> ConversationId {
    ConversationId::parse("00000000-0000-4000-8000-000000000001").unwrap()
}

/// Decides a call to `server`.`name` with `a`, from a model, with the defaults of `ctx`.
fn run(policy: &[Rule], server: &str, name: &str, a: Value, ctx: &Context<'_>) -> Decision {
    let t = tool(server, name);
    let origin = model();
    let a = args(a);
    decide(
        &Policy {
            rules: policy.to_vec(),
        },
        &Call {
            server: &t.server,
            kind: RequestKind::Tool,
            name: &t.tool,
            origin: &origin,
            arguments: &a,
            claims: Claims {
                read_only: false,
                open_world: false,
            },
        },
        ctx,
    )
}

fn home() -> Context<'static> {
    Context {
        home: Some(Path::new("/home/ada")),
        ..Context::default()
    }
}

fn verdict(d: &Decision) -> &'static str {
    match d {
        Decision::Allow { .. } => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { .. } => "deny",
    }
}

#[test]
fn default_asks_and_precedence_is_deny_ask_allow() {
    let ctx = home();
    let allow = rule("a", Effect::Allow, "fs", "*", vec![]);
    let ask = rule("q", Effect::Ask, "fs", "write_*", vec![]);
    let deny = rule("d", Effect::Deny, "*", "delete_*", vec![]);
    let all = [allow.clone(), ask.clone(), deny.clone()];
    for (policy, name, want) in [
        (&[][..], "read", "ask"),
        (&all[..], "read", "allow"),
        (&all[..], "write_file", "ask"),
        (&all[..], "delete_file", "deny"),
        (&[deny.clone(), allow.clone()][..], "delete_x", "deny"),
        (&[allow.clone(), deny][..], "delete_x", "deny"),
        (&[allow, ask][..], "write_x", "ask"),
    ] {
        let d = run(policy, "fs", name, json!({}), &ctx);
        assert_eq!(verdict(&d), want, "{name} under {policy:?}: {d:?}");
    }
}

#[test]
fn paths() {
    let ctx = home();
    let allow = rule(
        "projects",
        Effect::Allow,
        "fs",
        "*",
        vec![Condition::PathUnder {
            arg: None,
            prefixes: vec!["~/projects".into(), "/tmp".into()],
        }],
    );
    let deny_ssh = rule(
        "ssh",
        Effect::Deny,
        "*",
        "*",
        vec![Condition::PathUnder {
            arg: Some("path".into()),
            prefixes: vec!["~/.ssh".into()],
        }],
    );
    let p = [allow, deny_ssh];
    for (a, want) in [
        (json!({"path": "/home/ada/projects/x.txt"}), "allow"),
        (json!({"path": "~/projects/sub/../y"}), "allow"),
        (json!({"path": "file:///tmp/z"}), "allow"),
        (json!({"path": "/home/ada/projects/../.ssh/id_rsa"}), "deny"),
        (json!({"path": "/home/ada/projectsX/a"}), "ask"),
        (json!({"path": "/etc/passwd"}), "ask"),
        // A relative path cannot be checked: the allow does not apply, and the ssh rule (which
        // names `path`) cannot prove it is outside ~/.ssh, so it denies (fail closed).
        (json!({"path": "notes.txt"}), "deny"),
        (
            json!({"paths": ["/tmp/a", "/home/ada/projects/b"]}),
            "allow",
        ),
        (json!({"paths": ["/tmp/a", "/var/b"]}), "ask"),
        (json!({"nested": {"target": "/tmp/q"}}), "allow"),
    ] {
        let d = run(&p, "fs", "read", a.clone(), &ctx);
        assert_eq!(verdict(&d), want, "{a}: {d:?}");
    }
    let d = run(&p, "fs", "read", json!({"path": "id_rsa"}), &ctx);
    let Decision::Deny { reason, .. } = d else {
        panic!("{d:?}")
    };
    assert!(reason.contains("could not be checked"), "{reason}");
    // No home known: `~` cannot be expanded, so nothing is allowed through it.
    let d = run(
        &p[..1],
        "fs",
        "read",
        json!({"path": "~/projects/a"}),
        &Context::default(),
    );
    assert_eq!(verdict(&d), "ask");
}

#[test]
fn domains_sql_and_patterns() {
    let ctx = home();
    let web = rule(
        "docs-sites",
        Effect::Allow,
        "web",
        "fetch",
        vec![Condition::DomainIn {
            arg: None,
            domains: vec!["rust-lang.org".into()],
        }],
    );
    let sql = rule(
        "reads",
        Effect::Allow,
        "db",
        "query",
        vec![Condition::SqlOnly {
            arg: "sql".into(),
            operations: vec!["select".into()],
        }],
    );
    let pat = rule(
        "tickets",
        Effect::Allow,
        "jira",
        "get",
        vec![Condition::Matches {
            arg: "key".into(),
            pattern: "PROJ-[0-9]+".into(),
        }],
    );
    let p = [web, sql, pat];
    for (server, name, a, want) in [
        (
            "web",
            "fetch",
            json!({"url": "https://doc.rust-lang.org/std"}),
            "allow",
        ),
        (
            "web",
            "fetch",
            json!({"url": "https://rust-lang.org"}),
            "allow",
        ),
        (
            "web",
            "fetch",
            json!({"url": "https://evilrust-lang.org"}),
            "ask",
        ),
        (
            "web",
            "fetch",
            json!({"url": "https://rust-lang.org.evil.com/"}),
            "ask",
        ),
        (
            "web",
            "fetch",
            json!({"url": "ftp://rust-lang.org/x"}),
            "ask",
        ),
        (
            "db",
            "query",
            json!({"sql": "SELECT * FROM t WHERE a = 1"}),
            "allow",
        ),
        ("db", "query", json!({"sql": "select 1; select 2"}), "allow"),
        (
            "db",
            "query",
            json!({"sql": "SELECT 1; DELETE FROM t"}),
            "ask",
        ),
        ("db", "query", json!({"sql": "DROP TABLE t"}), "ask"),
        ("db", "query", json!({"sql": "SELEKT nonsense ((("}), "ask"),
        ("db", "query", json!({"other": 1}), "ask"),
        ("db", "query", json!({"sql": 5}), "ask"),
        ("jira", "get", json!({"key": "PROJ-12"}), "allow"),
        ("jira", "get", json!({"key": "PROJ-12 OR 1=1"}), "ask"),
        ("jira", "get", json!({"key": 7}), "ask"),
    ] {
        let d = run(&p, server, name, a.clone(), &ctx);
        assert_eq!(verdict(&d), want, "{server}.{name} {a}: {d:?}");
    }
}

#[test]
fn claimed_read_only_relaxes_only_trusted_servers() {
    let p = Policy {
        rules: vec![rule(
            "trusted-reads",
            Effect::Allow,
            "*",
            "*",
            vec![Condition::ReadOnlyHint],
        )],
    };
    let t = tool("s", "t");
    let origin = model();
    let a = Map::new();
    for (claims, trusted, want) in [
        (true, true, "allow"),
        (true, false, "ask"),
        (false, true, "ask"),
        (false, false, "ask"),
    ] {
        let ctx = Context {
            trusted_server: trusted,
            ..Context::default()
        };
        let call = Call {
            server: &t.server,
            kind: RequestKind::Tool,
            name: &t.tool,
            origin: &origin,
            arguments: &a,
            claims: Claims {
                read_only: claims,
                open_world: false,
            },
        };
        assert_eq!(
            verdict(&decide(&p, &call, &ctx)),
            want,
            "claims {claims}, trusted {trusted}"
        );
    }
}

#[test]
fn limits_deny_once_reached_and_budgets_count_writes() {
    let mut r = rule("five-an-hour", Effect::Allow, "fs", "*", vec![]);
    r.limit = Some(Limit {
        max: 5,
        per: Per::Hour,
    });
    let mut ctx = home();
    ctx.counts.insert("five-an-hour".into(), 4);
    assert_eq!(
        verdict(&run(&[r.clone()], "fs", "t", json!({}), &ctx)),
        "allow"
    );
    ctx.counts.insert("five-an-hour".into(), 5);
    let d = run(&[r.clone()], "fs", "t", json!({}), &ctx);
    assert_eq!(verdict(&d), "deny");
    let Decision::Deny { reason, .. } = d else {
        unreachable!()
    };
    assert!(reason.contains("at most 5 such calls per hour"), "{reason}");
    // Another allow without a limit still allows.
    let open = rule("open", Effect::Allow, "fs", "*", vec![]);
    assert_eq!(
        verdict(&run(&[r, open], "fs", "t", json!({}), &ctx)),
        "allow"
    );

    // A write budget: trusted read-only claims are not writes.
    let mut budget = rule("writes", Effect::Allow, "*", "*", vec![Condition::Writes]);
    budget.limit = Some(Limit {
        max: 20,
        per: Per::Conversation,
    });
    let mut ctx = Context::default();
    ctx.counts.insert("writes".into(), 20);
    assert_eq!(verdict(&run(&[budget], "fs", "w", json!({}), &ctx)), "deny");
}

#[test]
fn grants_are_bound_to_the_tool_digest_and_their_conversation() {
    let other = ConversationId::parse("00000000-0000-4000-8000-000000000002").unwrap();
    let grant = |conversation: Option<&ConversationId>| Rule {
        source: Source::Grant {
            conversation: conversation.cloned(),
            tool_digest: "d1".into(),
            agent: None,
            app: None,
        },
        ..rule("g", Effect::Allow, "fs", "read", vec![])
    };
    let same = Context {
        tool_digest: Some("d1"),
        ..Context::default()
    };
    let changed = Context {
        tool_digest: Some("d2"),
        ..Context::default()
    };
    for (g, ctx, want) in [
        (grant(None), &same, "allow"),
        (grant(None), &changed, "ask"),
        (grant(Some(&conv())), &same, "allow"),
        (grant(Some(&other)), &same, "ask"),
    ] {
        assert_eq!(
            verdict(&run(std::slice::from_ref(&g), "fs", "read", json!({}), ctx)),
            want,
            "{g:?}"
        );
    }
}

#[test]
fn a_grant_covers_the_agent_it_was_given_to_and_no_other() {
    let granted = Rule {
        source: Source::Grant {
            conversation: None,
            tool_digest: "d1".into(),
            agent: Some("researcher".into()),
            app: None,
        },
        ..rule("g", Effect::Allow, "fs", "read", vec![])
    };
    let ctx = Context {
        tool_digest: Some("d1"),
        ..Context::default()
    };
    let as_agent = |agent: &str| Origin::Model {
        conversation: conv(),
        agent: Some(Acting {
            agent: crate::agent_data::AgentName::new(agent).unwrap(),
            for_agent: None,
        }),
    };
    let t = tool("fs", "read");
    let a = args(json!({}));
    let decide_for = |granted: &Rule, origin: &Origin| {
        verdict(&decide(
            &Policy {
                rules: vec![granted.clone()],
            },
            &Call {
                server: &t.server,
                kind: RequestKind::Tool,
                name: &t.tool,
                origin,
                arguments: &a,
                claims: Claims {
                    read_only: false,
                    open_world: false,
                },
            },
            &ctx,
        ))
    };
    assert_eq!(decide_for(&granted, &as_agent("researcher")), "allow");
    assert_eq!(decide_for(&granted, &as_agent("browser")), "ask");
    assert_eq!(decide_for(&granted, &model()), "ask", "not the agent");
    // A grant answered to the plain model (or made before grants named an agent) covers the
    // plain model and the person, and no agent.
    let plain = Rule {
        source: Source::Grant {
            conversation: None,
            tool_digest: "d1".into(),
            agent: None,
            app: None,
        },
        ..granted.clone()
    };
    assert_eq!(decide_for(&plain, &model()), "allow");
    assert_eq!(decide_for(&plain, &Origin::Manual), "allow");
    assert_eq!(decide_for(&plain, &as_agent("researcher")), "ask");
}

#[test]
fn the_trifecta_asks_even_under_an_always_grant() {
    let allow = rule("always", Effect::Allow, "http", "post", vec![]);
    let mut ctx = Context {
        flow: Flow {
            private_read: true,
            untrusted_ingested: true,
        },
        can_exfiltrate: true,
        ..Context::default()
    };
    let d = run(
        std::slice::from_ref(&allow),
        "http",
        "post",
        json!({}),
        &ctx,
    );
    match &d {
        Decision::Ask {
            warning: Some(w), ..
        } => assert!(w.contains("leak"), "{w}"),
        other => panic!("expected a warned ask, got {other:?}"),
    }
    // Any leg missing: the grant holds.
    ctx.flow.untrusted_ingested = false;
    assert_eq!(
        verdict(&run(
            std::slice::from_ref(&allow),
            "http",
            "post",
            json!({}),
            &ctx
        )),
        "allow"
    );
    ctx.flow.untrusted_ingested = true;
    ctx.can_exfiltrate = false;
    assert_eq!(
        verdict(&run(&[allow], "http", "post", json!({}), &ctx)),
        "allow"
    );
}

#[test]
fn origin_scoped_rules() {
    let mut r = rule("manual-ok", Effect::Allow, "*", "*", vec![]);
    r.origin = Some("manual".into());
    let p = Policy { rules: vec![r] };
    let t = tool("s", "t");
    let a = Map::new();
    let ctx = Context::default();
    for (origin, want) in [(Origin::Manual, "allow"), (model(), "ask")] {
        let call = Call {
            server: &t.server,
            kind: RequestKind::Tool,
            name: &t.tool,
            origin: &origin,
            arguments: &a,
            claims: Claims {
                read_only: false,
                open_world: false,
            },
        };
        assert_eq!(verdict(&decide(&p, &call, &ctx)), want, "{origin:?}");
    }
}

/// Decides a request of `kind` for `name` on server `s` from `origin` under `policy`.
fn request(policy: &[Rule], kind: RequestKind, name: &str, origin: &Origin) -> Decision {
    let server = ServerId::new("s").unwrap();
    let a = Map::new();
    decide(
        &Policy {
            rules: policy.to_vec(),
        },
        &Call {
            server: &server,
            kind,
            name,
            origin,
            arguments: &a,
            claims: Claims::default(),
        },
        &Context::default(),
    )
}

#[test]
fn reads_prompts_and_completions_are_policy_targets() {
    use crate::approval::rules::On;
    let on = |id: &str, effect, on, name: &str| Rule {
        on,
        ..rule(id, effect, "s", name, vec![])
    };
    let attach = Origin::Attach {
        conversation: Some(conv()),
    };
    let all = [
        RequestKind::Tool,
        RequestKind::Resource,
        RequestKind::Prompt,
        RequestKind::Completion,
    ];
    // No rule: a person's own reads, prompts and completions go ahead, tool calls ask; a
    // model's requests of every kind ask.
    for kind in all {
        let by_hand = request(&[], kind, "x", &Origin::Manual);
        let want = if kind == RequestKind::Tool {
            "ask"
        } else {
            "allow"
        };
        assert_eq!(verdict(&by_hand), want, "{kind:?} by hand");
        assert_eq!(verdict(&request(&[], kind, "x", &attach)), want);
        assert_eq!(verdict(&request(&[], kind, "x", &model())), "ask");
        if want == "allow" {
            assert_eq!(
                by_hand,
                Decision::Allow {
                    by: AllowedBy::Default
                }
            );
        }
    }
    // (rule's `on`, kind it is tried on, whether it applies)
    for (rule_on, kind, applies) in [
        (On::Tool, RequestKind::Tool, true),
        (On::Tool, RequestKind::Resource, false),
        (On::Tool, RequestKind::Prompt, false),
        (On::Resource, RequestKind::Resource, true),
        (On::Resource, RequestKind::Tool, false),
        (On::Prompt, RequestKind::Prompt, true),
        (On::Prompt, RequestKind::Completion, true),
        (On::Prompt, RequestKind::Resource, false),
        (On::Any, RequestKind::Tool, true),
        (On::Any, RequestKind::Resource, true),
        (On::Any, RequestKind::Completion, true),
    ] {
        let deny = on("no", Effect::Deny, rule_on, "*");
        let d = request(&[deny], kind, "x", &Origin::Manual);
        assert_eq!(
            verdict(&d) == "deny",
            applies,
            "{rule_on:?} on {kind:?}: {d:?}"
        );
    }
    // The name pattern matches a resource's URI and a prompt's name.
    let secrets = on("no-secrets", Effect::Deny, On::Resource, "file:///etc/*");
    let r = |uri| {
        request(
            std::slice::from_ref(&secrets),
            RequestKind::Resource,
            uri,
            &attach,
        )
    };
    assert_eq!(verdict(&r("file:///etc/passwd")), "deny");
    assert_eq!(verdict(&r("file:///home/ada/notes.md")), "allow");
}

#[test]
fn what_allowed_is_typed_from_the_rule_source_not_its_id() {
    let user = rule("mine", Effect::Allow, "s", "*", vec![]);
    let granted = Rule {
        source: Source::Grant {
            conversation: None,
            tool_digest: "d".into(),
            agent: None,
            app: None,
        },
        ..rule("grant-s-t-abc123", Effect::Allow, "s", "*", vec![])
    };
    let ctx = Context {
        tool_digest: Some("d"),
        ..Context::default()
    };
    assert_eq!(
        run(&[user], "s", "t", json!({}), &ctx),
        Decision::Allow {
            by: AllowedBy::Rule("mine".into())
        }
    );
    assert_eq!(
        run(&[granted], "s", "t", json!({}), &ctx),
        Decision::Allow {
            by: AllowedBy::Grant("grant-s-t-abc123".into())
        }
    );
    // A person's rule cannot take a grant's name.
    let poser = rule("grant-looks-real", Effect::Allow, "s", "*", vec![]);
    assert!(poser.validate().is_err());
    assert!(rule("GRANT-x", Effect::Allow, "s", "*", vec![])
        .validate()
        .is_err());
}

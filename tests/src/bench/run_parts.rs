//! TEMPORARY experiment (removed before commit): the pieces of `Host::run_tool`, each timed alone
//! at c=1, replaying the store calls the core makes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use switchboard_core::approval::audit::{Actor, AuditContext, AuditEvent, CallRef, Verdict};
use switchboard_core::approval::{decide, Call, Context, Flow, Origin, Policy};
use switchboard_core::host::{CallOptions, Host};
use switchboard_core::ids::ToolRef;

use super::percentile;

fn report(name: &str, mut v: Vec<u64>) {
    v.sort_unstable();
    let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64 / 1000.0;
    eprintln!(
        "  {name:<44} p50 {:>8.1} us  p90 {:>8.1}  p99 {:>8.1}  mean {:>8.1}",
        percentile(&v, 0.5) as f64 / 1000.0,
        percentile(&v, 0.9) as f64 / 1000.0,
        percentile(&v, 0.99) as f64 / 1000.0,
        mean
    );
}

pub async fn run(host: &Host, echo: &ToolRef, rule: &str, n: usize) -> Result<()> {
    let store = host.store();
    let origin = Origin::Manual;
    let args = super::switchboard::arguments_pub();
    let catalog = host
        .handle(&echo.server)
        .ok_or_else(|| anyhow!("no handle"))?
        .catalog();
    let info = catalog
        .tools
        .iter()
        .find(|t| t.name == *echo.tool)
        .ok_or_else(|| anyhow!("no echo"))?
        .clone();
    let mut t: [Vec<u64>; 11] = Default::default();
    let time = |v: &mut Vec<u64>, s: Instant| v.push(s.elapsed().as_nanos() as u64);
    for _ in 0..n {
        let s = Instant::now();
        let rules: Vec<_> = store
            .policy_rules()
            .await?
            .into_iter()
            .map(|r| r.rule)
            .collect();
        time(&mut t[0], s);
        let s = Instant::now();
        let tags = store.server_tags(&echo.server).await?;
        time(&mut t[1], s);
        let s = Instant::now();
        let digest = switchboard_core::approval::pins::tool_digest(&info);
        time(&mut t[2], s);
        let s = Instant::now();
        let call = Call {
            tool: echo,
            origin: &origin,
            arguments: &args,
            claims_read_only: false,
        };
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let ctx = Context {
            trusted_server: !tags.is_empty(),
            tool_digest: Some(&digest),
            counts: HashMap::new(),
            flow: Flow::default(),
            can_exfiltrate: false,
            home: home.as_deref(),
        };
        let d = decide(&Policy { rules }, &call, &ctx);
        std::hint::black_box(&d);
        time(&mut t[3], s);
        let s = Instant::now();
        store.record_rule_hit(rule, None).await?;
        time(&mut t[4], s);
        let audit = AuditContext::for_call(echo, &origin, CallRef::random());
        let s = Instant::now();
        let entries = vec![
            (AuditEvent::proposed(&args, &origin), audit.clone()),
            (
                AuditEvent::Decided {
                    decision: Verdict::Allow,
                    by: Actor::Policy {
                        rule: Some(rule.to_owned()),
                    },
                    reason: None,
                },
                audit.clone(),
            ),
            (AuditEvent::Started, audit.clone()),
        ];
        let k = host.audit_all(entries).await;
        time(&mut t[5], s);
        if k != 3 {
            return Err(anyhow!("audit_all wrote {k}"));
        }
        let s = Instant::now();
        let r = host
            .call_tool(echo, args.clone(), CallOptions::default())
            .await?;
        time(&mut t[6], s);
        let s = Instant::now();
        let fin = AuditEvent::finished(&r, false, Duration::from_micros(50));
        if !host.audit(fin, audit).await {
            return Err(anyhow!("audit"));
        }
        time(&mut t[7], s);
        let s = Instant::now();
        let r = host
            .run_tool(echo, args.clone(), origin.clone(), CallOptions::default())
            .await?;
        time(&mut t[8], s);
        std::hint::black_box(&r);
        let s = Instant::now();
        let _ = host.pending_approvals();
        time(&mut t[9], s);
        let mut batch = Vec::new();
        for _ in 0..16 {
            let a = AuditContext::for_call(echo, &origin, CallRef::random());
            batch.push((AuditEvent::proposed(&args, &origin), a.clone()));
            batch.push((
                AuditEvent::Decided {
                    decision: Verdict::Allow,
                    by: Actor::Policy {
                        rule: Some(rule.to_owned()),
                    },
                    reason: None,
                },
                a.clone(),
            ));
            batch.push((AuditEvent::Started, a.clone()));
            batch.push((
                AuditEvent::finished(&r, false, Duration::from_micros(50)),
                a,
            ));
        }
        let s = Instant::now();
        let k = host.audit_all(batch).await;
        time(&mut t[10], s);
        if k != 64 {
            return Err(anyhow!("batch wrote {k}"));
        }
    }
    eprintln!("run_tool parts, c=1, {n} iterations (each timed alone):");
    let names = [
        "store.policy_rules() (reader)",
        "store.server_tags() (reader)",
        "tool_digest(info)",
        "decide() (pure)",
        "store.record_rule_hit() (writer, commit)",
        "host.audit_all(3 events) (writer, commit)",
        "host.call_tool (the call itself)",
        "host.audit(finished) (writer, commit)",
        "host.run_tool (whole)",
        "pending_approvals()",
        "audit_all(64 events = 16 calls) one commit",
    ];
    for (i, name) in names.iter().enumerate() {
        report(name, std::mem::take(&mut t[i]));
    }
    Ok(())
}

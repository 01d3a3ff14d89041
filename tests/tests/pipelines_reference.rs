//! A pipeline over two reference servers from npm (issue 15, point 6, and its Tests section):
//! `server-memory` (a knowledge graph) and `server-filesystem`, both of which type their
//! results with an `outputSchema`. Data flows both ways between them: a file's text becomes a
//! graph query, and what the graph knows is written to another file. The run is approved as a
//! whole, the steps that write still ask once the servers are tagged trusted (their reads do
//! not), a bad mapping is refused before either server sees a call, and a past run replays
//! with its inputs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::approval::{Answer, Origin};
use switchboard_core::config::ValueSource;
use switchboard_core::host::{Host, PipelineError, PipelineOutcome};
use switchboard_core::ids::ServerId;
use switchboard_core::pipeline_data::{parse, Format, PipelineName};
use switchboard_core::pipelines::RunStatus;
use switchboard_core::store::{AuditQuery, ServerTag};
use switchboard_tests::*;

/// A host running `memory` (its graph in the temp folder) and `fs` (allowed only `desk/`),
/// with the temp folder and `desk/`; `None` when the reference servers are not installed.
async fn memory_and_files() -> Option<(Host, tempfile::TempDir, PathBuf)> {
    let memory = reference_server("server-memory")?;
    let files = reference_server("server-filesystem")?;
    let (host, tmp) = test_host().await;
    let desk = tmp.path().join("desk");
    std::fs::create_dir(&desk).unwrap();
    let graph = tmp.path().join("graph.jsonl");
    start_trusted(
        &host,
        with_env(
            stdio_spec("memory", &node(), &[memory.to_str().unwrap()]),
            "MEMORY_FILE_PATH",
            ValueSource::Plain(graph.to_string_lossy().into_owned()),
        ),
    )
    .await;
    start_trusted(
        &host,
        stdio_spec(
            "fs",
            &node(),
            &[files.to_str().unwrap(), desk.to_str().unwrap()],
        ),
    )
    .await;
    Some((host, tmp, desk))
}

const RECALL: &str = r#"
name = "recall"
description = "who a note names, and what the graph knows of them, written to a file"

[[inputs]]
name = "note"
schema = { type = "string" }

[[inputs]]
name = "out"
schema = { type = "string" }

[[steps]]
id = "seed"
tool = "memory/create_entities"
args = { entities = [{ name = "Ada Lovelace", entityType = "person", observations = ["wrote the first program"] }] }

[[steps]]
id = "read"
tool = "fs/read_text_file"
args = { path = { "$input" = "note" } }

[[steps]]
id = "find"
tool = "memory/search_nodes"
args = { query = { "$from" = "read", pointer = "/content" } }

[[steps]]
id = "save"
tool = "fs/write_file"
args = { path = { "$input" = "out" }, content = { "$from" = "find", pointer = "/entities/0/observations/0" } }
"#;

/// Runs `job`, answering yes to every question until it ends; returns its result and the
/// tools asked about, in order. The pipeline's own question (the first) must have said which
/// steps would ask again, and exactly those must have asked.
async fn answering(
    host: &Host,
    job: tokio::task::JoinHandle<Result<PipelineOutcome, PipelineError>>,
) -> (PipelineOutcome, Vec<String>) {
    let (outcome, asked, told) = answering_told(host, job).await;
    let expected: Vec<String> = told
        .iter()
        .map(|t| t.split('/').next_back().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        asked[1..],
        expected[..],
        "the steps that asked are not the ones the pipeline's question named"
    );
    (outcome, asked)
}

/// [`answering`], also returning the tools of the steps the pipeline's question said would ask
/// again (`asks_again`), in order.
async fn answering_told(
    host: &Host,
    job: tokio::task::JoinHandle<Result<PipelineOutcome, PipelineError>>,
) -> (PipelineOutcome, Vec<String>, Vec<String>) {
    let mut told = Vec::new();
    let mut asked = Vec::new();
    while !job.is_finished() {
        let waited = eventually(Duration::from_secs(30), || {
            job.is_finished() || !host.pending_approvals().is_empty()
        })
        .await;
        assert!(waited, "the run neither ended nor asked");
        for q in host.pending_approvals() {
            if asked.is_empty() {
                let asks = q.arguments["asks_again"].as_array().cloned();
                let asks = asks.expect("the pipeline's question lists the steps that ask again");
                told = asks
                    .iter()
                    .map(|a| a["tool"].as_str().unwrap_or_default().to_owned())
                    .collect();
                assert_eq!(
                    q.reason.contains("will ask again"),
                    !told.is_empty(),
                    "{}",
                    q.reason
                );
            }
            asked.push(q.tool.clone());
            host.answer_approval(q.nonce.as_str(), Answer::ALLOW)
                .await
                .unwrap();
        }
    }
    (job.await.unwrap().unwrap(), asked, told)
}

/// How many audit entries name `server`.
async fn audited(host: &Host, server: &str) -> usize {
    let page = host
        .audit_page(&AuditQuery {
            limit: 1000,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    page.entries
        .iter()
        .filter(|e| e.server.as_deref() == Some(server) && e.tool.is_some())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_over_memory_and_filesystem_runs_asks_for_writes_and_replays() {
    let Some((host, _tmp, desk)) = memory_and_files().await else {
        return;
    };
    let note = desk.join("note.txt");
    std::fs::write(&note, "Ada Lovelace").unwrap();
    let out = desk.join("known.txt");
    let p = parse(RECALL, Format::Toml).unwrap();
    host.add_pipeline(&p).await.unwrap();

    // What flows where, checked against the two servers' live catalogs and outputSchemas.
    let plan = host.check_pipeline(&p).await.unwrap().unwrap();
    let lines = plan.lines();
    for want in [
        "step 3 \"find\" memory/search_nodes.query <- step 2 \"read\" (fs/read_text_file) /content",
        "step 4 \"save\" fs/write_file.content <- step 3 \"find\" (memory/search_nodes) /entities/0/observations/0",
    ] {
        assert!(lines.contains(&want.to_owned()), "{want}\n{lines:?}");
    }

    let given: Map<String, Value> = json!({
        "note": note.to_string_lossy(),
        "out": out.to_string_lossy(),
    })
    .as_object()
    .unwrap()
    .clone();
    let runner = host.clone();
    let inputs = given.clone();
    let job = tokio::spawn(async move {
        let name = PipelineName::new("recall").unwrap();
        runner
            .run_pipeline(&name, None, inputs, Origin::Manual, None)
            .await
    });
    // Servers the person has not tagged trusted: the pipeline is asked about as a whole, then
    // each step still asks (their read-only claims relax nothing).
    let (first, asked) = answering(&host, job).await;
    assert_eq!(
        asked,
        [
            "recall",
            "create_entities",
            "read_text_file",
            "search_nodes",
            "write_file"
        ]
    );
    assert_eq!(first.run.status, RunStatus::Succeeded, "{first:?}");
    // The file's text went to the graph; the graph's answer went to the other file.
    assert_eq!(
        first.steps[2].result.as_ref().unwrap()["structuredContent"]["entities"][0]["name"],
        "Ada Lovelace"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "wrote the first program"
    );
    // Every step reached the audit log (proposed, decided, started, finished at least).
    assert!(audited(&host, "memory").await >= 8);
    assert!(audited(&host, "fs").await >= 8);

    // Tagged trusted, the reads are covered by the pipeline's approval and the writes ask.
    for s in ["memory", "fs"] {
        host.set_server_tags(&ServerId::new(s).unwrap(), &[ServerTag::Trusted])
            .await
            .unwrap();
    }
    std::fs::remove_file(&out).unwrap();
    let replayer = host.clone();
    let id = first.run.id.clone();
    let job = tokio::spawn(async move {
        replayer
            .replay_pipeline_run(&id, Origin::Manual, None)
            .await
    });
    let (again, asked, told) = answering_told(&host, job).await;
    assert_eq!(asked, ["recall", "create_entities", "write_file"]);
    // The question named exactly the two writes.
    assert_eq!(told, ["memory/create_entities", "fs/write_file"]);
    assert_eq!(again.run.status, RunStatus::Succeeded, "{again:?}");
    assert_eq!(again.run.replay_of.as_deref(), Some(first.run.id.as_str()));
    assert_eq!(again.run.inputs, Value::Object(given));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "wrote the first program"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_mapping_over_memory_and_filesystem_is_refused_before_anything_runs() {
    let Some((host, tmp, desk)) = memory_and_files().await else {
        return;
    };
    allow_every_call(&host).await;
    // `/text` is not in read_text_file's outputSchema; `/entities` is an array, and write_file
    // wants a string.
    let bad = parse(
        &json!({
            "name": "bad-recall",
            "steps": [
                {"id": "seed", "tool": "memory/create_entities",
                 "args": {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}},
                {"id": "read", "tool": "fs/read_text_file", "args": {"path": "note.txt"}},
                {"id": "find", "tool": "memory/search_nodes",
                 "args": {"query": {"$from": "read", "pointer": "/text"}}},
                {"id": "save", "tool": "fs/write_file",
                 "args": {"path": "out.txt", "content": {"$from": "find", "pointer": "/entities"}}},
            ]
        })
        .to_string(),
        Format::Json,
    )
    .unwrap();
    host.add_pipeline(&bad).await.unwrap();
    let err = host
        .run_pipeline(
            &PipelineName::new("bad-recall").unwrap(),
            None,
            Map::new(),
            Origin::Manual,
            None,
        )
        .await
        .unwrap_err();
    let PipelineError::Mapping(errors) = &err else {
        panic!("not refused as a mapping: {err}");
    };
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 2, "{text:?}");
    assert!(text[0].contains("\"/text\" does not resolve"), "{text:?}");
    assert!(
        text[1].contains("would get array but fs/write_file wants string"),
        "{text:?}"
    );
    // Neither server saw a call: no graph file, no new file, nothing audited, no run.
    assert!(!tmp.path().join("graph.jsonl").exists());
    assert!(!desk.join("out.txt").exists());
    assert_eq!(audited(&host, "memory").await, 0);
    assert_eq!(audited(&host, "fs").await, 0);
    assert!(host.pipeline_runs(None).await.unwrap().is_empty());
    host.shutdown().await;
}

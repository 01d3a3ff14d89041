//! The IPC audit (see `audit.rs`) for the Pipelines page (issue 15, point 6): through the real
//! invoke path, an empty store lists nothing, and hostile arguments (a bad name, a missing
//! pipeline or run, inputs that are not an object, a forged run id, wrong JSON) get typed
//! errors, never a panic, and the app keeps answering.

use serde_json::json;

use super::audit::{app, call};

#[test]
fn pipelines_refuse_hostile_input_with_typed_errors() {
    let app = app();
    assert_eq!(call(&app, "list_pipelines", json!({})).unwrap(), "[]");
    assert_eq!(
        call(&app, "pipeline_runs", json!({"name": null})).unwrap(),
        "[]"
    );
    let run = call(&app, "open_run", json!({})).unwrap();
    let run: String = serde_json::from_str(&run).unwrap();
    let refused = [
        (
            "show_pipeline",
            json!({"name": "../etc\u{202E}", "version": null}),
        ),
        ("show_pipeline", json!({"name": "ghost", "version": 3})),
        (
            "show_pipeline",
            json!({"name": "x".repeat(100_000), "version": null}),
        ),
        ("show_pipeline", json!({"name": 5, "version": "one"})),
        (
            "run_pipeline",
            json!({"runId": run, "name": "ghost", "version": null, "inputsJson": "[1]"}),
        ),
        (
            "run_pipeline",
            json!({"runId": "run-forged", "name": "ghost", "version": null, "inputsJson": "{}"}),
        ),
        (
            "run_pipeline",
            json!({"runId": run, "name": "ghost", "version": null, "inputsJson": "{}"}),
        ),
        ("pipeline_runs", json!({"name": "bad name!"})),
        (
            "replay_pipeline_run",
            json!({"runId": run, "past": "run-nothing"}),
        ),
        ("replay_pipeline_run", json!({"runId": "nope", "past": "x"})),
    ];
    for (cmd, args) in refused {
        let err = call(&app, cmd, args.clone()).unwrap_err();
        assert!(!err.is_empty(), "{cmd} {args}");
    }
    let missing = call(
        &app,
        "show_pipeline",
        json!({"name": "ghost", "version": null}),
    )
    .unwrap_err();
    assert!(
        missing.contains("not_found") || missing.contains("NotFound"),
        "{missing}"
    );
    // Still answering.
    assert_eq!(call(&app, "list_pipelines", json!({})).unwrap(), "[]");
}

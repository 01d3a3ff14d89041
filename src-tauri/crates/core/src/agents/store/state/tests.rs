//! The run state store: versions, optimistic concurrency, history, and every limit.

use serde_json::json;

use super::*;

async fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("sb.sqlite")).await.unwrap();
    (dir, store)
}

#[tokio::test]
async fn every_write_is_a_version_and_reads_get_the_newest() {
    let (_d, s) = store().await;
    let run = RunId::random();
    let other = RunId::random();
    assert!(s.state_get(&run, "plan").await.unwrap().is_none());
    let first = s
        .state_put(&run, "plan", &json!({"steps": 3}), "planner", None)
        .await
        .unwrap();
    assert_eq!((first.version, first.bytes), (1, 11));
    let second = s
        .state_put(&run, "plan", &json!(["a", "b"]), "coder", Some(1))
        .await
        .unwrap();
    assert_eq!(second.version, 2);
    let got = s.state_get(&run, "plan").await.unwrap().unwrap();
    assert_eq!(
        (got.version, got.value, got.author.as_str()),
        (2, json!(["a", "b"]), "coder")
    );
    let history = s.state_history(&run, "plan").await.unwrap();
    let seen: Vec<_> = history
        .iter()
        .map(|e| (e.version, e.author.as_str(), e.value.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, "planner", json!({"steps": 3})),
            (2, "coder", json!(["a", "b"]))
        ]
    );
    // Scopes do not see each other.
    assert!(s.state_get(&other, "plan").await.unwrap().is_none());
    assert!(s.state_list(&other).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_key_keeps_only_its_newest_versions() {
    let (_d, s) = store().await;
    let run = RunId::random();
    let writes = LIMITS.versions_kept + 5;
    for n in 1..=writes {
        s.state_put(&run, "loop", &json!(n), "looper", None)
            .await
            .unwrap();
    }
    let history = s.state_history(&run, "loop").await.unwrap();
    let versions: Vec<u32> = history.iter().map(|e| e.version).collect();
    let want: Vec<u32> = (writes - LIMITS.versions_kept + 1..=writes).collect();
    assert_eq!(versions, want);
    // Versions go on counting: a writer naming the newest still wins.
    let next = s
        .state_put(&run, "loop", &json!("last"), "looper", Some(writes))
        .await
        .unwrap();
    assert_eq!(next.version, writes + 1);
}

#[tokio::test]
async fn list_gives_the_newest_of_every_key() {
    let (_d, s) = store().await;
    let run = RunId::random();
    s.state_put(&run, "b/x", &json!(1), "one", None)
        .await
        .unwrap();
    s.state_put(&run, "a", &json!("long text"), "one", None)
        .await
        .unwrap();
    s.state_put(&run, "b/x", &json!(22), "two", None)
        .await
        .unwrap();
    let list = s.state_list(&run).await.unwrap();
    let seen: Vec<_> = list
        .iter()
        .map(|k| (k.key.as_str(), k.version, k.author.as_str(), k.bytes))
        .collect();
    assert_eq!(seen, [("a", 1, "one", 11), ("b/x", 2, "two", 2)]);
}

#[tokio::test]
async fn a_stale_expected_version_is_a_conflict_naming_the_newest() {
    let (_d, s) = store().await;
    let run = RunId::random();
    s.state_put(&run, "k", &json!(1), "planner", Some(0))
        .await
        .unwrap();
    s.state_put(&run, "k", &json!(2), "coder", Some(1))
        .await
        .unwrap();
    let err = s
        .state_put(&run, "k", &json!(3), "critic", Some(1))
        .await
        .unwrap_err();
    match &err {
        RunStateError::Conflict {
            expected: 1,
            newest: Some((2, who)),
            ..
        } if who == "coder" => {}
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("version 2, written by coder"),
        "{err}"
    );
    // "Must be new" on an existing key, and a version on a missing key.
    let err = s
        .state_put(&run, "k", &json!(3), "critic", Some(0))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    let err = s
        .state_put(&run, "missing", &json!(3), "critic", Some(4))
        .await
        .unwrap_err();
    assert!(
        matches!(err, RunStateError::Conflict { newest: None, .. }),
        "{err}"
    );
    // Nothing of the refused writes was stored.
    assert_eq!(s.state_history(&run, "k").await.unwrap().len(), 2);
    assert!(s.state_get(&run, "missing").await.unwrap().is_none());
}

#[tokio::test]
async fn keys_are_checked() {
    let (_d, s) = store().await;
    let run = RunId::random();
    let (long, longest) = ("k".repeat(129), "k".repeat(128));
    for bad in ["", "a b", "ключ", "a\nb", "x;DROP", long.as_str()] {
        let err = s
            .state_put(&run, bad, &json!(1), "a", None)
            .await
            .unwrap_err();
        assert!(
            matches!(err, RunStateError::BadKey { .. }),
            "{bad:?}: {err}"
        );
    }
    for good in ["a", "findings/web-1.v2", "A_Z", longest.as_str()] {
        s.state_put(&run, good, &json!(1), "a", None).await.unwrap();
    }
}

#[tokio::test]
async fn a_value_over_64_kib_is_refused_with_a_sentence() {
    let (_d, s) = store().await;
    let run = RunId::random();
    // 65,536 bytes of JSON exactly: the quotes count.
    let fits = json!("x".repeat(LIMITS.value_bytes - 2));
    s.state_put(&run, "k", &fits, "a", None).await.unwrap();
    let big = json!("x".repeat(70 * 1024));
    let err = s.state_put(&run, "k", &big, "a", None).await.unwrap_err();
    assert!(matches!(err, RunStateError::ValueTooLarge { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "the value is 71 KiB of JSON; the limit is 64 KiB: store a summary, or split it across \
         several keys"
    );
    assert_eq!(s.state_history(&run, "k").await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_newest_values_of_a_scope_share_one_mib() {
    let (_d, s) = store().await;
    let run = RunId::random();
    let chunk = json!("y".repeat(60_000)); // 60,002 bytes
    for i in 0..17 {
        s.state_put(&run, &format!("k{i}"), &chunk, "a", None)
            .await
            .unwrap();
    }
    let err = s
        .state_put(&run, "k17", &chunk, "a", None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            RunStateError::ScopeFull {
                used: 1_020_034,
                ..
            }
        ),
        "{err}"
    );
    // Rewriting a key replaces its share (history does not count), so there is room again.
    s.state_put(&run, "k0", &json!("short"), "a", None)
        .await
        .unwrap();
    s.state_put(&run, "k17", &chunk, "a", None).await.unwrap();
    // Another scope has its own budget.
    s.state_put(&RunId::random(), "k", &chunk, "a", None)
        .await
        .unwrap();
}

#[tokio::test]
async fn at_most_500_keys() {
    let (_d, s) = store().await;
    let run = RunId::random();
    for i in 0..LIMITS.keys {
        s.state_put(&run, &format!("k{i}"), &json!(i), "a", None)
            .await
            .unwrap();
    }
    let err = s
        .state_put(&run, "one-more", &json!(1), "a", None)
        .await
        .unwrap_err();
    assert!(matches!(err, RunStateError::TooManyKeys), "{err}");
    // An existing key may still be written.
    let k = s.state_put(&run, "k7", &json!(8), "a", None).await.unwrap();
    assert_eq!(k.version, 2);
    assert_eq!(s.state_list(&run).await.unwrap().len(), LIMITS.keys);
}

#[tokio::test]
async fn notes_are_a_bounded_log() {
    let (_d, s) = store().await;
    let run = RunId::random();
    let n = s.state_add_note(&run, "planner", "first").await.unwrap();
    assert_eq!(n.seq, 1);
    s.state_add_note(&run, PERSON, "second").await.unwrap();
    let notes = s.state_notes(&run).await.unwrap();
    let seen: Vec<_> = notes
        .iter()
        .map(|n| (n.seq, n.author.as_str(), n.text.as_str()))
        .collect();
    assert_eq!(seen, [(1, "planner", "first"), (2, PERSON, "second")]);
    let err = s
        .state_add_note(&run, "a", &"n".repeat(LIMITS.note_bytes + 1))
        .await
        .unwrap_err();
    assert!(matches!(err, RunStateError::NoteTooLarge { .. }), "{err}");
    let err = s.state_add_note(&run, "a", "  \n").await.unwrap_err();
    assert!(matches!(err, RunStateError::EmptyNote), "{err}");
    s.state_add_note(&run, "a", &"n".repeat(LIMITS.note_bytes))
        .await
        .unwrap();
    for i in 4..=LIMITS.notes {
        s.state_add_note(&run, "a", &format!("note {i}"))
            .await
            .unwrap();
    }
    let err = s.state_add_note(&run, "a", "too many").await.unwrap_err();
    assert!(matches!(err, RunStateError::TooManyNotes), "{err}");
    assert_eq!(s.state_notes(&run).await.unwrap().len(), LIMITS.notes);
}

#[tokio::test]
async fn of_two_writers_naming_the_same_version_exactly_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb.sqlite");
    // Two handles on one file, as the app and a CLI would have.
    let (a, b) = (
        Store::open(&path).await.unwrap(),
        Store::open(&path).await.unwrap(),
    );
    let run = RunId::random();
    let (va, vb) = (json!("a"), json!("b"));
    for round in 0..20u32 {
        let key = format!("k{round}");
        let (ra, rb) = tokio::join!(
            a.state_put(&run, &key, &va, "alpha", Some(0)),
            b.state_put(&run, &key, &vb, "beta", Some(0)),
        );
        let wins = [ra.is_ok(), rb.is_ok()];
        assert_eq!(wins.iter().filter(|w| **w).count(), 1, "{ra:?} {rb:?}");
        let loser = if wins[0] { rb } else { ra };
        assert!(
            matches!(
                loser,
                Err(RunStateError::Conflict {
                    newest: Some((1, _)),
                    ..
                })
            ),
            "{loser:?}"
        );
        let history = a.state_history(&run, &key).await.unwrap();
        assert_eq!(history.len(), 1);
    }
}

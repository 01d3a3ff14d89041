//! A skill attached to a conversation in the real app window (WebDriver, under Xvfb in `make
//! test`): the skills server fixture (TypeScript SDK v2, `tests/fixtures/skills_server.mjs`)
//! offers one skill; the Skills page lists it as held without reading it; the chat's "Attach
//! skill" dialog approves it and attaches it; the model receives the verified SKILL.md. The
//! server's read log proves only SKILL.md was fetched, and only at attach time. Then the same
//! flow against a server that serves a tampered SKILL.md shows the refusal and attaches nothing.
//! Screenshots go to `tests/results/e2e/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;
use std::time::Duration;

use switchboard_tests::e2e::{artifacts, e2e_available, ONE_WINDOW};
use switchboard_tests::fake_llm::scenario::{Reply, Scenario};
use switchboard_tests::fake_llm::FakeLlm;
use switchboard_tests::scenario::{app_window, AppData};
use switchboard_tests::skills_fixture::{args, peers, reads};
use switchboard_tests::webdriver::{Driver, Session};

const WAIT: Duration = Duration::from_secs(30);
const SKILL_MD: &str = "skill://pdf-tools/SKILL.md";

/// The skills server `skills` (in `mode`) added and trusted, and a keyless provider `fake`.
fn setup(data: &Path, llm: &FakeLlm, mode: &str) -> std::path::PathBuf {
    let (node, modules) = peers().expect("checked by the caller");
    let log = data.join("reads.log");
    let fixture = args(&modules, &log, mode, &data.join("variant"));
    let fixture: Vec<&str> = fixture.iter().map(String::as_str).collect();
    AppData::on(data)
        .server("skills", &node, &fixture)
        .provider("fake", "ollama", &llm.openai_base(), "m1");
    log
}

/// Starts the app and waits for the skills server to run.
async fn open(driver: &Driver) -> Session {
    let s = app_window(driver).await;
    s.wait_text(r#"article[data-name="skills"] .badge"#, "running", WAIT)
        .await
        .unwrap();
    s
}

/// Opens the chat and its "Attach skill" dialog.
async fn attach_dialog(s: &Session) {
    s.click_on(r#".tab[data-page="chat"]"#, WAIT).await.unwrap();
    s.wait_for(r#".chat-provider option[value="fake"]"#, WAIT)
        .await
        .unwrap();
    s.click_on(".attach-skill", WAIT).await.unwrap();
    s.wait_for(r#".skill-picker .skill-row[data-skill="pdf-tools"]"#, WAIT)
        .await
        .unwrap();
}

/// The composer's text once it contains `needle` (the read behind "Attach" is asynchronous), or
/// whatever it holds when the wait runs out.
async fn composer_once(s: &Session, needle: &str) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let v = s
            .execute("return document.querySelector('.chat-input').value;")
            .await
            .unwrap();
        let text = v.as_str().unwrap_or_default().to_owned();
        if text.contains(needle) || std::time::Instant::now() > deadline {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_skill_is_approved_attached_and_sent_verified() {
    if !e2e_available() || peers().is_none() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["I read the skill."])]))
        .await
        .unwrap();
    let log = setup(data, &llm, "good");
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = open(&driver).await;

    // The Skills page lists it, held, and reads nothing.
    s.click_on(r#".tab[data-page="skills"]"#, WAIT)
        .await
        .unwrap();
    s.wait_text(
        r#".skill-row[data-skill="pdf-tools"] .skill-state"#,
        "held for review",
        WAIT,
    )
    .await
    .unwrap();
    s.screenshot(&artifacts().join("40-skills-page.png"))
        .await
        .unwrap();
    assert_eq!(reads(&log), Vec::<String>::new(), "listing read a file");

    attach_dialog(&s).await;
    assert!(s
        .find_all(".skill-picker .skill-attach")
        .await
        .unwrap()
        .is_empty());
    s.click_on(".skill-picker .skill-approve", WAIT)
        .await
        .unwrap();
    s.wait_for(".skill-picker .skill-attach", WAIT)
        .await
        .unwrap();
    assert_eq!(reads(&log), Vec::<String>::new(), "approving read a file");
    s.screenshot(&artifacts().join("41-skill-approved.png"))
        .await
        .unwrap();
    s.click_on(".skill-picker .skill-attach", WAIT)
        .await
        .unwrap();
    let composer = composer_once(&s, "Attached skill").await;
    assert!(
        composer.contains("Attached skill pdf-tools") && composer.contains("Skill body."),
        "{composer}"
    );
    assert_eq!(
        reads(&log),
        vec![SKILL_MD],
        "attaching read more than SKILL.md"
    );
    s.screenshot(&artifacts().join("42-skill-attached.png"))
        .await
        .unwrap();

    s.click_on(".chat-send", WAIT).await.unwrap();
    s.wait_text(".chat-log", "I read the skill.", WAIT)
        .await
        .unwrap();
    let sent = llm.requests()[0].body.to_string();
    assert!(
        sent.contains("Skill body.") && sent.contains("Fill and merge PDF forms"),
        "{sent}"
    );
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_tampered_skill_is_refused_in_the_window() {
    if !e2e_available() || peers().is_none() {
        return;
    }
    let _turn = ONE_WINDOW.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["unused"])]))
        .await
        .unwrap();
    let log = setup(data, &llm, "digest");
    let driver = Driver::start(&[("SWITCHBOARD_DATA_DIR", data)])
        .await
        .unwrap();
    let s = open(&driver).await;
    attach_dialog(&s).await;
    s.click_on(".skill-picker .skill-approve", WAIT)
        .await
        .unwrap();
    s.click_on(".skill-picker .skill-attach", WAIT)
        .await
        .unwrap();
    s.wait_text(".skill-picker-status", "it was not used", WAIT)
        .await
        .unwrap();
    s.screenshot(&artifacts().join("43-skill-refused.png"))
        .await
        .unwrap();
    let composer = s
        .execute("return document.querySelector('.chat-input').value;")
        .await
        .unwrap();
    assert_eq!(composer, serde_json::json!(""));
    assert_eq!(reads(&log), vec![SKILL_MD]);
    s.close().await.unwrap();
}

//! Model lists and local runtimes against scripted servers on loopback: Ollama and LM Studio
//! detection with per-model tool support, OpenAI-compatible and Anthropic (paged) vendor
//! lists, typed failures, and the prompt-based tool mode a person turns on for a model
//! without native tools (the chat request really changes shape).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::Path;

use serde_json::json;
use switchboard_core::host::{Host, HostBuilder};
use switchboard_core::llm::models::local::probe_client;
use switchboard_core::llm::models::{
    detect, list_models, LocalRuntime, ModelInfo, ModelsError, ToolSource, ToolSupport,
};
use switchboard_core::llm::profiles::ToolMode;
use switchboard_core::llm::{collect, profile};
use switchboard_core::redact::Secret;
use switchboard_tests::fake_llm::fixtures::request;
use switchboard_tests::fake_llm::{FakeLlm, Reply, Scenario};
use switchboard_tests::fake_models::{
    anthropic_page, closed_url, lmstudio, ollama, openai_list, FakeModels, Route,
};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-models-canary-5d1e";

fn tools_of(models: &[ModelInfo], id: &str) -> (ToolSupport, ToolSource) {
    let m = models
        .iter()
        .find(|m| m.id == id)
        .unwrap_or_else(|| panic!("{id} not listed: {models:?}"));
    (m.tools, m.tools_source)
}

async fn fake_ollama() -> FakeModels {
    FakeModels::start(ollama(&[
        ("llama3.1:8b", Some(&["completion", "tools"])),
        ("gemma2:2b", Some(&["completion"])),
        ("nomic-embed-text:latest", Some(&["embedding"])),
        ("old:latest", None),
    ]))
    .await
}

#[tokio::test]
async fn ollama_is_detected_with_its_models_and_their_tool_support() {
    let fake = fake_ollama().await;
    let found = detect(&probe_client(), &[(LocalRuntime::Ollama, fake.url.clone())]).await;
    assert_eq!(found.len(), 1, "{found:?}");
    let rt = &found[0];
    assert_eq!(rt.profile_id, "ollama");
    assert_eq!(rt.base_url, format!("{}/v1", fake.url));
    let ids: Vec<_> = rt.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        ["gemma2:2b", "llama3.1:8b", "old:latest"],
        "embeddings left out"
    );
    assert_eq!(
        tools_of(&rt.models, "llama3.1:8b"),
        (ToolSupport::Native, ToolSource::Runtime)
    );
    assert_eq!(
        tools_of(&rt.models, "gemma2:2b"),
        (ToolSupport::None, ToolSource::Runtime)
    );
    // No capabilities field: unknown, not a guess.
    assert_eq!(
        tools_of(&rt.models, "old:latest"),
        (ToolSupport::Unknown, ToolSource::None)
    );
    let shown: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.path == "/api/show")
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["model"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(shown.len(), 4, "one show per installed model: {shown:?}");
}

#[tokio::test]
async fn nothing_is_detected_where_nothing_runs_or_off_loopback() {
    let closed = closed_url().await;
    let found = detect(
        &probe_client(),
        &[
            (LocalRuntime::Ollama, closed.clone()),
            (LocalRuntime::LmStudio, closed),
        ],
    )
    .await;
    assert!(found.is_empty(), "{found:?}");
    // A fake that would answer, named by a non-loopback address: never probed.
    let fake = fake_ollama().await;
    let port = fake.url.rsplit(':').next().unwrap();
    let found = detect(
        &probe_client(),
        &[(LocalRuntime::Ollama, format!("http://192.0.2.1:{port}"))],
    )
    .await;
    assert!(found.is_empty(), "{found:?}");
    assert!(fake.requests().is_empty());
    // A server that answers something else is not an Ollama.
    let other = FakeModels::start(vec![Route::get("/api/tags", json!({"hello": 1}))]).await;
    let found = detect(
        &probe_client(),
        &[(LocalRuntime::Ollama, other.url.clone())],
    )
    .await;
    assert!(found.is_empty(), "{found:?}");
}

#[tokio::test]
async fn lm_studio_is_detected_from_its_rest_api_or_the_compatible_list() {
    let fake = FakeModels::start(lmstudio(&[
        ("qwen2.5-7b-instruct", "llm", Some(&["tool_use"])),
        ("phi-3-mini", "llm", Some(&[])),
        ("qwen2-vl-7b-instruct", "vlm", None),
        ("text-embedding-nomic-embed-text-v1.5", "embeddings", None),
    ]))
    .await;
    let found = detect(
        &probe_client(),
        &[(LocalRuntime::LmStudio, fake.url.clone())],
    )
    .await;
    assert_eq!(found.len(), 1);
    let m = &found[0].models;
    assert_eq!(m.len(), 3, "{m:?}");
    assert_eq!(found[0].profile_id, "lmstudio");
    assert_eq!(tools_of(m, "qwen2.5-7b-instruct").0, ToolSupport::Native);
    assert_eq!(tools_of(m, "phi-3-mini").0, ToolSupport::None);
    assert_eq!(tools_of(m, "qwen2-vl-7b-instruct").0, ToolSupport::Unknown);

    // An LM Studio without the REST API: found through /v1/models, tools unknown.
    let old = FakeModels::start(vec![openai_list("/v1", &["llama-3.2-3b-instruct"])]).await;
    let found = detect(
        &probe_client(),
        &[(LocalRuntime::LmStudio, old.url.clone())],
    )
    .await;
    assert_eq!(found.len(), 1);
    assert_eq!(
        tools_of(&found[0].models, "llama-3.2-3b-instruct").0,
        ToolSupport::Unknown
    );
}

#[tokio::test]
async fn openai_compatible_lists_send_the_key_and_mark_known_families() {
    let fake = FakeModels::start(vec![openai_list(
        "/v1",
        &["gpt-4o", "text-embedding-3-small", "my-finetune", "gpt-4o"],
    )])
    .await;
    let base = format!("{}/v1", fake.url);
    let key = Secret::new(KEY);
    let http = reqwest::Client::new();
    let models = list_models(&http, profile("openai").unwrap(), Some(&base), Some(&key))
        .await
        .unwrap();
    let ids: Vec<_> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        ["gpt-4o", "my-finetune"],
        "deduplicated, embeddings left out"
    );
    assert_eq!(
        tools_of(&models, "gpt-4o"),
        (ToolSupport::Native, ToolSource::Family)
    );
    assert_eq!(tools_of(&models, "my-finetune").0, ToolSupport::Unknown);
    let reqs = fake.requests();
    assert_eq!(reqs[0].path, "/v1/models");
    assert_eq!(reqs[0].headers["authorization"], format!("Bearer {KEY}"));

    // The same ids behind another compatible server: nothing is claimed.
    let models = list_models(&http, profile("custom").unwrap(), Some(&base), None)
        .await
        .unwrap();
    assert_eq!(tools_of(&models, "gpt-4o").0, ToolSupport::Unknown);
    assert!(!fake.requests()[1].headers.contains_key("authorization"));
}

#[tokio::test]
async fn anthropic_lists_follow_pages_and_stop_on_a_repeated_cursor() {
    let fake = FakeModels::start(vec![
        anthropic_page("limit=1000", &["claude-a", "claude-b"], true),
        anthropic_page("limit=1000&after_id=claude-b", &["claude-c"], false),
    ])
    .await;
    let key = Secret::new(KEY);
    let http = reqwest::Client::new();
    let anthropic = profile("anthropic").unwrap();
    let models = list_models(&http, anthropic, Some(&fake.url), Some(&key))
        .await
        .unwrap();
    let ids: Vec<_> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["claude-a", "claude-b", "claude-c"]);
    assert_eq!(models[0].display_name.as_deref(), Some("Claude claude-a"));
    assert_eq!(
        tools_of(&models, "claude-c"),
        (ToolSupport::Native, ToolSource::Family)
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].headers["x-api-key"], KEY);
    assert_eq!(reqs[0].headers["anthropic-version"], "2023-06-01");
    assert_eq!(reqs[1].path, "/v1/models?limit=1000&after_id=claude-b");

    // A server that keeps saying "more" with the same cursor is not followed forever.
    let looping = FakeModels::start(vec![
        anthropic_page("limit=1000", &["claude-a", "claude-b"], true),
        anthropic_page("limit=1000&after_id=claude-b", &["claude-b"], true),
    ])
    .await;
    let models = list_models(&http, anthropic, Some(&looping.url), Some(&key))
        .await
        .unwrap();
    assert_eq!(models.len(), 2);
    assert_eq!(looping.requests().len(), 2);
}

#[tokio::test]
async fn failures_are_typed_and_never_carry_the_key() {
    let key = Secret::new(KEY);
    let http = reqwest::Client::new();
    let openai = profile("openai").unwrap();
    let refused = FakeModels::start(vec![Route::get("/v1/models", json!({})).status(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}).to_string(),
    )])
    .await;
    let err = list_models(
        &http,
        openai,
        Some(&format!("{}/v1", refused.url)),
        Some(&key),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ModelsError::KeyRefused { status: 401, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.starts_with("the key was refused"), "{text}");
    assert!(!text.contains(KEY), "{text}");

    let broken = FakeModels::start(vec![
        Route::get("/a/models", json!({})).status(500, "{\"error\":\"overloaded\"}"),
        Route::get("/b/models", json!({})).status(200, "<html>hello</html>"),
        Route::get("/c/models", json!({"object": "list"})),
        Route::get("/d/models", json!({})).status(200, &"x".repeat(9 * 1024 * 1024)),
    ])
    .await;
    let at = |p: &str| format!("{}/{p}", broken.url);
    let custom = profile("custom").unwrap();
    let e = list_models(&http, custom, Some(&at("a")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, ModelsError::Status { status: 500, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("overloaded"), "{e}");
    let e = list_models(&http, custom, Some(&at("b")), None)
        .await
        .unwrap_err();
    assert!(matches!(e, ModelsError::NotJson { .. }), "{e:?}");
    let e = list_models(&http, custom, Some(&at("c")), None)
        .await
        .unwrap_err();
    assert!(matches!(e, ModelsError::NotJson { .. }), "{e:?}");
    let e = list_models(&http, custom, Some(&at("d")), None)
        .await
        .unwrap_err();
    assert!(matches!(e, ModelsError::TooLarge { .. }), "{e:?}");
    let e = list_models(&http, custom, Some(&closed_url().await), None)
        .await
        .unwrap_err();
    assert!(matches!(e, ModelsError::Unreachable { .. }), "{e:?}");
    let e = list_models(&http, openai, None, None).await.unwrap_err();
    assert_eq!(e, ModelsError::NoKey);
}

async fn host_on(dir: &Path) -> Host {
    HostBuilder::new(dir)
        .secrets(switchboard_core::secrets::Secrets::new(
            switchboard_core::secrets::MemoryStore::default(),
        ))
        .build()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_tools_is_offered_the_prompt_mode_and_chats_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_on(dir.path()).await;
    let fake = fake_ollama().await;
    let local = Host::provider_name("local").unwrap();
    host.models()
        .add_provider(
            &local,
            "ollama",
            Some(format!("{}/v1", fake.url)),
            None,
            None,
        )
        .await
        .unwrap();
    let lists = host.models().provider_models(Some(&local)).await.unwrap();
    let models = lists[0].models.as_ref().unwrap();
    let gemma = models.iter().find(|m| m.info.id == "gemma2:2b").unwrap();
    assert_eq!(gemma.info.tools, ToolSupport::None);
    assert!(!gemma.prompt_tools);

    host.models()
        .set_model_tool_mode(&local, "gemma2:2b", ToolMode::Prompt)
        .await
        .unwrap();
    let lists = host.models().provider_models(Some(&local)).await.unwrap();
    let models = lists[0].models.as_ref().unwrap();
    assert!(
        models
            .iter()
            .find(|m| m.info.id == "gemma2:2b")
            .unwrap()
            .prompt_tools
    );
    assert!(
        !models
            .iter()
            .find(|m| m.info.id == "llama3.1:8b")
            .unwrap()
            .prompt_tools
    );

    // The chat request changes shape for that model only: tools in the system prompt, no
    // `tools` field; another model of the same provider keeps native tools.
    let llm = FakeLlm::spawn(Scenario::new([Reply::text(&["a"]), Reply::text(&["b"])]))
        .await
        .unwrap();
    let chat = Host::provider_name("chat").unwrap();
    host.models()
        .add_provider(&chat, "vllm", Some(llm.openai_base()), None, None)
        .await
        .unwrap();
    host.models()
        .set_model_tool_mode(&chat, "small", ToolMode::Prompt)
        .await
        .unwrap();
    let (client, _) = host.models().provider(&chat).await.unwrap();
    for model in ["small", "big"] {
        let mut req = request("weather?");
        req.model = model.into();
        let stream = client.stream(req, CancellationToken::new()).await.unwrap();
        collect(stream).await.unwrap();
    }
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["model"], "small");
    assert!(reqs[0].body.get("tools").is_none(), "{}", reqs[0].body);
    assert!(reqs[0].body["messages"][0]["content"]
        .to_string()
        .contains("<tool_call>"));
    assert_eq!(reqs[1].body["model"], "big");
    assert!(reqs[1].body["tools"].to_string().contains("weather__get"));

    // Back to native, and a removed provider's choices are forgotten.
    host.models()
        .set_model_tool_mode(&chat, "small", ToolMode::Native)
        .await
        .unwrap();
    assert!(host.models().prompt_tool_models(&chat).is_empty());
    host.remove_provider(&local).await.unwrap();
    assert!(host.models().prompt_tool_models(&local).is_empty());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_vendor_list_uses_the_stored_key() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_on(dir.path()).await;
    let fake = FakeModels::start(vec![openai_list("/v1", &["gpt-4.1", "gpt-4.1-mini"])]).await;
    let work = Host::provider_name("work").unwrap();
    host.models()
        .add_provider(
            &work,
            "openai",
            Some(format!("{}/v1", fake.url)),
            None,
            None,
        )
        .await
        .unwrap();
    let lists = host.models().provider_models(None).await.unwrap();
    assert_eq!(lists[0].models, Err(ModelsError::NoKey));
    host.models()
        .set_provider_key(&work, Secret::new(KEY))
        .await
        .unwrap();
    let lists = host.models().provider_models(None).await.unwrap();
    let models = lists[0].models.as_ref().unwrap();
    assert_eq!(models.len(), 2);
    assert!(models.iter().all(|m| m.info.tools == ToolSupport::Native));
    assert_eq!(
        fake.requests()[0].headers["authorization"],
        format!("Bearer {KEY}")
    );
    host.shutdown().await;
}

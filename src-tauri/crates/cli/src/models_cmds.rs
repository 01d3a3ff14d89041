//! `switchboard models`: the local runtimes found on this machine and each configured
//! provider's models from its vendor, with whether each calls tools natively; and turning the
//! prompt-based tool mode on or off for one model (`--prompt-tools MODEL`, `--native-tools
//! MODEL`, with `--provider`).
//!
//! Text output is one line per model, `id<TAB>tools<TAB>mode`, under a header per runtime or
//! provider; ids come from a server and are escaped before they reach the terminal. A provider
//! whose list fails is reported on stderr and the others are still listed; with `--provider`
//! the failure is the command's.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use switchboard_core::escape::escape_for_display;
use switchboard_core::host::{Host, ModelEntry, ProviderModels};
use switchboard_core::llm::models::{DetectedRuntime, ModelInfo, ToolSupport};
use switchboard_core::llm::profiles::ToolMode;

use crate::errors::exit;
use crate::{output, Ctx};

/// `switchboard models`.
#[derive(Args, Debug)]
pub struct ModelsArgs {
    /// Only this provider (and no local-runtime detection).
    #[arg(long)]
    provider: Option<String>,
    /// Skip looking for Ollama and LM Studio on this machine.
    #[arg(long)]
    no_detect: bool,
    /// Send this model of `--provider` through the prompt-based tool mode (for models
    /// without native tool calling).
    #[arg(
        long,
        value_name = "MODEL",
        requires = "provider",
        conflicts_with = "native_tools"
    )]
    prompt_tools: Option<String>,
    /// Give this model of `--provider` native tools again.
    #[arg(long, value_name = "MODEL", requires = "provider")]
    native_tools: Option<String>,
}

fn tools_word(t: ToolSupport) -> &'static str {
    match t {
        ToolSupport::Native => "native tools",
        ToolSupport::None => "no native tools",
        ToolSupport::Unknown => "tools unknown",
    }
}

fn model_line(m: &ModelInfo, prompt: bool) {
    let mode = if prompt {
        "prompt-based tools ON"
    } else if m.tools == ToolSupport::None {
        "prompt-based tools available"
    } else {
        "-"
    };
    outln!(
        "  {}\t{}\t{mode}",
        escape_for_display(&m.id),
        tools_word(m.tools)
    );
}

fn detected_text(rt: &DetectedRuntime) {
    outln!(
        "detected {} at {} ({} models); add it with `switchboard provider add {} --kind {} --base-url {}`",
        rt.runtime.name(),
        rt.root,
        rt.models.len(),
        rt.profile_id,
        rt.profile_id,
        rt.base_url
    );
    for m in &rt.models {
        model_line(m, false);
    }
}

fn provider_json(p: &ProviderModels) -> serde_json::Value {
    let (models, error) = match &p.models {
        Ok(list) => (Some(list.as_slice()), None),
        Err(e) => (None::<&[ModelEntry]>, Some(e.to_string())),
    };
    json!({
        "name": p.provider.name,
        "kind": p.provider.profile.id,
        "base_url": p.provider.base_url,
        "model": p.provider.model,
        "models": models,
        "error": error,
        "prompt_only": p.prompt_only,
    })
}

/// Runs `switchboard models`.
pub async fn run(ctx: &Ctx, a: ModelsArgs) -> anyhow::Result<ExitCode> {
    let only = a.provider.as_deref().map(Host::provider_name).transpose()?;
    if let Some(name) = &only {
        let change = match (&a.prompt_tools, &a.native_tools) {
            (Some(m), _) => Some((m, ToolMode::Prompt)),
            (None, Some(m)) => Some((m, ToolMode::Native)),
            _ => None,
        };
        if let Some((model, mode)) = change {
            ctx.host
                .models()
                .set_model_tool_mode(name, model, mode)
                .await?;
            let what = if mode == ToolMode::Prompt {
                "the prompt-based tool mode"
            } else {
                "native tools"
            };
            errln!("{name}: {} now uses {what}", escape_for_display(model));
            return Ok(ExitCode::from(exit::OK));
        }
    }
    let detect = only.is_none() && !a.no_detect;
    let (detected, lists) = tokio::join!(
        async {
            if detect {
                ctx.host.models().detect_local_runtimes().await
            } else {
                Vec::new()
            }
        },
        ctx.host.models().provider_models(only.as_ref())
    );
    let lists = lists?;
    if let (Some(_), Some(p)) = (&only, lists.first()) {
        if let Err(e) = &p.models {
            anyhow::bail!("provider {}: {e}", p.provider.name);
        }
    }
    if ctx.json {
        let providers: Vec<_> = lists.iter().map(provider_json).collect();
        output::json(&json!({ "detected": detected, "providers": providers }))?;
        return Ok(ExitCode::from(exit::OK));
    }
    for rt in &detected {
        detected_text(rt);
    }
    if detect && detected.is_empty() {
        errln!("no local runtime (Ollama, LM Studio) answered on this machine");
    }
    for p in &lists {
        outln!(
            "provider {} ({}, {})",
            p.provider.name,
            p.provider.profile.id,
            p.provider.base_url.as_deref().unwrap_or("-")
        );
        match &p.models {
            Ok(models) => {
                for m in models {
                    model_line(&m.info, m.prompt_tools);
                }
            }
            Err(e) => errln!("provider {}: cannot list models: {e}", p.provider.name),
        }
        for m in &p.prompt_only {
            outln!(
                "  {}\t(not listed)\tprompt-based tools ON",
                escape_for_display(m)
            );
        }
    }
    if lists.is_empty() && detected.is_empty() {
        outln!("no providers; add one with `switchboard provider add NAME --kind openai`");
    }
    Ok(ExitCode::from(exit::OK))
}

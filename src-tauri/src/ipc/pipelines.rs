//! Tool pipelines (issue 15, point 6) for the Pipelines page: the list, one pipeline with its
//! steps and what flows where (checked against the catalogs as they are), a run, past runs and
//! a replay. A run is approved as a whole by the approval dialog (the core asks, as for every
//! request) before its first step. Results and arguments cross as JSON text, shown as is.

use serde::Serialize;
use specta::Type;
use switchboard_core::approval::Origin;
use switchboard_core::host::{Host, PipelineError, PipelineOutcome};
use switchboard_core::pipeline_data::PipelineName;
use switchboard_core::pipelines::{PipelineRun, PipelineStepRecord, RunStatus, StoredPipeline};
use tauri::State;

use super::run::parse_run;
use super::{logged, ErrorCode, IpcError};

impl From<PipelineError> for IpcError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Host(h) => h.into(),
            e @ (PipelineError::NotFound(_) | PipelineError::NoRun(_)) => {
                IpcError::not_found(e.to_string())
            }
            e @ (PipelineError::Declined(_) | PipelineError::Refused(_)) => {
                IpcError::new(ErrorCode::Denied, e.to_string())
            }
            e => IpcError::invalid(e.to_string()),
        }
    }
}

/// One pipeline (its newest version, in the list).
#[derive(Clone, Debug, Serialize, Type)]
pub struct PipelineDto {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// What it does.
    pub description: String,
    /// Declared inputs: name and JSON schema (text).
    pub inputs: Vec<(String, String)>,
    /// Its steps: id and `server/tool`.
    pub steps: Vec<(String, String)>,
    /// What flows where, one line per argument (empty when the check failed).
    pub flows: Vec<String>,
    /// Why it would not run now (the check's mistakes); empty when it passes.
    pub problems: Vec<String>,
}

impl From<StoredPipeline> for PipelineDto {
    fn from(s: StoredPipeline) -> Self {
        let p = s.pipeline;
        Self {
            name: p.name.to_string(),
            version: p.version,
            description: p.description,
            inputs: p
                .inputs
                .into_iter()
                .map(|i| (i.name, i.schema.to_string()))
                .collect(),
            steps: p.steps.into_iter().map(|s| (s.id, s.tool)).collect(),
            flows: Vec::new(),
            problems: Vec::new(),
        }
    }
}

/// A run's step as recorded.
#[derive(Clone, Debug, Serialize, Type)]
pub struct PipelineStepDto {
    /// Its position, from 1.
    pub index: u32,
    /// Its id.
    pub step_id: String,
    /// `server/tool`.
    pub tool: String,
    /// The arguments it was called with (JSON).
    pub arguments: String,
    /// Its `structuredContent` (JSON), when it returned one.
    pub structured: Option<String>,
    /// `running`, `succeeded` or `failed`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
}

/// A run (with its steps, when one was asked for).
#[derive(Clone, Debug, Serialize, Type)]
pub struct PipelineRunDto {
    /// The run's id.
    pub id: String,
    /// The pipeline.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// The inputs (JSON).
    pub inputs: String,
    /// `running`, `succeeded` or `failed`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
    /// The run it replayed.
    pub replay_of: Option<String>,
    /// When it started, ms since the epoch.
    pub started_ms: f64,
    /// Its steps (empty in lists).
    pub steps: Vec<PipelineStepDto>,
}

fn status(s: RunStatus) -> String {
    match s {
        RunStatus::Running => "running",
        RunStatus::Succeeded => "succeeded",
        RunStatus::Failed => "failed",
    }
    .into()
}

impl From<PipelineRun> for PipelineRunDto {
    fn from(r: PipelineRun) -> Self {
        Self {
            id: r.id,
            name: r.name,
            version: r.version,
            inputs: r.inputs.to_string(),
            status: status(r.status),
            error: r.error,
            replay_of: r.replay_of,
            started_ms: r.started_ms as f64,
            steps: Vec::new(),
        }
    }
}

impl From<PipelineStepRecord> for PipelineStepDto {
    fn from(s: PipelineStepRecord) -> Self {
        let structured = s
            .result
            .as_ref()
            .and_then(|r| r.get("structuredContent"))
            .map(ToString::to_string);
        Self {
            index: s.index,
            step_id: s.step_id,
            tool: s.tool,
            arguments: s.arguments.to_string(),
            structured,
            status: status(s.status),
            error: s.error,
        }
    }
}

impl From<PipelineOutcome> for PipelineRunDto {
    fn from(o: PipelineOutcome) -> Self {
        let mut dto = Self::from(o.run);
        dto.steps = o.steps.into_iter().map(Into::into).collect();
        dto
    }
}

fn name_of(name: &str) -> Result<PipelineName, IpcError> {
    PipelineName::new(name).map_err(|e| IpcError::invalid(e.to_string()))
}

/// The newest version of every pipeline.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn list_pipelines(host: State<'_, Host>) -> Result<Vec<PipelineDto>, IpcError> {
    Ok(host
        .list_pipelines()
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// One version (the newest when `version` is null), with what flows where or why it would
/// not run, checked against the live catalogs (the servers it uses are started for the look).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(pipeline = %logged(&name)))]
pub async fn show_pipeline(
    host: State<'_, Host>,
    name: String,
    version: Option<u32>,
) -> Result<PipelineDto, IpcError> {
    let stored = host.pipeline(&name_of(&name)?, version).await?;
    let checked = host.check_live(&stored.pipeline).await?;
    let mut dto = PipelineDto::from(stored);
    match checked {
        Ok(plan) => dto.flows = plan.lines(),
        Err(mistakes) => dto.problems = mistakes.iter().map(ToString::to_string).collect(),
    }
    Ok(dto)
}

/// Runs a pipeline with `inputs_json` (a JSON object) as part of `run_id` (`open_run`): asked
/// about as a whole in the approval dialog, then step by step through the policy.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(pipeline = %logged(&name), run = %logged(&run_id)))]
pub async fn run_pipeline(
    host: State<'_, Host>,
    run_id: String,
    name: String,
    version: Option<u32>,
    inputs_json: String,
) -> Result<PipelineRunDto, IpcError> {
    let inputs = match serde_json::from_str(&inputs_json) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => return Err(IpcError::invalid("the inputs must be a JSON object")),
    };
    let (name, run) = (name_of(&name)?, parse_run(&run_id)?);
    let outcome = host
        .run_pipeline(&name, version, inputs, Origin::Manual, Some(run))
        .await?;
    Ok(outcome.into())
}

/// Past runs, newest first (of one pipeline when `name` is given).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all)]
pub async fn pipeline_runs(
    host: State<'_, Host>,
    name: Option<String>,
) -> Result<Vec<PipelineRunDto>, IpcError> {
    let name = name.as_deref().map(name_of).transpose()?;
    let runs = host.pipeline_runs(name.as_ref()).await?;
    Ok(runs.into_iter().map(Into::into).collect())
}

/// Runs a past run's pipeline version again with the same inputs, asked about as a whole.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(skip_all, fields(past = %logged(&past), run = %logged(&run_id)))]
pub async fn replay_pipeline_run(
    host: State<'_, Host>,
    run_id: String,
    past: String,
) -> Result<PipelineRunDto, IpcError> {
    let run = parse_run(&run_id)?;
    let outcome = host
        .replay_pipeline_run(&past, Origin::Manual, Some(run))
        .await?;
    Ok(outcome.into())
}

//! The pipelines feature's store repository: tool pipelines and their runs (migration
//! `0014_pipelines.sql`, issue 15 point 6; the schema stays in `store`). The definitions are
//! `pipeline_data`'s; this file only keeps them. A name holds versions that
//! never change: adding a different definition stores the next one, adding the same one again
//! changes nothing.

use serde::Serialize;
use serde_json::Value;
use sqlx::Row as _;

use crate::clock::now_ms;
use crate::pipeline_data::{same_definition, Pipeline, PipelineName};
use crate::store::{Store, StoreError};

/// A stored definition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredPipeline {
    /// The definition, its version set.
    pub pipeline: Pipeline,
    /// When this version was added, ms since the epoch.
    pub created_ms: i64,
}

/// How a run or a step stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Started and not ended (or the process ended while it ran).
    Running,
    /// Every step succeeded.
    Succeeded,
    /// It stopped at a failure.
    Failed,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        Ok(match s {
            "running" => Self::Running,
            "succeeded" => Self::Succeeded,
            "failed" => Self::Failed,
            other => {
                return Err(corrupt(
                    "pipeline run",
                    &format!("unknown status {other:?}"),
                ))
            }
        })
    }
}

/// One run of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineRun {
    /// Its id.
    pub id: String,
    /// The pipeline.
    pub name: String,
    /// The version run.
    pub version: u32,
    /// The inputs given, a JSON object.
    pub inputs: Value,
    /// How it stands.
    pub status: RunStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// When it started, ms since the epoch.
    pub started_ms: i64,
    /// When it ended.
    pub ended_ms: Option<i64>,
    /// The run it replays.
    pub replay_of: Option<String>,
}

/// One step of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineStepRecord {
    /// Its position, from 1.
    pub index: u32,
    /// Its id in the definition.
    pub step_id: String,
    /// Its tool, `server/tool`.
    pub tool: String,
    /// The arguments sent.
    pub arguments: Value,
    /// The tool's result, once it answered.
    pub result: Option<Value>,
    /// How it stands.
    pub status: RunStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// When it started.
    pub started_ms: i64,
    /// When it ended.
    pub ended_ms: Option<i64>,
}

fn corrupt(what: &str, reason: &str) -> StoreError {
    StoreError::Corrupt {
        what: what.to_owned(),
        reason: reason.to_owned(),
    }
}

fn json_of(text: &str, what: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(what, &e.to_string()))
}

fn pipeline_of(r: &sqlx::sqlite::SqliteRow) -> Result<StoredPipeline, StoreError> {
    let name: String = r.get("name");
    let what = format!("pipeline {name}");
    let mut pipeline: Pipeline = serde_json::from_str(r.get::<&str, _>("definition"))
        .map_err(|e| corrupt(&what, &e.to_string()))?;
    pipeline.version = u32::try_from(r.get::<i64, _>("version"))
        .map_err(|_| corrupt(&what, "the version is out of range"))?;
    Ok(StoredPipeline {
        pipeline,
        created_ms: r.get("created_ms"),
    })
}

fn run_of(r: &sqlx::sqlite::SqliteRow) -> Result<PipelineRun, StoreError> {
    Ok(PipelineRun {
        id: r.get("id"),
        name: r.get("name"),
        version: u32::try_from(r.get::<i64, _>("version"))
            .map_err(|_| corrupt("pipeline run", "the version is out of range"))?,
        inputs: json_of(r.get("inputs"), "pipeline run inputs")?,
        status: RunStatus::parse(r.get("status"))?,
        error: r.get("error"),
        started_ms: r.get("started_ms"),
        ended_ms: r.get("ended_ms"),
        replay_of: r.get("replay_of"),
    })
}

impl Store {
    /// Stores a definition under its name: as version 1, or as the next version when it
    /// differs from the newest one. Returns the version it is stored as and whether it was new.
    pub async fn add_pipeline(&self, p: &Pipeline) -> Result<(u32, bool), StoreError> {
        let mut tx = self.write_tx().await?;
        let newest = sqlx::query(
            "SELECT name, version, definition, created_ms FROM pipelines WHERE name = ?
             ORDER BY version DESC LIMIT 1",
        )
        .bind(p.name.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let next = match newest {
            Some(row) => {
                let stored = pipeline_of(&row)?;
                if same_definition(&stored.pipeline, p) {
                    return Ok((stored.pipeline.version, false));
                }
                stored.pipeline.version + 1
            }
            None => 1,
        };
        let mut def = p.clone();
        def.version = next;
        let text = serde_json::to_string(&def).map_err(|e| corrupt("pipeline", &e.to_string()))?;
        sqlx::query(
            "INSERT INTO pipelines (name, version, definition, created_ms) VALUES (?, ?, ?, ?)",
        )
        .bind(p.name.as_str())
        .bind(i64::from(next))
        .bind(text)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((next, true))
    }

    /// The newest version of every pipeline, by name.
    pub async fn pipelines(&self) -> Result<Vec<StoredPipeline>, StoreError> {
        let rows = sqlx::query(
            "SELECT p.name, p.version, p.definition, p.created_ms FROM pipelines p
             WHERE p.version = (SELECT MAX(version) FROM pipelines q WHERE q.name = p.name)
             ORDER BY p.name",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(pipeline_of).collect()
    }

    /// One version of a pipeline (the newest when `version` is `None`).
    pub async fn pipeline(
        &self,
        name: &PipelineName,
        version: Option<u32>,
    ) -> Result<Option<StoredPipeline>, StoreError> {
        let row = sqlx::query(
            "SELECT name, version, definition, created_ms FROM pipelines
             WHERE name = ? AND (? IS NULL OR version = ?) ORDER BY version DESC LIMIT 1",
        )
        .bind(name.as_str())
        .bind(version.map(i64::from))
        .bind(version.map(i64::from))
        .fetch_optional(self.reader())
        .await?;
        row.as_ref().map(pipeline_of).transpose()
    }

    /// Records the start of a run.
    pub async fn start_pipeline_run(
        &self,
        id: &str,
        p: &Pipeline,
        inputs: &Value,
        replay_of: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO pipeline_runs (id, name, version, inputs, status, started_ms, replay_of)
             VALUES (?, ?, ?, ?, 'running', ?, ?)",
        )
        .bind(id)
        .bind(p.name.as_str())
        .bind(i64::from(p.version))
        .bind(inputs.to_string())
        .bind(now_ms())
        .bind(replay_of)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Records the end of a run.
    pub async fn end_pipeline_run(
        &self,
        id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE pipeline_runs SET status = ?, error = ?, ended_ms = ? WHERE id = ?")
            .bind(status.as_str())
            .bind(error)
            .bind(now_ms())
            .bind(id)
            .execute(self.writer())
            .await?;
        Ok(())
    }

    /// Records that a step starts with these arguments.
    pub async fn start_pipeline_step(
        &self,
        run: &str,
        index: u32,
        step_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO pipeline_steps (run_id, idx, step_id, tool, arguments, status, started_ms)
             VALUES (?, ?, ?, ?, ?, 'running', ?)",
        )
        .bind(run)
        .bind(i64::from(index))
        .bind(step_id)
        .bind(tool)
        .bind(arguments.to_string())
        .bind(now_ms())
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Records how a step ended.
    pub async fn end_pipeline_step(
        &self,
        run: &str,
        index: u32,
        status: RunStatus,
        result: Option<&Value>,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE pipeline_steps SET status = ?, result = ?, error = ?, ended_ms = ?
             WHERE run_id = ? AND idx = ?",
        )
        .bind(status.as_str())
        .bind(result.map(Value::to_string))
        .bind(error)
        .bind(now_ms())
        .bind(run)
        .bind(i64::from(index))
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Runs, newest first (of one pipeline when `name` is given), at most `limit`.
    pub async fn pipeline_runs(
        &self,
        name: Option<&PipelineName>,
        limit: u32,
    ) -> Result<Vec<PipelineRun>, StoreError> {
        let rows = sqlx::query(
            "SELECT * FROM pipeline_runs WHERE (? IS NULL OR name = ?)
             ORDER BY started_ms DESC, rowid DESC LIMIT ?",
        )
        .bind(name.map(PipelineName::as_str))
        .bind(name.map(PipelineName::as_str))
        .bind(i64::from(limit))
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(run_of).collect()
    }

    /// One run with its steps, in order.
    pub async fn pipeline_run(
        &self,
        id: &str,
    ) -> Result<Option<(PipelineRun, Vec<PipelineStepRecord>)>, StoreError> {
        let Some(row) = sqlx::query("SELECT * FROM pipeline_runs WHERE id = ?")
            .bind(id)
            .fetch_optional(self.reader())
            .await?
        else {
            return Ok(None);
        };
        let run = run_of(&row)?;
        let rows = sqlx::query("SELECT * FROM pipeline_steps WHERE run_id = ? ORDER BY idx")
            .bind(id)
            .fetch_all(self.reader())
            .await?;
        let mut steps = Vec::with_capacity(rows.len());
        for r in &rows {
            let result: Option<String> = r.get("result");
            steps.push(PipelineStepRecord {
                index: u32::try_from(r.get::<i64, _>("idx"))
                    .map_err(|_| corrupt("pipeline step", "the index is out of range"))?,
                step_id: r.get("step_id"),
                tool: r.get("tool"),
                arguments: json_of(r.get("arguments"), "pipeline step arguments")?,
                result: result
                    .as_deref()
                    .map(|t| json_of(t, "pipeline step result"))
                    .transpose()?,
                status: RunStatus::parse(r.get("status"))?,
                error: r.get("error"),
                started_ms: r.get("started_ms"),
                ended_ms: r.get("ended_ms"),
            });
        }
        Ok(Some((run, steps)))
    }
}

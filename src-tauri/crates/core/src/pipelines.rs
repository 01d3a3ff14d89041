//! Tool pipelines (issue 15, point 6): stored definitions, their check against the live
//! catalog, and runs.
//!
//! A feature of its own (issue 26): it owns the pipeline tables (`pipelines/store.rs`).
mod store;

pub use store::{PipelineRun, PipelineStepRecord, RunStatus, StoredPipeline};

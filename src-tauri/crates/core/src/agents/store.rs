//! The agents feature's tables (issue 26: their repositories moved here from `store/`, so only
//! this feature calls them; the schema and its migrations stay in `store/`):
//! - `agent_profiles` ([`profiles`]): one row per agent profile;
//! - `agent_runs` ([`runs`]): the run tree, a node per agent working on a task;
//! - `run_state`, `run_notes` ([`state`]): a run's shared state.
//!
//! The methods are inherent methods of [`crate::store::Store`], written here; the layers test
//! (`tests/tests/layers/house.rs`) fails when code outside `agents` calls them.

pub(crate) mod profiles;
pub(crate) mod runs;
pub(crate) mod state;

//! What the person's policy says of a pipeline's steps before it runs (issue 15, point 6): the
//! step it would refuse, and the steps that will still ask though the pipeline is approved as a
//! whole. The host decides them as the seam would (`host/pipelines/policy.rs`, behind
//! [`super::PipelineHost::preview`]); these are the answers, in the feature's words.

/// A step the person's policy would refuse, found before anything ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRefusal {
    /// Its position, from 1.
    pub step: u32,
    /// Its id.
    pub id: String,
    /// Its tool, `server/tool`.
    pub tool: String,
    /// The rule that refuses it (or whose limit is spent), when one does.
    pub rule: Option<String>,
    /// Why, in words.
    pub reason: String,
    /// The arguments, mapped from earlier steps, that the rule's conditions depend on: when
    /// not empty the rule *may* refuse the step, depending on what those steps return.
    pub depends_on: Vec<String>,
}

impl std::fmt::Display for StepRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {} ({:?}, {}) ", self.step, self.id, self.tool)?;
        if self.depends_on.is_empty() {
            return write!(f, "would be refused: {}", self.reason);
        }
        let args = self
            .depends_on
            .iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        write!(
            f,
            "could be refused: {}; its conditions depend on the argument {args}, known only \
             from an earlier step's result once the run is under way, so the run is refused \
             before it starts (give it as an input or a fixed value, or narrow the rule)",
            self.reason
        )
    }
}

/// A step that will still ask a person when it runs, though its pipeline is approved.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StepAsks {
    /// Its position, from 1.
    pub step: u32,
    /// Its id.
    pub id: String,
    /// Its tool, `server/tool`.
    pub tool: String,
    /// Why, in words.
    pub why: String,
}

/// What the person's policy says of a pipeline's steps before it runs.
#[derive(Debug, Default)]
pub struct Preview {
    /// The first step it would refuse, if any: then the run is refused.
    pub refusal: Option<StepRefusal>,
    /// The steps that will still ask, in order (up to the refused one).
    pub asks: Vec<StepAsks>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_whether_it_is_certain() {
        let mut r = StepRefusal {
            step: 3,
            id: "write".into(),
            tool: "calc/echo".into(),
            rule: Some("no-echo".into()),
            reason: "the policy rule \"no-echo\" denies this call".into(),
            depends_on: Vec::new(),
        };
        assert_eq!(
            r.to_string(),
            "step 3 (\"write\", calc/echo) would be refused: the policy rule \"no-echo\" denies this call"
        );
        r.depends_on = vec!["text".into()];
        let text = r.to_string();
        assert!(
            text.starts_with("step 3 (\"write\", calc/echo) could be refused")
                && text.contains("the argument \"text\""),
            "{text}"
        );
    }
}

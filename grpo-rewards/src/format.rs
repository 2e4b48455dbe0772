//! The format reward: does the completion follow the R1-Zero template
//! `<think>…</think><answer>…</answer>`?
//!
//! Three modes ([`FormatMode`]):
//! - **strict**: the whole completion is exactly one think block, optional whitespace, one
//!   answer block, optional trailing whitespace; both blocks non-empty; each tag once. 1 or 0.
//! - **lenient**: a think block is followed (anywhere later) by a non-empty answer block;
//!   text around them is allowed. 1 or 0.
//! - **tag count**: partial credit, 0.25 for each of the four tags that appears exactly once
//!   (an answer tag before the think tags earns nothing for the misplaced ones).
//!
//! Tags are configurable ([`FormatConfig::tags`], an [`AnswerFormat`], the same tags the
//! accuracy extractors read). When the prompt already opens the think block
//! (the R1-Zero template ends with `<think>`), set `think_opened_in_prompt` and the completion
//! is read as if it started with the opening tag.

use futures::future::BoxFuture;
use grpo_tasks::Task;
use serde::{Deserialize, Serialize};

use crate::answer::AnswerFormat;
use crate::result::{Verdict, VerdictKind};
use crate::reward::{Reward, Score};

/// How strictly the format is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatMode {
    /// Exactly the template, nothing else.
    Strict,
    /// The two blocks in order, anything around them.
    Lenient,
    /// 0.25 per tag present exactly once.
    TagCount,
}

/// Tags and mode of the format reward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FormatConfig {
    /// How strictly to judge.
    pub mode: FormatMode,
    /// The tags (the same ones the accuracy extractors read).
    pub tags: AnswerFormat,
    /// The prompt ends with the opening think tag, so the completion starts inside it.
    pub think_opened_in_prompt: bool,
}

impl Default for FormatConfig {
    fn default() -> Self {
        FormatConfig {
            mode: FormatMode::Strict,
            tags: AnswerFormat::default(),
            think_opened_in_prompt: false,
        }
    }
}

/// The format reward (name `format`), value in [0, 1], defined for every task kind.
#[derive(Debug, Clone, Default)]
pub struct FormatReward {
    config: FormatConfig,
}

impl FormatReward {
    /// A format reward with this configuration.
    pub fn new(config: FormatConfig) -> Self {
        FormatReward { config }
    }

    /// The configuration.
    pub fn config(&self) -> &FormatConfig {
        &self.config
    }

    /// Scores one completion: the value and the reason.
    pub fn score_one(&self, completion: &str) -> (f64, String) {
        let c = &self.config;
        let tags = &c.tags;
        let owned;
        let text = if c.think_opened_in_prompt {
            owned = format!("{}{}", tags.think_open, completion);
            owned.as_str()
        } else {
            completion
        };
        match c.mode {
            FormatMode::Strict => match tags.check_strict(text) {
                Ok(()) => (
                    1.0,
                    "the completion is exactly one think block and one answer block".into(),
                ),
                Err(why) => (0.0, why),
            },
            FormatMode::Lenient => match tags.check_lenient(text) {
                Ok(()) => (1.0, "a think block is followed by an answer block".into()),
                Err(why) => (0.0, why),
            },
            FormatMode::TagCount => {
                let once = tags.tag_counts(text).map(|n| n == 1);
                let mut n = once.iter().filter(|b| **b).count();
                // An answer block before the think block does not count as in place.
                if !tags.answer_follows_think(text) && once[2] {
                    n -= 1;
                }
                let value = n as f64 * 0.25;
                (
                    value,
                    format!("{n} of 4 tags appear exactly once and in place"),
                )
            }
        }
    }

    /// Scores the completions of a group (the value and a verdict each).
    pub fn score_all(&self, completions: &[String]) -> Vec<Score> {
        completions
            .iter()
            .map(|c| {
                let (value, reason) = self.score_one(c);
                let kind = if value >= 1.0 {
                    VerdictKind::Correct
                } else {
                    VerdictKind::WrongAnswer
                };
                Score {
                    value: Some(value),
                    verdict: Verdict::new(kind, reason),
                }
            })
            .collect()
    }
}

impl Reward for FormatReward {
    fn name(&self) -> &str {
        "format"
    }

    fn score_group<'a>(
        &'a self,
        _task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, crate::Result<Vec<Score>>> {
        Box::pin(async move { Ok(self.score_all(completions)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(mode: FormatMode, text: &str) -> f64 {
        FormatReward::new(FormatConfig {
            mode,
            ..Default::default()
        })
        .score_one(text)
        .0
    }

    #[test]
    fn table() {
        use FormatMode::*;
        // (completion, strict, lenient, tag count)
        let cases: &[(&str, f64, f64, f64)] = &[
            ("<think>a</think><answer>1</answer>", 1.0, 1.0, 1.0),
            (
                "<think>\nreason\n</think>\n<answer>\n5\n</answer>\n",
                1.0,
                1.0,
                1.0,
            ),
            ("  <think>a</think> <answer>1</answer>  ", 1.0, 1.0, 1.0),
            ("<think></think><answer>1</answer>", 0.0, 1.0, 1.0),
            ("<think>a</think><answer> </answer>", 0.0, 0.0, 1.0),
            ("<think>a</think><answer>1</answer> extra", 0.0, 1.0, 1.0),
            ("preface <think>a</think><answer>1</answer>", 0.0, 1.0, 1.0),
            ("<think>a</think>x<answer>1</answer>", 0.0, 1.0, 1.0),
            ("<answer>1</answer><think>a</think>", 0.0, 0.0, 0.75),
            ("<think>a</think>", 0.0, 0.0, 0.5),
            ("<think>a</think><answer>1", 0.0, 0.0, 0.75),
            ("<think>a<think>b</think><answer>1</answer>", 0.0, 1.0, 0.75),
            (
                "<think>a</think><answer>1</answer><answer>2</answer>",
                0.0,
                1.0,
                0.5,
            ),
            ("just 5", 0.0, 0.0, 0.0),
            ("", 0.0, 0.0, 0.0),
        ];
        for (text, s, l, t) in cases {
            assert_eq!(score(Strict, text), *s, "strict {text:?}");
            assert_eq!(score(Lenient, text), *l, "lenient {text:?}");
            assert_eq!(score(TagCount, text), *t, "tag count {text:?}");
        }
    }

    #[test]
    fn think_opened_in_prompt_and_custom_tags() {
        let r = FormatReward::new(FormatConfig {
            think_opened_in_prompt: true,
            ..Default::default()
        });
        assert_eq!(r.score_one("reasoning</think><answer>3</answer>").0, 1.0);
        let r = FormatReward::new(FormatConfig {
            tags: AnswerFormat {
                think_open: "<reasoning>".into(),
                think_close: "</reasoning>".into(),
                ..AnswerFormat::default()
            },
            ..Default::default()
        });
        assert_eq!(
            r.score_one("<reasoning>x</reasoning><answer>3</answer>").0,
            1.0
        );
        assert_eq!(r.score_one("<think>x</think><answer>3</answer>").0, 0.0);
    }
}

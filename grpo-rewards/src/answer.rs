//! The R1 answer format, `<think>…</think><answer>…</answer>`: the one place its tags are
//! searched for.
//!
//! The format reward and every accuracy extractor (math, countdown, code) read a completion
//! through an [`AnswerFormat`], so a custom tag (nano-aha-moment's `<response>`, say) changes
//! what the format reward asks for *and* where accuracy looks for the answer.
//!
//! **The answer block** ([`AnswerFormat::answer_block`]) is the text after the *last* opening
//! answer tag, up to the first closing tag after it. A block left open (a completion cut at
//! `max_new_tokens` after `<answer>42`) runs to the end of the completion, for every
//! extractor alike; [`AnswerBlock::closed`] says which case it was (the format reward still
//! asks for the closing tag).
//!
//! ```
//! use grpo_rewards::AnswerFormat;
//! let tags = AnswerFormat::default();
//! let block = tags.answer_block("<think>…</think><answer> 42 </answer>").unwrap();
//! assert_eq!((block.content.trim(), block.closed), ("42", true));
//! let open = tags.answer_block("<think>…</think><answer>4").unwrap();
//! assert_eq!((open.content, open.closed), ("4", false));
//! assert!(tags.answer_block("no tags at all").is_none());
//! ```

use serde::{Deserialize, Serialize};

/// The four tags of the R1 answer format.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AnswerFormat {
    /// Opening think tag.
    pub think_open: String,
    /// Closing think tag.
    pub think_close: String,
    /// Opening answer tag.
    pub answer_open: String,
    /// Closing answer tag.
    pub answer_close: String,
}

impl Default for AnswerFormat {
    fn default() -> Self {
        AnswerFormat {
            think_open: "<think>".into(),
            think_close: "</think>".into(),
            answer_open: "<answer>".into(),
            answer_close: "</answer>".into(),
        }
    }
}

/// The last answer block of a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerBlock<'a> {
    /// The text between the tags (or after the opening tag, to the end, when left open).
    pub content: &'a str,
    /// Whether the closing tag was found.
    pub closed: bool,
}

impl AnswerFormat {
    /// The four tags in template order: think open, think close, answer open, answer close.
    pub fn tags(&self) -> [&str; 4] {
        [
            &self.think_open,
            &self.think_close,
            &self.answer_open,
            &self.answer_close,
        ]
    }

    /// The last answer block (see the module docs for the rule on a block left open).
    pub fn answer_block<'a>(&self, text: &'a str) -> Option<AnswerBlock<'a>> {
        let open = &self.answer_open;
        let start = text.rfind(open.as_str())? + open.len();
        let rest = &text[start..];
        Some(match rest.find(self.answer_close.as_str()) {
            Some(end) => AnswerBlock {
                content: &rest[..end],
                closed: true,
            },
            None => AnswerBlock {
                content: rest,
                closed: false,
            },
        })
    }

    /// How many times each of the four tags (in [`AnswerFormat::tags`] order) appears.
    pub fn tag_counts(&self, text: &str) -> [usize; 4] {
        self.tags().map(|tag| text.matches(tag).count())
    }

    /// Whether the think block closes before the answer block opens (true when either tag is
    /// missing: there is nothing out of place).
    pub fn answer_follows_think(&self, text: &str) -> bool {
        match (
            text.find(self.think_close.as_str()),
            text.find(self.answer_open.as_str()),
        ) {
            (Some(tc), Some(ao)) => tc < ao,
            _ => true,
        }
    }

    /// The strict template: the whole text (trimmed) is exactly one non-empty think block,
    /// optional whitespace and one non-empty, closed answer block, each tag once. `Err` says
    /// what departs from it.
    pub fn check_strict(&self, text: &str) -> Result<(), String> {
        let t = text.trim();
        for (tag, n) in self.tags().into_iter().zip(self.tag_counts(t)) {
            if n != 1 {
                return Err(format!("`{tag}` appears {n} times, not once"));
            }
        }
        let rest = t
            .strip_prefix(self.think_open.as_str())
            .ok_or_else(|| format!("does not start with `{}`", self.think_open))?;
        let (think, rest) = rest
            .split_once(self.think_close.as_str())
            .ok_or("no closing think tag")?;
        if think.trim().is_empty() {
            return Err("the think block is empty".into());
        }
        let rest = rest
            .trim_start()
            .strip_prefix(self.answer_open.as_str())
            .ok_or_else(|| format!("`{}` does not follow the think block", self.answer_open))?;
        let (answer, after) = rest
            .split_once(self.answer_close.as_str())
            .ok_or("no closing answer tag")?;
        if answer.trim().is_empty() {
            return Err("the answer block is empty".into());
        }
        if !after.trim().is_empty() {
            return Err("text follows the answer block".into());
        }
        Ok(())
    }

    /// The lenient template: a think block followed, anywhere later, by a non-empty closed
    /// answer block. `Err` says what is missing.
    pub fn check_lenient(&self, text: &str) -> Result<(), String> {
        let open = text
            .find(self.think_open.as_str())
            .ok_or_else(|| format!("no `{}`", self.think_open))?;
        let after_open = &text[open + self.think_open.len()..];
        let close = after_open
            .find(self.think_close.as_str())
            .ok_or_else(|| format!("no `{}` after `{}`", self.think_close, self.think_open))?;
        let after_think = &after_open[close + self.think_close.len()..];
        let a_open = after_think
            .find(self.answer_open.as_str())
            .ok_or_else(|| format!("no `{}` after the think block", self.answer_open))?;
        let after_a = &after_think[a_open + self.answer_open.len()..];
        let a_close = after_a
            .find(self.answer_close.as_str())
            .ok_or_else(|| format!("no `{}`", self.answer_close))?;
        if after_a[..a_close].trim().is_empty() {
            return Err("the answer block is empty".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_block_wins_and_an_open_block_runs_to_the_end() {
        let tags = AnswerFormat::default();
        let cases: &[(&str, Option<(&str, bool)>)] = &[
            ("<answer>1</answer>", Some(("1", true))),
            ("<answer>1</answer><answer>2</answer>", Some(("2", true))),
            ("<answer>1</answer><answer>2", Some(("2", false))),
            ("<answer>", Some(("", false))),
            ("<answer></answer>", Some(("", true))),
            ("</answer>1", None),
            ("", None),
            (
                "<think>x</think> <answer>\n5\n</answer> tail",
                Some(("\n5\n", true)),
            ),
        ];
        for (text, want) in cases {
            let got = tags.answer_block(text).map(|b| (b.content, b.closed));
            assert_eq!(got, *want, "{text:?}");
        }
    }

    #[test]
    fn custom_tags_are_the_only_ones_looked_for() {
        let tags = AnswerFormat {
            answer_open: "<response>".into(),
            answer_close: "</response>".into(),
            ..AnswerFormat::default()
        };
        assert_eq!(
            tags.answer_block("<answer>1</answer><response>2</response>")
                .map(|b| b.content),
            Some("2")
        );
        assert!(tags.answer_block("<answer>1</answer>").is_none());
        assert_eq!(tags.tag_counts("<think></think><response>"), [1, 1, 1, 0]);
    }
}

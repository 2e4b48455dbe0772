//! Tokenizers: a wrapper over HF `tokenizers` with the model's special tokens and chat
//! template, an in-process character-level trainer for tiny models, and a builder for the
//! byte-level BPE tokenizers stored in GGUF metadata.
//!
//! A character-level vocabulary suits arithmetic prompts: every digit is its own token, so a
//! tiny model never has to learn how numbers were split.
//!
//! ```
//! # fn main() -> grpo_runner::Result<()> {
//! use grpo_runner::tokenizer::Tokenizer;
//!
//! let tok = Tokenizer::train_chars("What is 12+7? 0123456789")?;
//! let ids = tok.encode("12+7")?;
//! assert_eq!(ids.len(), 4);
//! assert_eq!(tok.decode(&ids)?, "12+7");
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeSet;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// End-of-text token of the character-level tokenizers (id 0).
pub const CHAR_EOS: &str = "<|endoftext|>";
/// Unknown-character token of the character-level tokenizers (id 1).
pub const CHAR_UNK: &str = "<unk>";

/// One chat message for [`Tokenizer::apply_chat_template`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: "user".into(),
            content: content.into(),
        }
    }
}

/// A tokenizer with the model-level facts the sampler and the CLI need.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    eos_token_ids: Vec<u32>,
    bos_token: Option<String>,
    eos_token: Option<String>,
    chat_template: Option<String>,
}

fn tok_err(e: impl std::fmt::Display) -> Error {
    Error::Tokenizer {
        message: e.to_string(),
    }
}

impl Tokenizer {
    /// Wraps a HF tokenizer. `eos_token` names the end-of-sequence token (its id must exist).
    pub fn new(
        inner: tokenizers::Tokenizer,
        eos_token: Option<String>,
        bos_token: Option<String>,
        chat_template: Option<String>,
    ) -> Result<Self> {
        let mut eos_token_ids = Vec::new();
        if let Some(eos) = &eos_token {
            let id = inner
                .token_to_id(eos)
                .ok_or_else(|| tok_err(format!("EOS token {eos:?} is not in the vocabulary")))?;
            eos_token_ids.push(id);
        }
        Ok(Tokenizer {
            inner,
            eos_token_ids,
            bos_token,
            eos_token,
            chat_template,
        })
    }

    /// Parses a `tokenizer.json` document.
    pub fn from_json(json: &str) -> Result<tokenizers::Tokenizer> {
        tokenizers::Tokenizer::from_str(json).map_err(tok_err)
    }

    /// Builds a character-level tokenizer whose vocabulary is [`CHAR_EOS`] (id 0),
    /// [`CHAR_UNK`] (id 1), then every distinct character of `text` in code-point order.
    /// Characters not seen in `text` encode as [`CHAR_UNK`].
    pub fn train_chars(text: &str) -> Result<Self> {
        let chars: BTreeSet<char> = text.chars().collect();
        let mut vocab = serde_json::Map::new();
        vocab.insert(CHAR_EOS.into(), json!(0));
        vocab.insert(CHAR_UNK.into(), json!(1));
        for (i, c) in chars.iter().enumerate() {
            vocab.insert(c.to_string(), json!(i + 2));
        }
        let special = |id: u32, content: &str| {
            json!({"id": id, "content": content, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        };
        let doc = json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [special(0, CHAR_EOS), special(1, CHAR_UNK)],
            "normalizer": null,
            "pre_tokenizer": null,
            "post_processor": null,
            "decoder": {"type": "Fuse"},
            "model": {
                "type": "BPE", "dropout": null, "unk_token": CHAR_UNK,
                "continuing_subword_prefix": null, "end_of_word_suffix": null,
                "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                "vocab": vocab, "merges": []
            }
        });
        let inner = Self::from_json(&doc.to_string())?;
        tracing::debug!(
            vocab = chars.len() + 2,
            "trained a character-level tokenizer"
        );
        Self::new(inner, Some(CHAR_EOS.into()), None, None)
    }

    /// Builds a byte-level BPE tokenizer (GPT-2 style, as `tokenizer.ggml.model = "gpt2"`)
    /// from its vocabulary, merges (`"a b"` strings) and the ids of special tokens. `pre` is
    /// GGUF's `tokenizer.ggml.pre` and selects the pre-tokenizer: `smollm`, `starcoder` and
    /// kin split every digit; `qwen2` uses Qwen's regex; anything else GPT-2's.
    pub fn byte_level_bpe(
        tokens: &[String],
        merges: &[String],
        special_ids: &[u32],
        pre: &str,
    ) -> Result<tokenizers::Tokenizer> {
        let vocab: serde_json::Map<String, Value> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), json!(i)))
            .collect();
        let added: Vec<Value> = special_ids
            .iter()
            .filter_map(|&id| tokens.get(id as usize).map(|t| (id, t)))
            .map(|(id, t)| {
                json!({"id": id, "content": t, "single_word": false, "lstrip": false,
                       "rstrip": false, "normalized": false, "special": true})
            })
            .collect();
        let byte_level = |use_regex: bool| {
            json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                   "use_regex": use_regex})
        };
        let pre_tokenizer = match pre {
            "smollm" | "starcoder" | "refact" | "codeshell" | "command-r" => json!({
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Digits", "individual_digits": true},
                    byte_level(true)
                ]
            }),
            "qwen2" => json!({
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": QWEN2_PRE_REGEX},
                     "behavior": "Isolated", "invert": false},
                    byte_level(false)
                ]
            }),
            _ => byte_level(true),
        };
        let doc = json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": null,
            "pre_tokenizer": pre_tokenizer,
            "post_processor": {"type": "ByteLevel", "add_prefix_space": false,
                               "trim_offsets": false, "use_regex": false},
            "decoder": {"type": "ByteLevel", "add_prefix_space": false,
                        "trim_offsets": true, "use_regex": true},
            "model": {
                "type": "BPE", "dropout": null, "unk_token": null,
                "continuing_subword_prefix": null, "end_of_word_suffix": null,
                "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                "vocab": vocab, "merges": merges
            }
        });
        Self::from_json(&doc.to_string())
    }

    /// Loads `tokenizer.json` from `dir`, with `tokenizer_config.json` (EOS/BOS token names,
    /// chat template) when present.
    pub fn load_dir(dir: &Path) -> Result<Self> {
        let path = dir.join("tokenizer.json");
        let inner = tokenizers::Tokenizer::from_file(&path)
            .map_err(|e| tok_err(format!("{}: {e}", path.display())))?;
        let config_path = dir.join("tokenizer_config.json");
        let config: TokenizerConfig = if config_path.exists() {
            let text = std::fs::read_to_string(&config_path).map_err(|source| Error::Io {
                path: config_path.clone(),
                source,
            })?;
            serde_json::from_str(&text).map_err(|source| Error::Json {
                path: config_path.clone(),
                source,
            })?
        } else {
            TokenizerConfig::default()
        };
        let template = match config.chat_template {
            Some(Value::String(s)) => Some(s),
            // A list of named templates: take the default one.
            Some(Value::Array(list)) => list.iter().find_map(|t| {
                if t.get("name")?.as_str()? == "default" {
                    t.get("template")?.as_str().map(String::from)
                } else {
                    None
                }
            }),
            _ => None,
        };
        Self::new(
            inner,
            token_name(config.eos_token),
            token_name(config.bos_token),
            template,
        )
    }

    /// Writes `tokenizer.json` and `tokenizer_config.json` into `dir`.
    pub fn save_dir(&self, dir: &Path) -> Result<()> {
        let path = dir.join("tokenizer.json");
        self.inner
            .save(&path, false)
            .map_err(|e| tok_err(format!("{}: {e}", path.display())))?;
        let config = TokenizerConfig {
            tokenizer_class: Some(Value::String(FAST_TOKENIZER_CLASS.to_owned())),
            eos_token: self.eos_token.clone().map(Value::String),
            bos_token: self.bos_token.clone().map(Value::String),
            chat_template: self.chat_template.clone().map(Value::String),
        };
        let path = dir.join("tokenizer_config.json");
        let text = serde_json::to_string_pretty(&config).map_err(|source| Error::Json {
            path: path.clone(),
            source,
        })?;
        std::fs::write(&path, text).map_err(|source| Error::Io { path, source })
    }

    /// Encodes `text` without adding special tokens (prompt templates add what they need).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self.inner.encode(text, false).map_err(tok_err)?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Decodes ids to text, dropping special tokens such as EOS.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.inner.decode(ids, true).map_err(tok_err)
    }

    /// Number of tokens, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The id of a token, if it exists.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// Ids that end a generation (from the EOS token name; the model config may add more).
    pub fn eos_token_ids(&self) -> &[u32] {
        &self.eos_token_ids
    }

    /// The first end-of-sequence id: the one the trainer pads and packs with. A tokenizer
    /// without one is an error (never a silent token 0).
    pub fn eos_id(&self) -> Result<u32> {
        self.eos_token_ids
            .first()
            .copied()
            .ok_or_else(|| Error::Tokenizer {
                message: "the tokenizer has no end-of-sequence token (set `eos_token` in \
                          tokenizer_config.json or `eos_token_id` in config.json)"
                    .into(),
            })
    }

    /// The chat template (Jinja), if the model has one.
    pub fn chat_template(&self) -> Option<&str> {
        self.chat_template.as_deref()
    }

    /// Replaces the chat template.
    pub fn set_chat_template(&mut self, template: Option<String>) {
        self.chat_template = template;
    }

    /// The underlying HF tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Renders `messages` with the chat template (Jinja, HF conventions: `messages`,
    /// `add_generation_prompt`, `bos_token`, `eos_token`, `raise_exception`). Without a
    /// template, returns the concatenated message contents, so plain-text models take the
    /// prompt as is.
    pub fn apply_chat_template(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
    ) -> Result<String> {
        let Some(template) = &self.chat_template else {
            return Ok(messages
                .iter()
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join("\n"));
        };
        let render_err = |e: minijinja::Error| Error::ChatTemplate {
            message: format!("{e:#}"),
        };
        let mut env = minijinja::Environment::new();
        env.add_function(
            "raise_exception",
            |message: String| -> std::result::Result<String, minijinja::Error> {
                Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    message,
                ))
            },
        );
        env.add_template("chat", template).map_err(render_err)?;
        let context = minijinja::context! {
            messages => messages,
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos_token.clone().unwrap_or_default(),
            eos_token => self.eos_token.clone().unwrap_or_default(),
        };
        env.get_template("chat")
            .and_then(|t| t.render(context))
            .map_err(render_err)
    }

    /// Encodes a user prompt the way the model expects it: through the chat template when
    /// there is one (with the generation prompt), as plain text otherwise.
    pub fn encode_prompt(&self, prompt: &str) -> Result<Vec<u32>> {
        let text = self.apply_chat_template(&[ChatMessage::user(prompt)], true)?;
        self.encode(&text)
    }
}

/// GGUF `tokenizer.ggml.pre = "qwen2"` pre-tokenizer regex (from Qwen2's tokenizer.json).
const QWEN2_PRE_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// What a saved `tokenizer_config.json` names as its class: transformers' class for a bare
/// `tokenizer.json`. Without it, `AutoTokenizer` guesses from the model's `config.json` (a
/// Llama-shaped model gets `CodeLlamaTokenizer`, which turns spaces into `▁` and drops them on
/// decode), so TRL, PEFT or tinker-cookbook would read our text differently from us.
const FAST_TOKENIZER_CLASS: &str = "PreTrainedTokenizerFast";

/// The fields of HF's `tokenizer_config.json` this crate reads and writes.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TokenizerConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tokenizer_class: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eos_token: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bos_token: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chat_template: Option<Value>,
}

/// A token name from `tokenizer_config.json`: a string or an `{"content": …}` object.
fn token_name(value: Option<Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("content")?.as_str().map(String::from),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn char_tokenizer_round_trips_and_maps_unknowns() {
        let tok = Tokenizer::train_chars("0123456789+-*/= ?\nWhat is").unwrap();
        // 2 specials + 10 digits + "+-*/= ?\n" (8) + "What is" minus space (W,h,a,t,i,s = 6).
        assert_eq!(tok.vocab_size(), 2 + 10 + 8 + 6);
        for text in ["What is 12+7?", "  9 *  9\n", "", "0"] {
            let ids = tok.encode(text).unwrap();
            assert_eq!(ids.len(), text.chars().count(), "{text:?}");
            assert_eq!(tok.decode(&ids).unwrap(), text);
        }
        assert_eq!(tok.encode("x").unwrap(), vec![1]);
        assert_eq!(tok.eos_token_ids(), &[0]);
        // EOS is special: decode drops it.
        let mut ids = tok.encode("12").unwrap();
        ids.push(0);
        assert_eq!(tok.decode(&ids).unwrap(), "12");
    }

    #[test]
    fn char_tokenizer_ids_follow_code_point_order() {
        let tok = Tokenizer::train_chars("ba").unwrap();
        assert_eq!(tok.encode("ab").unwrap(), vec![2, 3]);
    }

    #[test]
    fn save_and_load_keep_ids_and_template() {
        let mut tok = Tokenizer::train_chars("abc<|>_ \n").unwrap();
        tok.set_chat_template(Some(CHATML.into()));
        let dir = tempfile::tempdir().unwrap();
        tok.save_dir(dir.path()).unwrap();
        let back = Tokenizer::load_dir(dir.path()).unwrap();
        assert_eq!(
            back.encode("a b\nc").unwrap(),
            tok.encode("a b\nc").unwrap()
        );
        assert_eq!(back.eos_token_ids(), tok.eos_token_ids());
        assert_eq!(back.chat_template(), Some(CHATML));
        // transformers' AutoTokenizer is told which class reads tokenizer.json as we do.
        let config: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("tokenizer_config.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(config["tokenizer_class"], "PreTrainedTokenizerFast");
    }

    #[test]
    fn chatml_template_renders() {
        let mut tok = Tokenizer::train_chars("x").unwrap();
        tok.set_chat_template(Some(CHATML.into()));
        let text = tok
            .apply_chat_template(&[ChatMessage::user("What is 2+2?")], true)
            .unwrap();
        assert_eq!(
            text,
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn raise_exception_in_a_template_is_an_error() {
        let mut tok = Tokenizer::train_chars("x").unwrap();
        tok.set_chat_template(Some("{{ raise_exception('no system role') }}".into()));
        let err = tok
            .apply_chat_template(&[ChatMessage::user("hi")], true)
            .unwrap_err();
        assert!(err.to_string().contains("no system role"), "{err}");
    }

    #[test]
    fn without_template_the_prompt_is_plain_text() {
        let tok = Tokenizer::train_chars("12+").unwrap();
        assert_eq!(
            tok.encode_prompt("1+2").unwrap(),
            tok.encode("1+2").unwrap()
        );
    }

    #[test]
    fn byte_level_bpe_merges_and_splits_digits() {
        // Vocabulary: the bytes we use, plus merges "h e" → "he", "he y" → "hey".
        let tokens: Vec<String> = [
            "<|endoftext|>",
            "h",
            "e",
            "y",
            "1",
            "2",
            "Ġ",
            "he",
            "hey",
            "Ġhey",
            "12",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let merges: Vec<String> = ["h e", "he y", "Ġ hey", "1 2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let inner = Tokenizer::byte_level_bpe(&tokens, &merges, &[0], "smollm").unwrap();
        let tok = Tokenizer::new(inner, Some("<|endoftext|>".into()), None, None).unwrap();
        // "hey hey12": "hey", "Ġhey", then digits split individually (no "12" merge across).
        assert_eq!(tok.encode("hey hey12").unwrap(), vec![8, 9, 4, 5]);
        assert_eq!(tok.decode(&[8, 9, 4, 5]).unwrap(), "hey hey12");
        assert_eq!(tok.encode("<|endoftext|>").unwrap(), vec![0]);
    }
}

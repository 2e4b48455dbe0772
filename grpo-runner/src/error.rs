//! Errors of the runner library: model loading and saving, tokenizers, sampling.

use std::path::PathBuf;

/// Everything that can go wrong in the runner library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tensor operation failed (shape mismatch, unsupported dtype, device error).
    #[error("tensor operation failed: {0}")]
    Candle(#[from] candle_core::Error),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A JSON file (config, tokenizer config, index) could not be parsed.
    #[error("{path}: invalid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// A model configuration field is missing or has a value the decoder cannot use.
    #[error("{path}: field `{field}`: {message}")]
    Config {
        /// Where the configuration came from (a `config.json`, a GGUF file, or `<memory>`).
        path: PathBuf,
        /// The offending field.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A weight the configuration requires is not in the checkpoint.
    #[error("{path}: missing tensor `{name}`")]
    MissingTensor {
        /// The checkpoint.
        path: PathBuf,
        /// The HF name of the tensor.
        name: String,
    },
    /// A weight in the checkpoint has the wrong shape for the configuration.
    #[error("{path}: tensor `{name}` has shape {found:?}, the config needs {expected:?}")]
    TensorShape {
        /// The checkpoint.
        path: PathBuf,
        /// The HF name of the tensor.
        name: String,
        /// The shape the configuration implies.
        expected: Vec<usize>,
        /// The shape in the file.
        found: Vec<usize>,
    },
    /// A model path is neither an HF directory nor a GGUF file.
    #[error("{path}: not a model (expected a directory with config.json or a .gguf file)")]
    UnknownModelFormat {
        /// The path given.
        path: PathBuf,
    },
    /// A GGUF file lacks metadata the loader needs, or holds an unsupported architecture.
    #[error("{path}: GGUF metadata `{key}`: {message}")]
    Gguf {
        /// The GGUF file.
        path: PathBuf,
        /// The metadata key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The tokenizer could not be built, loaded, saved, or run.
    #[error("tokenizer: {message}")]
    Tokenizer {
        /// What went wrong.
        message: String,
    },
    /// The chat template could not be compiled or rendered.
    #[error("chat template: {message}")]
    ChatTemplate {
        /// What went wrong.
        message: String,
    },
    /// Inputs to the model or sampler are inconsistent (a prompt longer than the context,
    /// a token id outside the vocabulary, a bad sampling setting).
    #[error("invalid input: {message}")]
    InvalidInput {
        /// What is wrong.
        message: String,
    },
    /// A training setting (config file, preset, `--set` override) is unknown or invalid.
    #[error("config `{field}`: {message}")]
    Settings {
        /// The dotted name of the setting (`sampling.group_size`), or the file.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The GRPO math rejected its inputs.
    #[error("grpo: {0}")]
    Core(#[from] grpo_core::Error),
    /// A task pack could not be loaded or does not fit the run.
    #[error("task pack `{pack}`: {message}")]
    Pack {
        /// The pack as named in the config.
        pack: String,
        /// What is wrong.
        message: String,
    },
    /// The code sandbox could not be started.
    #[error("sandbox: {message}")]
    Sandbox {
        /// What went wrong.
        message: String,
    },
    /// The rewards could not be built or could not judge (a fault on our side).
    #[error("rewards: {0}")]
    Reward(#[from] grpo_rewards::RewardError),
    /// A checkpoint could not be written or read back.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The checkpoint directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// An [`Error::InvalidInput`] with the given message.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidInput {
            message: message.into(),
        }
    }
}

/// `Result` with the runner's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

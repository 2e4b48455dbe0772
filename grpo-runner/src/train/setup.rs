//! Setting a run up: the pack's splits and manifest, and the sandbox when it has code tasks.

use grpo_rewards::Scorer;
use grpo_sandbox::{Sandbox, SandboxOptions};
use grpo_tasks::{Manifest, Pack, Task};

use crate::config::TrainConfig;
use crate::error::{Error, Result};

/// Loads the pack's train and eval splits and its manifest.
pub(super) fn load_tasks(config: &TrainConfig) -> Result<(Vec<Task>, Vec<Task>, Manifest)> {
    let source = &config.pack.source;
    let pack = Pack::load(source).map_err(|e| Error::Pack {
        pack: source.clone(),
        message: e.to_string(),
    })?;
    let split = |name: &str| -> Result<Vec<Task>> {
        let tasks = pack.split(name).ok_or_else(|| Error::Pack {
            pack: source.clone(),
            message: format!(
                "no split `{name}` (splits: {})",
                pack.split_names().join(", ")
            ),
        })?;
        if tasks.is_empty() {
            return Err(Error::Pack {
                pack: source.clone(),
                message: format!("split `{name}` is empty"),
            });
        }
        Ok(tasks.to_vec())
    };
    Ok((
        split(&config.pack.train_split)?,
        split(&config.pack.eval_split)?,
        pack.manifest.clone(),
    ))
}

/// The sandbox a run with code tasks needs (`None` when it has none).
pub(super) fn sandbox_for(config: &TrainConfig, tasks: &[&[Task]]) -> Result<Option<Sandbox>> {
    if !Scorer::needs_code(tasks.iter().flat_map(|t| t.iter())) {
        return Ok(None);
    }
    let defaults = SandboxOptions::default();
    let options = SandboxOptions {
        concurrency: match config.sandbox.concurrency {
            0 => defaults.concurrency,
            n => n,
        },
        temp_root: config.sandbox.temp_dir.clone(),
        ..defaults.clone()
    };
    let sandbox = if options == defaults {
        Sandbox::shared()
    } else {
        Sandbox::new(&options)
    };
    sandbox.map(Some).map_err(|e| Error::Sandbox {
        message: e.to_string(),
    })
}

/// The code interpreter's sandbox when the run gives the policy the tool: a session for
/// every completion of a sampling call or an evaluation batch at once (sessions live until
/// their sampling call ends), each of the tool's memory ([`crate::rollout::tools::sandbox`]).
pub(super) fn tools_sandbox(config: &TrainConfig) -> Result<Option<Sandbox>> {
    if !config.tools.enabled {
        return Ok(None);
    }
    let rows = (config.sampling.prompts_per_step * config.sampling.group_size)
        .max(config.eval.batch_prompts.max(1));
    crate::rollout::tools::sandbox(
        &config.tools,
        rows,
        config.sandbox.concurrency,
        config.sandbox.temp_dir.clone(),
    )
    .map(Some)
}

//! Setting a run up: the pack's splits and manifest, and the run's one sandbox when it has
//! code tasks or the interpreter tool.

use grpo_rewards::Scorer;
use grpo_sandbox::{Allocator, Sandbox, SandboxOptions};
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

/// The run's one sandbox, and whether the scorer judges code in it: scoring code tasks, and
/// with the interpreter tool on, a session for every completion of a sampling call or an
/// evaluation batch at once (sessions live until their sampling call ends). `None` when the
/// run needs neither.
pub(super) fn sandbox_for(
    config: &TrainConfig,
    tasks: &[&[Task]],
) -> Result<(Option<Sandbox>, bool)> {
    let scores_code = Scorer::needs_code(tasks.iter().flat_map(|t| t.iter()));
    let sessions = if config.tools.enabled {
        (config.sampling.prompts_per_step * config.sampling.group_size)
            .max(config.eval.batch_prompts.max(1))
    } else {
        0
    };
    let sandbox = match (scores_code, config.tools.enabled) {
        (false, false) => None,
        // The interpreter alone: its sessions beside a few program slots, each of the tool's
        // memory.
        (false, true) => Some(crate::rollout::tools::sandbox(
            &config.tools,
            sessions,
            config.sandbox.concurrency,
            config.sandbox.temp_dir.clone(),
        )?),
        (true, _) => Some(scoring_sandbox(config, sessions)?),
    };
    Ok((sandbox, scores_code))
}

/// The sandbox code tasks are scored in, with `sessions` interpreter sessions beside its
/// programs (the pool's slots then hold at least the tool's memory).
fn scoring_sandbox(config: &TrainConfig, sessions: usize) -> Result<Sandbox> {
    let defaults = SandboxOptions::default();
    let mut options = SandboxOptions {
        concurrency: match config.sandbox.concurrency {
            0 => defaults.concurrency,
            n => n,
        },
        temp_root: config.sandbox.temp_dir.clone(),
        sessions,
        ..defaults.clone()
    };
    if sessions > 0
        && let Allocator::Pooling { max_memory_mb, .. } = &mut options.engine.allocator
    {
        *max_memory_mb = (*max_memory_mb).max(config.tools.memory_mb);
    }
    let sandbox = if options == defaults {
        Sandbox::shared()
    } else {
        Sandbox::new(&options)
    };
    sandbox.map_err(|e| Error::Sandbox {
        message: e.to_string(),
    })
}

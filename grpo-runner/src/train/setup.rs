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

/// The run's one sandbox, and whether the scorer judges code in it (see
/// [`sandbox_options`]); `None` when the run needs neither code scoring nor the tool.
pub(super) fn sandbox_for(
    config: &TrainConfig,
    tasks: &[&[Task]],
) -> Result<(Option<Sandbox>, bool)> {
    let scores_code = Scorer::needs_code(tasks.iter().flat_map(|t| t.iter()));
    let Some(options) = sandbox_options(config, scores_code) else {
        return Ok((None, scores_code));
    };
    let sandbox = if options == SandboxOptions::default() {
        Sandbox::shared()
    } else {
        Sandbox::new(&options)
    };
    let sandbox = sandbox.map_err(|e| Error::Sandbox {
        message: e.to_string(),
    })?;
    Ok((Some(sandbox), scores_code))
}

/// The options of the run's one sandbox: for scoring code tasks (`scores_code`), and with
/// the interpreter tool on, a session for every completion of a sampling call or an
/// evaluation batch at once (sessions live until their sampling call ends), the pool's slots
/// then holding at least the tool's memory. A run with the tool alone gets the tool's small
/// pool ([`crate::rollout::tools::sandbox_options`]).
fn sandbox_options(config: &TrainConfig, scores_code: bool) -> Option<SandboxOptions> {
    let sessions = if config.tools.enabled {
        (config.sampling.prompts_per_step * config.sampling.group_size)
            .max(config.eval.batch_prompts.max(1))
    } else {
        0
    };
    if !scores_code {
        return config.tools.enabled.then(|| {
            crate::rollout::tools::sandbox_options(
                &config.tools,
                sessions,
                config.sandbox.concurrency,
                config.sandbox.temp_dir.clone(),
            )
        });
    }
    let defaults = SandboxOptions::default();
    let mut options = SandboxOptions {
        concurrency: match config.sandbox.concurrency {
            0 => defaults.concurrency,
            n => n,
        },
        temp_root: config.sandbox.temp_dir.clone(),
        sessions,
        ..defaults
    };
    if sessions > 0
        && let Allocator::Pooling { max_memory_mb, .. } = &mut options.engine.allocator
    {
        *max_memory_mb = (*max_memory_mb).max(config.tools.memory_mb);
    }
    Some(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Preset;

    /// The pool's instance slots and memory per slot.
    fn pool(allocator: &Allocator) -> (u32, u64) {
        match *allocator {
            Allocator::Pooling {
                total_instances,
                max_memory_mb,
                ..
            } => (total_instances, max_memory_mb),
            Allocator::OnDemand => panic!("a pooling allocator: {allocator:?}"),
        }
    }

    #[test]
    fn one_sandbox_holds_code_scoring_and_the_tools_sessions() -> Result<()> {
        let mut config = TrainConfig::resolve(Preset::Code, None, &[])?;
        // Code alone: the default sandbox, no session slots.
        let code = sandbox_options(&config, true).expect("a sandbox for code");
        assert_eq!(code, SandboxOptions::default());
        // Code and the tool: the same sandbox with a slot per completion of a step (or of an
        // evaluation batch, when larger), each slot fitting the tool's memory.
        config.tools.enabled = true;
        config.tools.memory_mb = 2048;
        let both = sandbox_options(&config, true).expect("a sandbox for both");
        let rows = config.sampling.prompts_per_step * config.sampling.group_size;
        assert_eq!(both.sessions, rows.max(config.eval.batch_prompts));
        assert_eq!(
            pool(&both.engine_options().allocator).0,
            pool(&code.engine.allocator).0 + both.sessions as u32
        );
        assert_eq!(pool(&both.engine.allocator).1, 2048);
        // The tool alone: its own small pool; neither: none.
        let tool = sandbox_options(&config, false).expect("a sandbox for the tool");
        assert_eq!(pool(&tool.engine.allocator), (4, 2048));
        assert_eq!(tool.sessions, both.sessions);
        config.tools.enabled = false;
        assert_eq!(sandbox_options(&config, false), None);
        Ok(())
    }
}

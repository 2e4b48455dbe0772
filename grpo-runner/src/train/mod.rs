//! The GRPO trainer: sample → score → advantages → update → report.
//!
//! One step:
//!
//! 1. **sample** `prompts_per_step` training problems and `group_size` completions for each
//!    with the current policy (temperature > 0), recording every token's log-probability;
//! 2. **score** every group with the reward set of the scoring contract
//!    ([`grpo_rewards::Scorer`]: accuracy routed by task kind, code in the sandbox, format)
//!    on a tokio runtime, the first half of the prompts while the second is sampled. A group
//!    whose scoring fails on our side (a sandbox fault) is scored
//!    again up to `rewards.fault_retries` times, then left out of the update and counted:
//!    a fault is never a reward;
//! 3. **advantages** per group with grpo-core (population std, tied group → 0); with dynamic
//!    sampling, groups whose rewards are all equal are dropped and more prompts are sampled;
//! 4. **update**: the groups kept are packed once (a `StepBatch`, with the reference
//!    log-probs when β > 0); `iterations` (μ) passes over it, each split into `minibatches`
//!    of whole groups; a minibatch is one optimiser step, its groups go through the model in
//!    micro-batches whose losses share the minibatch's normaliser (gradient accumulation
//!    equals one big batch); grad-norm clip, fused AdamW, the scheduled learning rate;
//! 5. **report** a [`StepRecord`] (and some [`SampleRecord`]s).
//!
//! [`Trainer::run`] adds the supervised warm-up, held-out evaluations (greedy, accuracy
//! verdict only), checkpoints and the run directory's files around the steps.
//!
//! Each phase is a free function of what it reads (the trainer's [`Parts`], borrowed),
//! returning its value and, where it measures any, its metrics, so [`Trainer::step`] reads as
//! the sequence of calls and each phase can be tested on its own: `rollout.rs` (sample and
//! score a round into groups, with the round's metrics), `advantages.rs`, the reference
//! log-probs (`reference_logprobs` in `rollout/group.rs`, over the step's batch packed
//! once), `update.rs` (the policy update, with its loss metrics), `evaluate.rs` (held-out
//! evaluation, an `EvalRecord`). `setup.rs` loads the pack and builds the sandbox, `sft.rs`
//! is the warm-up; the step and the run are here. The data the phases pass (groups, the
//! packed batch) lives in [`crate::rollout`]; what a run writes, and what a step's phases add
//! up to in its records, in [`crate::run`].

mod advantages;
mod evaluate;
mod rollout;
mod setup;
pub mod sft;
mod update;

use std::sync::Arc;
use std::time::Instant;

use candle_core::DType;
use grpo_core::StepMetrics;
use grpo_rewards::Scorer;
use grpo_sandbox::Sandbox;
use grpo_tasks::{Manifest, Task, Template};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::config::TrainConfig;
use crate::error::{Error, Result};
use crate::eval::encode_prompt;
use crate::model::Model;
use crate::optim::AdamW;
use crate::rollout::group::{Group, StepBatch, reference_logprobs};
use crate::run::checkpoint::{self, RngState, TrainState};
use crate::run::dir::RunDir;
use crate::run::records::{EvalRecord, Event, SampleRecord, StepRecord};
use crate::run::tally::{StepFacts, StepTally, UpdateOutcome, sample_records};
use crate::tokenizer::Tokenizer;
use advantages::advantages;
use rollout::{draw_tasks, rollout};
use setup::{load_tasks, sandbox_for};
use sft::{WarmupProblem, WarmupReport};
use update::update;

pub use crate::rollout::logprobs::completion_logprobs;

/// What [`Trainer::run`] ends with.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The warm-up, when one ran in this invocation.
    pub warmup: Option<WarmupReport>,
    /// The first evaluation of the run (after the warm-up, before any GRPO step).
    pub before: Option<EvalRecord>,
    /// The last evaluation.
    pub after: Option<EvalRecord>,
    /// GRPO steps taken in all.
    pub steps: u64,
    /// Wall-clock seconds of the whole run (warm-up included, across resumes).
    pub seconds: f64,
    /// Whether the run stopped early (time budget or `stop_after`).
    pub stopped_early: bool,
    /// Whether the wall-clock safety limit (`budget.max_minutes`) cut the run.
    pub cut_by_time_limit: bool,
}

/// A GRPO training run in memory.
pub struct Trainer {
    config: TrainConfig,
    policy: Model,
    reference: Option<Model>,
    tokenizer: Tokenizer,
    optimizer: AdamW,
    rewards: Arc<Scorer>,
    /// The run's one sandbox: code scoring and the interpreter tool's sessions.
    sandbox: Option<Sandbox>,
    /// Whether the scorer judges code in `sandbox`.
    scores_code: bool,
    train_tasks: Vec<Task>,
    eval_tasks: Vec<Task>,
    template: Template,
    prompt_rng: ChaCha8Rng,
    step: u64,
    warmed_up: bool,
    elapsed_before: f64,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("step", &self.step)
            .field("parameters", &self.policy.num_parameters())
            .field("reference", &self.reference.is_some())
            .finish()
    }
}

/// The trainer's parts a phase of a step reads, borrowed: each phase is a free function of
/// these and its inputs.
pub(crate) struct Parts<'a> {
    config: &'a TrainConfig,
    policy: &'a Model,
    tokenizer: &'a Tokenizer,
    template: &'a Template,
    scorer: &'a Arc<Scorer>,
    runtime: &'a tokio::runtime::Runtime,
    /// The sandbox the interpreter tool's sessions run in, when the tool is on.
    tool_sandbox: Option<&'a Sandbox>,
    /// Whether the scorer judges code (a round is then sampled in two pieces, the first
    /// scored while the second is sampled).
    scores_code: bool,
    /// The GRPO steps taken, this one included.
    step: u64,
}

impl Parts<'_> {
    /// A task's prompt as the run renders it (its template) and encodes it (with the chat
    /// template when the run uses one).
    fn encode_prompt(&self, task: &Task) -> Result<(String, Vec<u32>)> {
        let text = self.template.render(task);
        let ids = encode_prompt(self.tokenizer, &text, self.config.model.chat_template)?;
        Ok((text, ids))
    }
}

/// Mixes the run seed with a purpose and indices into a seed for a derived generator.
fn derive_seed(seed: u64, purpose: u64, a: u64, b: u64) -> u64 {
    let mut x = seed ^ purpose.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for v in [a, b] {
        x = (x ^ v).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 31;
    }
    x
}

impl Trainer {
    /// A fresh run: loads the pack and the model (a new tiny model, or a checkpoint from
    /// `model.source`), builds the rewards and the optimiser. Nothing is trained yet.
    ///
    /// What the config leaves to the pack (template, reward weights) is filled from the
    /// pack's manifest here, so [`Trainer::config`] (and the run's `config.toml`) says what
    /// runs.
    pub fn new(mut config: TrainConfig) -> Result<Self> {
        config.validate()?;
        let (train_tasks, eval_tasks, manifest) = load_tasks(&config)?;
        config.resolve_from_pack(&manifest);
        config.validate()?;
        let template = config.template(&manifest);
        let device = config.model.device.open()?;
        let (policy, tokenizer) = match config.model_path() {
            None => {
                // Every character a prompt, a reference solution or a warm-up plan uses.
                let mut texts: Vec<String> = Vec::new();
                for task in train_tasks.iter().chain(&eval_tasks) {
                    texts.push(task.prompt().to_owned());
                    if let Task::Code(c) = task {
                        texts.extend(c.reference.iter().cloned());
                        texts.extend(sft::code_plan(c));
                    }
                }
                texts.extend(train_tasks.iter().take(1).map(|t| template.render(t)));
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let tokenizer = if config.tools.enabled {
                    sft::tool_tokenizer(&refs)?
                } else {
                    sft::format_tokenizer(&refs)?
                };
                let eos = tokenizer.eos_id()?;
                let spec = &config.model.tiny;
                let mut model_config = spec.config(tokenizer.vocab_size(), eos);
                // The context must hold the longest prompt and its completion: a fresh tiny
                // model has no learned positions, so the table simply grows.
                let longest = train_tasks
                    .iter()
                    .chain(&eval_tasks)
                    .map(|t| tokenizer.encode(&template.render(t)).map(|ids| ids.len()))
                    .collect::<Result<Vec<_>>>()?
                    .into_iter()
                    .max()
                    .unwrap_or(0);
                // The warm-up trains on whole reference solutions, which may be longer.
                let longest_solution = train_tasks
                    .iter()
                    .filter_map(|t| match t {
                        Task::Code(c) => sft::code_solution(c),
                        _ => None,
                    })
                    .map(|s| tokenizer.encode(&s).map(|ids| ids.len()))
                    .collect::<Result<Vec<_>>>()?
                    .into_iter()
                    .max()
                    .unwrap_or(0);
                let needed = longest
                    + config
                        .sampling
                        .max_new_tokens
                        .max(config.eval.max_new_tokens)
                        .max(longest_solution)
                    + 1;
                if needed > model_config.max_position_embeddings {
                    tracing::info!(
                        from = model_config.max_position_embeddings,
                        to = needed,
                        "tiny model context raised to fit the longest prompt"
                    );
                    model_config.max_position_embeddings = needed;
                }
                // f32 master weights whatever the compute dtype (set in `assemble`).
                let model = Model::random(&model_config, DType::F32, &device, spec.seed)?;
                (model, tokenizer)
            }
            Some(path) => crate::loading::load(&path, DType::F32, &device)?,
        };
        // LoRA: the adapters are the trainable weights from the start (warm-up included).
        let policy = if config.lora.enabled {
            policy.with_lora(&config.lora, derive_seed(config.seed, 5, 0, 0))?
        } else {
            policy
        };
        Self::assemble(
            config,
            &manifest,
            policy,
            None,
            tokenizer,
            train_tasks,
            eval_tasks,
        )
    }

    fn assemble(
        config: TrainConfig,
        manifest: &Manifest,
        policy: Model,
        reference: Option<Model>,
        tokenizer: Tokenizer,
        train_tasks: Vec<Task>,
        eval_tasks: Vec<Task>,
    ) -> Result<Self> {
        crate::cpu::flush_denormals_to_zero();
        // The weights stay f32 (the optimiser's master copy); forward passes cast them.
        let compute = config.model.dtype.dtype();
        let policy = policy.with_compute_dtype(compute)?;
        let reference = reference
            .map(|r| r.with_compute_dtype(compute))
            .transpose()?;
        let template = config.template(manifest);
        let optimizer = AdamW::new(policy.named_vars(), config.optimizer.adamw())?;
        config.validate_for_tasks(train_tasks.iter().chain(&eval_tasks))?;
        let (sandbox, scores_code) = sandbox_for(&config, &[&train_tasks, &eval_tasks])?;
        let code_sandbox = sandbox.clone().filter(|_| scores_code);
        // Code scoring runs on these threads while this one samples.
        let workers = code_sandbox.as_ref().map_or(1, |s| s.concurrency().max(1));
        let rewards = Arc::new(grpo_sandbox::scorer(
            &config.scoring(manifest)?,
            code_sandbox,
        )?);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .map_err(|source| Error::Io {
                path: "tokio runtime".into(),
                source,
            })?;
        let prompt_rng = ChaCha8Rng::seed_from_u64(derive_seed(config.seed, 1, 0, 0));
        tracing::info!(
            parameters = policy.num_parameters(),
            device = %config.model.device,
            dtype = %config.model.dtype,
            train = train_tasks.len(),
            eval = eval_tasks.len(),
            "trainer ready"
        );
        Ok(Trainer {
            config,
            policy,
            reference,
            tokenizer,
            optimizer,
            rewards,
            sandbox,
            scores_code,
            train_tasks,
            eval_tasks,
            template,
            prompt_rng,
            step: 0,
            warmed_up: false,
            elapsed_before: 0.0,
            runtime,
        })
    }

    /// Reopens a run from its directory: the saved `config.toml` and its latest checkpoint.
    pub fn resume(run_dir: &std::path::Path) -> Result<Self> {
        let config_path = run_dir.join("config.toml");
        let text = std::fs::read_to_string(&config_path).map_err(|source| Error::Io {
            path: config_path.clone(),
            source,
        })?;
        Self::resume_with(run_dir, TrainConfig::from_toml(&text)?)
    }

    /// [`Trainer::resume`] with the run's `config.toml` already read (as `grpo train --resume`
    /// does, to apply its thread count first).
    pub fn resume_with(run_dir: &std::path::Path, config: TrainConfig) -> Result<Self> {
        let root = run_dir.join("checkpoints");
        let dir = checkpoint::latest(&root)?.ok_or_else(|| Error::Checkpoint {
            path: root.clone(),
            message: "no checkpoint to resume from".into(),
        })?;
        let device = config.model.device.open()?;
        let ckpt = checkpoint::read(&dir, &device)?;
        let (train_tasks, eval_tasks, manifest) = load_tasks(&config)?;
        let mut trainer = Self::assemble(
            config,
            &manifest,
            ckpt.policy,
            ckpt.reference,
            ckpt.tokenizer,
            train_tasks,
            eval_tasks,
        )?;
        trainer.optimizer.load_state(ckpt.optimizer)?;
        trainer.prompt_rng = ckpt.state.prompt_rng.restore()?;
        trainer.step = ckpt.state.step;
        // Every checkpoint is written after the warm-up.
        trainer.warmed_up = true;
        trainer.elapsed_before = ckpt.state.elapsed_seconds;
        tracing::info!(step = trainer.step, dir = %dir.display(), "resumed");
        Ok(trainer)
    }

    /// The resolved configuration.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// GRPO steps taken.
    pub fn steps_taken(&self) -> u64 {
        self.step
    }

    /// The policy.
    pub fn policy(&self) -> &Model {
        &self.policy
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Replaces the scorer built from the config with `scorer` (with rewards of your own, in
    /// Rust: [`Scorer::with_reward`], [`Scorer::with_accuracy`]); training and evaluation both
    /// score with it, with the same fault handling: a group whose scoring fails or outlasts
    /// `rewards.group_timeout_s` is retried, then left out and counted.
    pub fn set_scorer(&mut self, scorer: Scorer) {
        self.rewards = Arc::new(scorer);
    }

    /// The scorer training and evaluation score with.
    pub fn scorer(&self) -> &Scorer {
        &self.rewards
    }

    /// The sandbox code is scored in, when the run scores code.
    fn code_sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref().filter(|_| self.scores_code)
    }

    /// The sandbox the interpreter tool's sessions run in, when the tool is on.
    fn tool_sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref().filter(|_| self.config.tools.enabled)
    }

    /// What the phases of a step read.
    fn parts(&self) -> Parts<'_> {
        Parts {
            config: &self.config,
            policy: &self.policy,
            tokenizer: &self.tokenizer,
            template: &self.template,
            scorer: &self.rewards,
            runtime: &self.runtime,
            tool_sandbox: self.tool_sandbox(),
            scores_code: self.scores_code,
            step: self.step,
        }
    }

    /// The supervised warm-up on the training split, or its first `warmup.problems` problems
    /// (see [`crate::train::sft`]); `None` when the config asks for none.
    pub fn warm_up(&mut self, on_event: &mut dyn FnMut(&Event)) -> Result<Option<WarmupReport>> {
        let w = self.config.warmup.clone();
        if w.steps == 0 {
            return Ok(None);
        }
        let take = if w.problems == 0 {
            self.train_tasks.len()
        } else {
            w.problems
        };
        let problems: Vec<WarmupProblem> = self
            .train_tasks
            .iter()
            .take(take)
            .filter_map(|task| match task {
                // With the code tool, `worked_fraction` of the examples call it.
                Task::Math(m) if self.config.tools.enabled => Some(WarmupProblem {
                    prompt: self.template.render(task),
                    worked: sft::tool_solution(m)?,
                    direct: sft::solution(m, false)?,
                }),
                Task::Math(m) => Some(WarmupProblem {
                    prompt: self.template.render(task),
                    worked: sft::solution(m, true)?,
                    direct: sft::solution(m, false)?,
                }),
                // Code: the reference solution, one style.
                Task::Code(c) => {
                    let solution = sft::code_solution(c)?;
                    Some(WarmupProblem {
                        prompt: self.template.render(task),
                        worked: solution.clone(),
                        direct: solution,
                    })
                }
                Task::Countdown(_) => None,
            })
            .collect();
        on_event(&Event::WarmupStarted { steps: w.steps });
        let report = sft::warm_up(
            &self.policy,
            &self.tokenizer,
            &problems,
            &w,
            self.config.seed,
            |step, loss| on_event(&Event::WarmupStep { step, loss }),
        )?;
        tracing::info!(?report, "warm-up done");
        Ok(Some(report))
    }

    /// Freezes a copy of the current policy as the KL reference, when β > 0.
    fn freeze_reference(&mut self) -> Result<()> {
        if self.config.algorithm.loss.beta > 0.0 && self.reference.is_none() {
            self.reference = Some(self.policy.deep_copy()?);
        }
        Ok(())
    }

    /// One GRPO step: rollout (sample → score) → advantages → reference log-probs → update
    /// → records.
    pub fn step(&mut self) -> Result<(StepRecord, Vec<SampleRecord>)> {
        let start = Instant::now();
        self.freeze_reference()?;
        self.step += 1;
        let step = self.step;
        let p = self.config.sampling.prompts_per_step;
        let runs_before = self.code_sandbox().map_or(0, Sandbox::runs_started);

        // rollout: sample → score, with refills under dynamic sampling
        let filter = self.config.algorithm.shaping.filter_zero_variance_groups;
        let max_refills = self.config.update.max_refill_rounds as u64;
        let mut tally = StepTally::default();
        let mut used: Vec<Group> = Vec::with_capacity(p);
        // The groups left out, as many as `samples.jsonl` shows.
        let samples_per_step = self.config.checkpoint.samples_per_step;
        let mut dropped: Vec<Group> = Vec::new();
        let mut dropped_completions = 0usize;
        let mut round = 0u64;
        loop {
            let tasks = draw_tasks(&mut self.prompt_rng, &self.train_tasks, p - used.len());
            let (groups, metrics) = rollout(&self.parts(), tasks, round)?;
            tally.add_round(&metrics);
            for group in groups {
                tally.add_group(&group);
                if !(filter && group.is_tied()) {
                    used.push(group);
                } else if dropped_completions < samples_per_step {
                    dropped_completions += group.texts.len();
                    dropped.push(group);
                }
            }
            if !filter || used.len() >= p || round >= max_refills {
                break;
            }
            round += 1;
        }
        used.truncate(p);

        // advantages: one [groups, G] tensor from the shaped rewards to the loss
        let g = self.config.sampling.group_size;
        let advantages = advantages(&used, g, &self.config.algorithm.advantage)?;

        // the step's batch, packed once → reference log-probs → update
        let update_start = Instant::now();
        let lr = self
            .config
            .schedule()
            .lr_at(step - 1, self.config.budget.steps);
        let (metrics, grad_norm) = match &advantages {
            Some(advantages) => {
                let temperature = self.config.sampling.temperature;
                let eos = self.tokenizer.eos_id()?;
                let mut batch = StepBatch::pack(&used, eos, self.policy.device())?;
                if let Some(reference) = &self.reference {
                    batch.reference = Some(reference_logprobs(reference, &batch, temperature)?);
                }
                update(
                    &self.policy,
                    &mut self.optimizer,
                    &batch,
                    advantages,
                    &self.config,
                    step,
                    lr,
                )?
            }
            None => (StepMetrics::default(), 0.0),
        };
        let update = UpdateOutcome {
            metrics,
            grad_norm,
            lr,
            seconds: update_start.elapsed().as_secs_f64(),
        };

        // records
        let rows = match &advantages {
            Some(advantages) => advantages.to_vec2::<f64>()?,
            None => Vec::new(),
        };
        let samples = sample_records(step, &used, &rows, &dropped, samples_per_step);
        let facts = StepFacts {
            step,
            used_groups: used.len(),
            trained_tokens: used
                .iter()
                .flat_map(|gr| gr.completions.iter().map(|c| c.tokens.len()))
                .sum(),
            refill_rounds: round as usize,
            sandbox_runs: self.code_sandbox().map_or(0, Sandbox::runs_started) - runs_before,
            step_seconds: start.elapsed().as_secs_f64(),
        };
        let record = tally.record(facts, update);
        tracing::debug!(?record, "step");
        Ok((record, samples))
    }

    /// Writes a checkpoint of the current state under `root`.
    pub fn checkpoint(
        &self,
        root: &std::path::Path,
        elapsed_seconds: f64,
    ) -> Result<std::path::PathBuf> {
        let state = TrainState {
            step: self.step,
            prompt_rng: RngState::capture(&self.prompt_rng),
            model_config: self.policy.config().clone(),
            optimizer_step: self.optimizer.steps_taken(),
            elapsed_seconds,
            lora: self.policy.lora().cloned(),
        };
        checkpoint::write(
            root,
            &self.policy,
            self.reference.as_ref(),
            &self.tokenizer,
            &self.optimizer.state(),
            &state,
        )
    }

    /// The whole run into `dir`: warm-up (fresh runs), evaluation before the first step, GRPO
    /// steps with periodic evaluations and checkpoints, a final evaluation, the final model in
    /// HF format, the plot. `stop_after` ends the run early after that step (for tests of
    /// resuming); `on_event` follows progress.
    pub fn run(
        &mut self,
        dir: &mut RunDir,
        stop_after: Option<u64>,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<RunSummary> {
        let start = Instant::now();
        let elapsed = |before: f64| before + start.elapsed().as_secs_f64();
        let mut warmup = None;
        let total = self.config.budget.steps;
        if !self.warmed_up {
            warmup = self.warm_up(on_event)?;
            self.warmed_up = true;
            self.freeze_reference()?;
            let record = self.evaluate()?;
            dir.append_eval(&record)?;
            on_event(&Event::Eval(record));
            // Step 0: the warmed-up policy, so a resumed or branched run (a control with
            // learning rate 0, another algorithm) never repeats the warm-up.
            if self.config.checkpoint.every > 0 {
                self.checkpoint(&dir.checkpoints(), elapsed(self.elapsed_before))?;
                on_event(&Event::Checkpoint { step: 0 });
            }
        }
        on_event(&Event::GrpoStarted {
            from: self.step,
            steps: total,
        });
        let mut stopped_early = false;
        let mut cut_by_time_limit = false;
        let mut last_eval_step = dir.last_eval_step();
        while self.step < total {
            let (mut record, samples) = self.step()?;
            // The run's length is its steps; the wall-clock limit is a safety net, and when
            // it cuts the run the last record says so.
            if self.step < total
                && self.config.budget.max_minutes > 0.0
                && elapsed(self.elapsed_before) > self.config.budget.max_minutes * 60.0
            {
                cut_by_time_limit = true;
                record.stopped = Some("time_limit".into());
                tracing::warn!(
                    step = self.step,
                    planned = total,
                    max_minutes = self.config.budget.max_minutes,
                    "the wall-clock limit cut the run"
                );
            }
            dir.append_step(&record)?;
            dir.append_samples(&samples)?;
            on_event(&Event::Step(Box::new(record)));
            if cut_by_time_limit {
                stopped_early = true;
                if self.config.checkpoint.every > 0 {
                    self.checkpoint(&dir.checkpoints(), elapsed(self.elapsed_before))?;
                    on_event(&Event::Checkpoint { step: self.step });
                }
                break;
            }
            if self.step.is_multiple_of(self.config.eval.every) || self.step == total {
                let record = self.evaluate()?;
                last_eval_step = Some(record.step);
                dir.append_eval(&record)?;
                on_event(&Event::Eval(record));
            }
            if self.config.checkpoint.every > 0
                && self.step.is_multiple_of(self.config.checkpoint.every)
            {
                self.checkpoint(&dir.checkpoints(), elapsed(self.elapsed_before))?;
                on_event(&Event::Checkpoint { step: self.step });
            }
            if stop_after.is_some_and(|s| self.step >= s) {
                stopped_early = self.step < total;
                break;
            }
        }
        if last_eval_step != Some(self.step)
            && !stop_after.is_some_and(|s| self.step >= s && self.step < total)
        {
            let record = self.evaluate()?;
            dir.append_eval(&record)?;
            on_event(&Event::Eval(record));
        }
        dir.write_final(
            &self.policy,
            &self.tokenizer,
            &self.eval_settings(),
            &String::from(self.config.model.source.clone()),
        )?;
        if let Err(e) = dir.plot() {
            tracing::warn!("could not draw the plot: {e}");
        }
        let evals = dir.evals()?;
        Ok(RunSummary {
            warmup,
            before: evals.first().cloned(),
            after: evals.last().cloned(),
            steps: self.step,
            seconds: elapsed(self.elapsed_before),
            stopped_early,
            cut_by_time_limit,
        })
    }
}

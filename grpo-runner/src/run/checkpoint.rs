//! Checkpoints: everything needed to continue a run exactly where it stopped.
//!
//! A checkpoint is a directory `checkpoints/step-NNNNNN/` in the run directory holding the
//! policy (`model.safetensors`), the frozen reference when there is one
//! (`reference.safetensors`), the optimiser's moments (`optimizer.safetensors`), the tokenizer,
//! and `state.json` (step, optimiser step count, random-generator position, model shape).
//!
//! Writing is atomic: everything goes to a temporary sibling directory, each file is fsynced,
//! the directory is renamed into place and its parent fsynced. A crash leaves either the old
//! set of checkpoints or the new one, never a half-written `step-*` directory.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Model, ModelConfig};
use crate::optim::AdamWState;
use crate::tokenizer::Tokenizer;

/// The position of a ChaCha generator: seed, stream and word position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RngState {
    /// The 32-byte seed, hex.
    pub seed: String,
    /// The stream number.
    pub stream: u64,
    /// The word position (u128 as decimal text; JSON numbers cannot hold it).
    pub word_pos: String,
}

impl RngState {
    /// Captures `rng`'s position.
    pub fn capture(rng: &ChaCha8Rng) -> Self {
        RngState {
            seed: rng.get_seed().iter().map(|b| format!("{b:02x}")).collect(),
            stream: rng.get_stream(),
            word_pos: rng.get_word_pos().to_string(),
        }
    }

    /// A generator at the captured position.
    pub fn restore(&self) -> Result<ChaCha8Rng> {
        use rand::SeedableRng;
        let bad = |m: &str| Error::Checkpoint {
            path: PathBuf::from("state.json"),
            message: m.into(),
        };
        if self.seed.len() != 64 {
            return Err(bad("rng seed must be 64 hex digits"));
        }
        let mut seed = [0u8; 32];
        for (i, byte) in seed.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&self.seed[2 * i..2 * i + 2], 16)
                .map_err(|_| bad("rng seed is not hex"))?;
        }
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(self.stream);
        rng.set_word_pos(
            self.word_pos
                .parse()
                .map_err(|_| bad("rng word position is not a number"))?,
        );
        Ok(rng)
    }
}

/// The scalar state of a run at a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// GRPO steps taken.
    pub step: u64,
    /// The prompt-drawing generator.
    pub prompt_rng: RngState,
    /// The policy's shape.
    pub model_config: ModelConfig,
    /// Optimiser steps taken.
    pub optimizer_step: u64,
    /// The run's wall-clock seconds so far.
    pub elapsed_seconds: f64,
    /// The LoRA config when the policy trains adapters (`model.safetensors` then holds the
    /// frozen base weights by HF name and the adapters by PEFT name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lora: Option<crate::model::lora::LoraConfig>,
}

/// A checkpoint read back.
#[derive(Debug)]
pub struct Checkpoint {
    /// Where it was read from.
    pub dir: PathBuf,
    /// The policy.
    pub policy: Model,
    /// The frozen reference, when the run has one.
    pub reference: Option<Model>,
    /// The tokenizer.
    pub tokenizer: Tokenizer,
    /// The optimiser's moments.
    pub optimizer: AdamWState,
    /// Step, generator and shape.
    pub state: TrainState,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn fsync(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(io(path))
}

fn save_tensors(tensors: &HashMap<String, Tensor>, path: &Path) -> Result<()> {
    candle_core::safetensors::save(tensors, path)?;
    fsync(path)
}

/// The model's weights (f32 master weights) copied to the host: the base by HF name, and
/// with LoRA the adapters by PEFT name.
fn model_tensors(model: &Model) -> Result<HashMap<String, Tensor>> {
    let mut vars = model.base_vars();
    if model.lora().is_some() {
        vars.extend(model.named_vars());
    }
    vars.into_iter()
        .map(|(name, var)| Ok((name, var.as_tensor().detach().to_device(&Device::Cpu)?)))
        .collect()
}

/// A model from checkpointed tensors: with `lora`, the adapters (PEFT names) go on the
/// base built from the rest.
fn checkpointed_model(
    state: &TrainState,
    mut tensors: HashMap<String, Tensor>,
    device: &Device,
) -> Result<Model> {
    let adapters: HashMap<String, Tensor> = match &state.lora {
        Some(_) => {
            let names: Vec<String> = tensors
                .keys()
                .filter(|k| k.starts_with("base_model.model."))
                .cloned()
                .collect();
            names
                .into_iter()
                .filter_map(|k| tensors.remove(&k).map(|t| (k, t)))
                .collect()
        }
        None => HashMap::new(),
    };
    let model = Model::from_tensors(
        &state.model_config,
        tensors,
        candle_core::DType::F32,
        device,
    )?;
    match &state.lora {
        Some(lora) => model.with_adapters(lora, adapters),
        None => Ok(model),
    }
}

/// The directory name of the checkpoint of `step`.
pub fn dir_name(step: u64) -> String {
    format!("step-{step:06}")
}

/// Writes a checkpoint under `root` atomically and returns its directory.
pub fn write(
    root: &Path,
    policy: &Model,
    reference: Option<&Model>,
    tokenizer: &Tokenizer,
    optimizer: &AdamWState,
    state: &TrainState,
) -> Result<PathBuf> {
    std::fs::create_dir_all(root).map_err(io(root))?;
    let final_dir = root.join(dir_name(state.step));
    let tmp = root.join(format!(".tmp-{}", dir_name(state.step)));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;

    save_tensors(&model_tensors(policy)?, &tmp.join("model.safetensors"))?;
    if let Some(reference) = reference {
        save_tensors(
            &model_tensors(reference)?,
            &tmp.join("reference.safetensors"),
        )?;
    }
    // The optimiser's moments are host vectors whatever the model's device.
    let mut moments = HashMap::new();
    for (name, m, v) in &optimizer.moments {
        moments.insert(
            format!("m.{name}"),
            Tensor::from_slice(m, m.len(), &Device::Cpu)?,
        );
        moments.insert(
            format!("v.{name}"),
            Tensor::from_slice(v, v.len(), &Device::Cpu)?,
        );
    }
    save_tensors(&moments, &tmp.join("optimizer.safetensors"))?;
    tokenizer.save_dir(&tmp)?;
    for entry in std::fs::read_dir(&tmp).map_err(io(&tmp))? {
        let path = entry.map_err(io(&tmp))?.path();
        fsync(&path)?;
    }
    let state_path = tmp.join("state.json");
    let text = serde_json::to_string_pretty(state).map_err(|source| Error::Json {
        path: state_path.clone(),
        source,
    })?;
    std::fs::write(&state_path, text).map_err(io(&state_path))?;
    fsync(&state_path)?;
    fsync(&tmp)?;
    if final_dir.exists() {
        std::fs::remove_dir_all(&final_dir).map_err(io(&final_dir))?;
    }
    std::fs::rename(&tmp, &final_dir).map_err(io(&final_dir))?;
    fsync(root)?;
    tracing::info!(step = state.step, dir = %final_dir.display(), "checkpoint written");
    Ok(final_dir)
}

/// The checkpoint with the highest step under `root`, if any (temporary directories of an
/// interrupted write are ignored).
pub fn latest(root: &Path) -> Result<Option<PathBuf>> {
    if !root.exists() {
        return Ok(None);
    }
    let mut best: Option<(u64, PathBuf)> = None;
    for entry in std::fs::read_dir(root).map_err(io(root))? {
        let path = entry.map_err(io(root))?.path();
        let Some(step) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("step-"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(s, _)| step > *s) {
            best = Some((step, path));
        }
    }
    Ok(best.map(|(_, p)| p))
}

/// Reads a checkpoint written by [`write`], its models onto `device` (as f32 master weights;
/// the caller sets the compute dtype).
pub fn read(dir: &Path, device: &Device) -> Result<Checkpoint> {
    let state_path = dir.join("state.json");
    let text = std::fs::read_to_string(&state_path).map_err(io(&state_path))?;
    let state: TrainState = serde_json::from_str(&text).map_err(|source| Error::Json {
        path: state_path.clone(),
        source,
    })?;
    let load = |name: &str, device: &Device| -> Result<HashMap<String, Tensor>> {
        Ok(candle_core::safetensors::load(dir.join(name), device)?)
    };
    let policy = checkpointed_model(&state, load("model.safetensors", device)?, device)?;
    let reference = if dir.join("reference.safetensors").exists() {
        Some(checkpointed_model(
            &state,
            load("reference.safetensors", device)?,
            device,
        )?)
    } else {
        None
    };
    let tokenizer = Tokenizer::load_dir(dir)?;
    // The optimiser keeps its moments in host memory.
    let mut moments_by_name = load("optimizer.safetensors", &Device::Cpu)?;
    let mut moments = Vec::new();
    for (name, _) in policy.named_vars() {
        let mut take = |key: String| -> Result<Vec<f32>> {
            let t = moments_by_name
                .remove(&key)
                .ok_or_else(|| Error::Checkpoint {
                    path: dir.to_path_buf(),
                    message: format!("optimizer state lacks `{key}`"),
                })?;
            Ok(t.flatten_all()?.to_vec1()?)
        };
        let m = take(format!("m.{name}"))?;
        let v = take(format!("v.{name}"))?;
        moments.push((name, m, v));
    }
    let optimizer = AdamWState {
        step: state.optimizer_step,
        moments,
    };
    Ok(Checkpoint {
        dir: dir.to_path_buf(),
        policy,
        reference,
        tokenizer,
        optimizer,
        state,
    })
}

#[cfg(test)]
mod tests {
    use rand::{RngCore, SeedableRng};

    use super::*;

    #[test]
    fn rng_state_round_trips_mid_stream() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        for _ in 0..37 {
            rng.next_u32();
        }
        let state = RngState::capture(&rng);
        let json = serde_json::to_string(&state).unwrap();
        let mut back = serde_json::from_str::<RngState>(&json)
            .unwrap()
            .restore()
            .unwrap();
        for _ in 0..100 {
            assert_eq!(rng.next_u64(), back.next_u64());
        }
        let bad = RngState {
            seed: "zz".into(),
            ..state
        };
        assert!(bad.restore().is_err());
    }

    #[test]
    fn latest_ignores_temporary_and_foreign_directories() {
        let dir = tempfile::tempdir().unwrap();
        assert!(latest(&dir.path().join("missing")).unwrap().is_none());
        for name in [
            "step-000002",
            "step-000010",
            ".tmp-step-000020",
            "notes",
            "step-x",
        ] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
        }
        assert_eq!(
            latest(dir.path()).unwrap().unwrap(),
            dir.path().join("step-000010")
        );
    }
}

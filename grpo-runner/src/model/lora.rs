//! LoRA: trainable low-rank adapters on the decoder's projections, with the base weights
//! frozen, saved in PEFT's layout.
//!
//! A projection `y = x·Wᵀ + b` with an adapter becomes `y = x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ`, with
//! `A: [rank, in]`, `B: [out, rank]` and `s = alpha / rank` (PEFT's `lora_alpha / r`). `A`
//! starts uniform in ±1/√in (PEFT's Kaiming-uniform with `a = √5`), `B` at zero, so a fresh
//! adapter leaves the model's outputs exactly as they were. With adapters on, the base
//! weights are constants (detached, never `Var`s): the optimiser sees only `A` and `B`
//! ([`Model::named_vars`](super::Model::named_vars)), and no gradient of a frozen weight is
//! ever computed. In the update a projection and its adapter are one autograd node
//! (`fused::lora_linear`), which holds no more than the plain projection does.
//!
//! Saved adapters follow PEFT (`adapter_config.json` with `peft_type = "LORA"`, and
//! `adapter_model.safetensors` with tensors named
//! `base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight`, no adapter name), so
//! `peft.PeftModel.from_pretrained` loads them onto the same base checkpoint;
//! [`Model::merged`](super::Model::merged) folds them into plain weights.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use candle_core::{DType, Device, Tensor, Var};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

use super::fused;
use super::ops::linear;
use super::{Model, ModelConfig};

/// A projection of a decoder layer, the places an adapter can sit on; named in configs and
/// in PEFT's files by its HF module name (`q_proj` … `down_proj`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Projection {
    /// The attention's query projection, `q_proj`.
    #[serde(rename = "q_proj")]
    Q,
    /// The attention's key projection, `k_proj`.
    #[serde(rename = "k_proj")]
    K,
    /// The attention's value projection, `v_proj`.
    #[serde(rename = "v_proj")]
    V,
    /// The attention's output projection, `o_proj`.
    #[serde(rename = "o_proj")]
    O,
    /// The MLP's gate projection, `gate_proj`.
    #[serde(rename = "gate_proj")]
    Gate,
    /// The MLP's up projection, `up_proj`.
    #[serde(rename = "up_proj")]
    Up,
    /// The MLP's down projection, `down_proj`.
    #[serde(rename = "down_proj")]
    Down,
}

impl Projection {
    /// How many there are.
    pub const COUNT: usize = 7;
    /// Every projection, in the layer's order (the order of [`Projection::index`]).
    pub const ALL: [Projection; Projection::COUNT] = [
        Projection::Q,
        Projection::K,
        Projection::V,
        Projection::O,
        Projection::Gate,
        Projection::Up,
        Projection::Down,
    ];

    /// The HF module name.
    ///
    /// ```
    /// use grpo_runner::model::lora::Projection;
    /// assert_eq!(Projection::Gate.hf_name(), "gate_proj");
    /// assert_eq!("gate_proj".parse::<Projection>(), Ok(Projection::Gate));
    /// ```
    pub fn hf_name(self) -> &'static str {
        match self {
            Projection::Q => "q_proj",
            Projection::K => "k_proj",
            Projection::V => "v_proj",
            Projection::O => "o_proj",
            Projection::Gate => "gate_proj",
            Projection::Up => "up_proj",
            Projection::Down => "down_proj",
        }
    }

    /// The block it belongs to in HF names: `self_attn` or `mlp`.
    pub fn block(self) -> &'static str {
        match self {
            Projection::Gate | Projection::Up | Projection::Down => "mlp",
            Projection::Q | Projection::K | Projection::V | Projection::O => "self_attn",
        }
    }

    /// Its place in [`Projection::ALL`] (a layer's adapters are stored in that order).
    pub fn index(self) -> usize {
        self as usize
    }

    /// `[out, in]` of the projection's weight in `config`.
    pub fn shape(self, config: &ModelConfig) -> (usize, usize) {
        let h = config.hidden_size;
        let q = config.num_attention_heads * config.head_dim;
        let kv = config.num_key_value_heads * config.head_dim;
        let i = config.intermediate_size;
        match self {
            Projection::Q => (q, h),
            Projection::K | Projection::V => (kv, h),
            Projection::O => (h, q),
            Projection::Gate | Projection::Up => (i, h),
            Projection::Down => (h, i),
        }
    }
}

impl std::fmt::Display for Projection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.hf_name())
    }
}

impl std::str::FromStr for Projection {
    type Err = String;

    /// A projection from its HF module name; the error lists the names.
    fn from_str(name: &str) -> std::result::Result<Self, String> {
        Projection::ALL
            .into_iter()
            .find(|p| p.hf_name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Projection::ALL.iter().map(|p| p.hf_name()).collect();
                format!("unknown module `{name}` (one of {})", names.join(", "))
            })
    }
}

/// Which projections get adapters, their rank and scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoraConfig {
    /// Train adapters instead of the full model.
    pub enabled: bool,
    /// The adapters' rank `r`.
    pub rank: usize,
    /// `alpha`: the adapter's output is scaled by `alpha / rank`.
    pub alpha: f64,
    /// Dropout on the adapter's input during training (only 0 is supported: a seeded dropout
    /// that keeps runs reproducible is not written yet).
    pub dropout: f64,
    /// The projections that get adapters (by HF module name in TOML: `q_proj`, `k_proj`,
    /// `v_proj`, `o_proj`, `gate_proj`, `up_proj`, `down_proj`).
    pub target_modules: Vec<Projection>,
}

impl Default for LoraConfig {
    fn default() -> Self {
        LoraConfig {
            enabled: false,
            rank: 8,
            alpha: 16.0,
            dropout: 0.0,
            target_modules: Projection::ALL.to_vec(),
        }
    }
}

impl LoraConfig {
    /// Checks rank, alpha, dropout and that some module is named (unknown names are refused
    /// when the config is read).
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, message: String| Error::Settings {
            field: format!("lora.{field}"),
            message,
        };
        if self.rank == 0 {
            return Err(bad("rank", "must be positive".into()));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(bad("alpha", format!("{} must be positive", self.alpha)));
        }
        if self.dropout != 0.0 {
            return Err(bad(
                "dropout",
                format!("{} is not supported yet (only 0)", self.dropout),
            ));
        }
        if self.target_modules.is_empty() {
            return Err(bad("target_modules", "names no module".into()));
        }
        Ok(())
    }

    /// `alpha / rank`.
    pub fn scale(&self) -> f64 {
        self.alpha / self.rank as f64
    }
}

/// How many times [`Adapter::project`] ran on this thread (tests prove with it that a model
/// without adapters never enters LoRA's code).
#[cfg(test)]
pub(super) fn adapter_projections() -> usize {
    ADAPTER_PROJECTIONS.with(std::cell::Cell::get)
}

#[cfg(test)]
thread_local! {
    static ADAPTER_PROJECTIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One projection's adapter (tensors: the `Var`s, or views of them).
#[derive(Debug, Clone)]
pub(super) struct Adapter {
    pub(super) a: Tensor,
    pub(super) b: Tensor,
    pub(super) scale: f64,
}

impl Adapter {
    pub(super) fn map<E>(
        &self,
        f: &impl Fn(&Tensor) -> std::result::Result<Tensor, E>,
    ) -> std::result::Result<Self, E> {
        Ok(Adapter {
            a: f(&self.a)?,
            b: f(&self.b)?,
            scale: self.scale,
        })
    }

    /// `x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ`: the projection `weight` (and `bias`) with this adapter on
    /// it. Only a layer that holds an adapter calls it; a plain projection is
    /// [`linear`] alone.
    pub(super) fn project(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        #[cfg(test)]
        ADAPTER_PROJECTIONS.with(|n| n.set(n.get() + 1));
        let composed = |x: &Tensor, a: &Tensor, b: &Tensor, scale: f64| {
            linear(x, weight, bias)? + linear(&(linear(x, a, None)? * scale)?, b, None)?
        };
        let training = x.track_op() || self.a.track_op() || self.b.track_op();
        if !(training && fused::applies(x) && fused::applies(weight)) {
            return composed(x, &self.a, &self.b, self.scale);
        }
        // In the update: one graph node instead of three output-sized ones (see `fused::lora`).
        let dims = x.dims().to_vec();
        let (out_features, in_features) = weight.dims2()?;
        let rows: usize = dims[..dims.len() - 1].iter().product();
        let y = fused::lora_linear(
            &x.reshape((rows, in_features))?,
            weight,
            &self.a,
            &self.b,
            self.scale,
            |x, a, b| composed(x, a, b, self.scale),
        )?;
        let mut out_dims = dims;
        if let Some(last) = out_dims.last_mut() {
            *last = out_features;
        }
        y.reshape(out_dims)
    }
}

/// The PEFT name of a tensor (`which`: `A` or `B`) of the adapter on `module` of layer
/// `layer`.
pub fn peft_name(layer: usize, module: Projection, which: char) -> String {
    format!(
        "base_model.model.model.layers.{layer}.{}.{module}.lora_{which}.weight",
        module.block()
    )
}

/// Fresh adapter tensors for every target module of every layer, under their PEFT names:
/// `A` uniform in ±1/√in from a ChaCha generator seeded by `seed`, `B` zero.
pub(super) fn fresh(
    config: &ModelConfig,
    lora: &LoraConfig,
    dtype: DType,
    device: &Device,
    seed: u64,
) -> Result<HashMap<String, Tensor>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = HashMap::new();
    for layer in 0..config.num_hidden_layers {
        for &module in &lora.target_modules {
            let (out_dim, in_dim) = module.shape(config);
            let bound = 1.0 / (in_dim as f32).sqrt();
            let a: Vec<f32> = (0..lora.rank * in_dim)
                .map(|_| rng.gen_range(-bound..bound))
                .collect();
            let a = Tensor::from_vec(a, (lora.rank, in_dim), &Device::Cpu)?;
            let b = Tensor::zeros((out_dim, lora.rank), DType::F32, &Device::Cpu)?;
            for (which, t) in [('A', a), ('B', b)] {
                out.insert(
                    peft_name(layer, module, which),
                    t.to_dtype(dtype)?.to_device(device)?,
                );
            }
        }
    }
    Ok(out)
}

/// The adapters of one model: their `Var`s under PEFT names, and the config they were
/// made with.
#[derive(Debug, Clone)]
pub(super) struct Adapters {
    pub(super) config: LoraConfig,
    pub(super) vars: BTreeMap<String, Var>,
}

impl Adapters {
    /// Checks `tensors` against `config` and `model` and makes them `Var`s.
    pub(super) fn from_tensors(
        model: &ModelConfig,
        config: &LoraConfig,
        mut tensors: HashMap<String, Tensor>,
        dtype: DType,
        device: &Device,
    ) -> Result<Adapters> {
        config.validate()?;
        let mut vars = BTreeMap::new();
        for layer in 0..model.num_hidden_layers {
            for &module in &config.target_modules {
                let (out_dim, in_dim) = module.shape(model);
                for (which, shape) in [('A', [config.rank, in_dim]), ('B', [out_dim, config.rank])]
                {
                    let name = peft_name(layer, module, which);
                    let tensor = tensors.remove(&name).ok_or_else(|| Error::MissingTensor {
                        path: "<adapter>".into(),
                        name: name.clone(),
                    })?;
                    if tensor.dims() != shape {
                        return Err(Error::TensorShape {
                            path: "<adapter>".into(),
                            name,
                            expected: shape.to_vec(),
                            found: tensor.dims().to_vec(),
                        });
                    }
                    let var = Var::from_tensor(&tensor.to_dtype(dtype)?.to_device(device)?)?;
                    vars.insert(name, var);
                }
            }
        }
        if let Some(extra) = tensors.keys().next() {
            return Err(Error::invalid(format!(
                "the adapter has a tensor its config does not name: {extra}"
            )));
        }
        Ok(Adapters {
            config: config.clone(),
            vars,
        })
    }

    /// The adapter on `module` of layer `layer`, as tensors.
    pub(super) fn adapter(&self, layer: usize, module: Projection) -> Option<Adapter> {
        let a = self.vars.get(&peft_name(layer, module, 'A'))?;
        let b = self.vars.get(&peft_name(layer, module, 'B'))?;
        Some(Adapter {
            a: a.as_tensor().clone(),
            b: b.as_tensor().clone(),
            scale: self.config.scale(),
        })
    }
}

/// PEFT's `adapter_config.json` for `config` on the checkpoint `base`.
pub fn peft_config_json(config: &LoraConfig, base: &str) -> serde_json::Value {
    serde_json::json!({
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base,
        "r": config.rank,
        "lora_alpha": config.alpha,
        "lora_dropout": config.dropout,
        "target_modules": config.target_modules,
        "bias": "none",
        "fan_in_fan_out": false,
        "inference_mode": true,
        "init_lora_weights": true,
        "use_rslora": false,
        "use_dora": false,
        "modules_to_save": null,
        "layers_to_transform": null,
        "revision": null,
    })
}

/// Reads `adapter_config.json` in `dir` into a config (PEFT's field names).
pub fn read_peft_config(dir: &Path) -> Result<LoraConfig> {
    let path = dir.join("adapter_config.json");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Config {
        path: path.clone(),
        field: "adapter_config.json".into(),
        message: e.to_string(),
    })?;
    let field = |name: &str, message: String| Error::Config {
        path: path.clone(),
        field: name.into(),
        message,
    };
    if json["peft_type"].as_str() != Some("LORA") {
        return Err(field(
            "peft_type",
            format!("{} is not LORA", json["peft_type"]),
        ));
    }
    let rank = json["r"]
        .as_u64()
        .ok_or_else(|| field("r", "missing or not a positive integer".into()))?;
    let alpha = json["lora_alpha"]
        .as_f64()
        .ok_or_else(|| field("lora_alpha", "missing or not a number".into()))?;
    let names = match &json["target_modules"] {
        serde_json::Value::Array(items) => items
            .iter()
            .map(|v| v.as_str())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| field("target_modules", "not a list of names".into()))?,
        serde_json::Value::String(one) => vec![one.as_str()],
        _ => return Err(field("target_modules", "missing".into())),
    };
    let target_modules = names
        .into_iter()
        .map(str::parse)
        .collect::<std::result::Result<Vec<Projection>, String>>()
        .map_err(|message| field("target_modules", message))?;
    for unsupported in ["use_dora", "use_rslora"] {
        if json[unsupported].as_bool() == Some(true) {
            return Err(field(unsupported, "is not supported".into()));
        }
    }
    let config = LoraConfig {
        enabled: true,
        rank: usize::try_from(rank).map_err(|_| field("r", "too large".into()))?,
        alpha,
        dropout: 0.0,
        target_modules,
    };
    config.validate()?;
    Ok(config)
}

/// LoRA on a [`Model`]: adding adapters, folding them in, saving and loading them.
impl Model {
    /// The model with fresh LoRA adapters (see [`self`](crate::model::lora)): the base weights frozen, the
    /// adapters' `A` drawn with `seed` and `B` zero, so its outputs start equal to this
    /// model's.
    pub fn with_lora(&self, config: &LoraConfig, seed: u64) -> Result<Model> {
        config.validate()?;
        let tensors = fresh(&self.config, config, self.dtype, &self.device, seed)?;
        self.with_adapters(config, tensors)
    }

    /// The model with the given adapter tensors (PEFT names) on its frozen base weights.
    pub fn with_adapters(
        &self,
        config: &LoraConfig,
        tensors: HashMap<String, Tensor>,
    ) -> Result<Model> {
        if self.adapters.is_some() {
            return Err(Error::invalid("the model already has adapters"));
        }
        let adapters =
            Adapters::from_tensors(&self.config, config, tensors, self.dtype, &self.device)?;
        let mut weights = self.weights.detached();
        for (index, layer) in weights.layers.iter_mut().enumerate() {
            for module in Projection::ALL {
                layer.adapters[module.index()] = adapters.adapter(index, module);
            }
        }
        Ok(Model {
            weights,
            adapters: Some(adapters),
            ..self.clone()
        })
    }

    /// The LoRA config, when the model has adapters.
    pub fn lora(&self) -> Option<&LoraConfig> {
        self.adapters.as_ref().map(|a| &a.config)
    }

    /// The adapters folded into the weights, `W + s·B·A`: a plain model (fresh `Var`s, no
    /// adapters) whose outputs equal this one's. A model without adapters is copied.
    pub fn merged(&self) -> Result<Model> {
        let mut tensors = self
            .base_vars()
            .into_iter()
            .map(|(name, var)| Ok((name, var.as_tensor().copy()?)))
            .collect::<Result<HashMap<_, _>>>()?;
        if let Some(adapters) = &self.adapters {
            for layer in 0..self.config.num_hidden_layers {
                for &module in &adapters.config.target_modules {
                    let Some(ad) = adapters.adapter(layer, module) else {
                        continue;
                    };
                    let block = module.block();
                    let name = format!("model.layers.{layer}.{block}.{module}.weight");
                    let base = tensors.remove(&name).ok_or_else(|| Error::MissingTensor {
                        path: "<memory>".into(),
                        name: name.clone(),
                    })?;
                    let delta = (ad.b.matmul(&ad.a)? * ad.scale)?;
                    tensors.insert(name, (base + delta)?);
                }
            }
        }
        Self::from_tensors(&self.config, tensors, self.dtype, &self.device)?
            .with_compute_dtype(self.compute)
    }

    /// Writes the adapters in PEFT's layout into `dir`: `adapter_config.json` (naming
    /// `base` as the checkpoint they sit on) and `adapter_model.safetensors`, each written
    /// to a temporary file and renamed.
    pub fn save_adapter(&self, dir: &std::path::Path, base: &str) -> Result<()> {
        let adapters = self
            .adapters
            .as_ref()
            .ok_or_else(|| Error::invalid("the model has no adapters to save"))?;
        let io = |path: std::path::PathBuf| move |source| Error::Io { path, source };
        std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
        let tensors: HashMap<String, Tensor> = adapters
            .vars
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.as_tensor().to_dtype(DType::F32)?)))
            .collect::<Result<_>>()?;
        let weights = dir.join("adapter_model.safetensors");
        let tmp = dir.join(".adapter_model.safetensors.partial");
        candle_core::safetensors::save(&tensors, &tmp)?;
        std::fs::rename(&tmp, &weights).map_err(io(weights.clone()))?;
        let config = dir.join("adapter_config.json");
        let tmp = dir.join(".adapter_config.json.partial");
        let text = serde_json::to_string_pretty(&peft_config_json(&adapters.config, base))
            .map_err(|e| Error::invalid(e.to_string()))?;
        std::fs::write(&tmp, text).map_err(io(tmp.clone()))?;
        std::fs::rename(&tmp, &config).map_err(io(config.clone()))?;
        Ok(())
    }

    /// This model with the PEFT adapter saved in `dir` on it.
    pub fn load_adapter(&self, dir: &std::path::Path) -> Result<Model> {
        let config = read_peft_config(dir)?;
        let path = dir.join("adapter_model.safetensors");
        let tensors = candle_core::safetensors::load(&path, &self.device)?;
        self.with_adapters(&config, tensors)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Model;
    use super::*;

    fn loss(model: &Model) -> Tensor {
        let ids = Tensor::new(&[[1u32, 5, 2, 7], [3, 3, 9, 1]], &Device::Cpu).unwrap();
        let logits = model.forward(&ids, &[0, 0], None).unwrap();
        // Any smooth scalar of the logits.
        (logits.sqr().unwrap().sum_all().unwrap() * 1e-2).unwrap()
    }

    fn scalar(t: &Tensor) -> f64 {
        t.to_dtype(DType::F64).unwrap().to_scalar::<f64>().unwrap()
    }

    /// A model with adapters whose `B` is not zero (as after some training).
    fn trained(base: &Model, config: &LoraConfig) -> Model {
        let mut tensors = fresh(base.config(), config, base.dtype(), &Device::Cpu, 3).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for (name, t) in tensors.iter_mut() {
            if name.contains("lora_B") {
                let n = t.elem_count();
                let v: Vec<f64> = (0..n).map(|_| rng.gen_range(-0.05..0.05)).collect();
                *t = Tensor::from_vec(v, t.dims(), &Device::Cpu)
                    .unwrap()
                    .to_dtype(base.dtype())
                    .unwrap();
            }
        }
        base.with_adapters(config, tensors).unwrap()
    }

    fn on() -> LoraConfig {
        LoraConfig {
            enabled: true,
            rank: 4,
            alpha: 8.0,
            ..Default::default()
        }
    }

    #[test]
    fn fresh_adapters_leave_the_outputs_and_train_alone() {
        let base = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 1).unwrap();
        let model = base.with_lora(&on(), 0).unwrap();
        assert_eq!(scalar(&loss(&base)), scalar(&loss(&model)));
        // Only the adapters are trainable: 2 layers × 7 modules × (A, B).
        let vars = model.named_vars();
        assert_eq!(vars.len(), 2 * 7 * 2);
        assert!(
            vars.iter()
                .all(|(n, _)| n.starts_with("base_model.model.model.layers."))
        );
        assert_eq!(
            vars[0].0,
            "base_model.model.model.layers.0.mlp.down_proj.lora_A.weight"
        );
        let grads = loss(&model).backward().unwrap();
        for (name, var) in model.base_vars() {
            assert!(
                grads.get(var.as_tensor()).is_none(),
                "{name} got a gradient"
            );
        }
        // Nor is any gradient of a frozen weight computed (vendored candle-core's matmul
        // backward skips a side that tracks none): no stored gradient has a weight's shape
        // (the activations' have 8 rows, the adapters' the rank 4), where upstream candle
        // stores one per projection and one for the tied embedding.
        let weight_shaped: Vec<Vec<usize>> = grads
            .get_ids()
            .filter_map(|id| grads.get_id(*id))
            .map(|g| g.dims().to_vec())
            .filter(|d| d.len() == 2 && d[0] >= 16 && d[1] >= 16)
            .collect();
        assert!(
            weight_shaped.is_empty(),
            "gradients of frozen weights: {weight_shaped:?}"
        );
        for (name, var) in &vars {
            assert!(
                grads.get(var.as_tensor()).is_some(),
                "{name} has no gradient"
            );
        }
        // The zero B gives A no gradient yet; B's is not zero.
        let b = &vars
            .iter()
            .find(|(n, _)| n.contains("q_proj.lora_B"))
            .unwrap()
            .1;
        let gb = grads
            .get(b.as_tensor())
            .unwrap()
            .abs()
            .unwrap()
            .sum_all()
            .unwrap();
        assert!(scalar(&gb) > 0.0);
    }

    #[test]
    fn adapter_gradients_match_finite_differences() {
        let base = Model::random(&ModelConfig::tiny(16), DType::F64, &Device::Cpu, 2).unwrap();
        let model = trained(&base, &on());
        let grads = loss(&model).backward().unwrap();
        for name in [
            "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
            "base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight",
            "base_model.model.model.layers.1.mlp.down_proj.lora_A.weight",
            "base_model.model.model.layers.0.mlp.gate_proj.lora_B.weight",
        ] {
            let var = &model.adapters.as_ref().unwrap().vars[name];
            let analytic = grads.get(var.as_tensor()).unwrap().flatten_all().unwrap();
            let original = var
                .as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f64>()
                .unwrap();
            for index in [0usize, original.len() / 2, original.len() - 1] {
                let h = 1e-6;
                let at = |delta: f64| {
                    let mut v = original.clone();
                    v[index] += delta;
                    var.set(&Tensor::from_vec(v, var.dims(), &Device::Cpu).unwrap())
                        .unwrap();
                    scalar(&loss(&model))
                };
                let numeric = (at(h) - at(-h)) / (2.0 * h);
                at(0.0);
                let got = analytic.get(index).unwrap().to_scalar::<f64>().unwrap();
                assert!(
                    (got - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
                    "{name}[{index}]: autograd {got}, finite differences {numeric}"
                );
            }
        }
    }

    #[test]
    fn merged_weights_give_the_adapters_outputs() {
        let base = Model::random(&ModelConfig::tiny(16), DType::F64, &Device::Cpu, 4).unwrap();
        let config = LoraConfig {
            target_modules: vec![Projection::Q, Projection::V, Projection::Down],
            ..on()
        };
        let model = trained(&base, &config);
        let merged = model.merged().unwrap();
        assert!(merged.lora().is_none());
        let (a, b) = (scalar(&loss(&model)), scalar(&loss(&merged)));
        assert!((a - b).abs() < 1e-9 * a.abs().max(1.0), "{a} vs {b}");
        assert_ne!(a, scalar(&loss(&base)), "the adapters changed the outputs");
    }

    #[test]
    fn adapters_save_in_peft_layout_and_load_back() {
        let base = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 5).unwrap();
        let model = trained(&base, &on());
        let dir = tempfile::tempdir().unwrap();
        model.save_adapter(dir.path(), "tiny-base").unwrap();
        let config: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("adapter_config.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(config["peft_type"], "LORA");
        assert_eq!(config["r"], 4);
        assert_eq!(config["lora_alpha"], 8.0);
        assert_eq!(config["base_model_name_or_path"], "tiny-base");
        let saved = candle_core::safetensors::load(
            dir.path().join("adapter_model.safetensors"),
            &Device::Cpu,
        )
        .unwrap();
        assert_eq!(saved.len(), 28);
        assert!(
            saved.contains_key("base_model.model.model.layers.1.self_attn.o_proj.lora_B.weight")
        );
        assert!(
            saved.keys().all(|k| !k.contains(".default.")),
            "no adapter name inside"
        );
        let loaded = base.load_adapter(dir.path()).unwrap();
        assert_eq!(scalar(&loss(&loaded)), scalar(&loss(&model)));
        // A config PEFT writes that we cannot honour is refused, naming the field.
        let mut bad = config.clone();
        bad["use_dora"] = true.into();
        std::fs::write(dir.path().join("adapter_config.json"), bad.to_string()).unwrap();
        let err = base.load_adapter(dir.path()).unwrap_err().to_string();
        assert!(err.contains("use_dora"), "{err}");
    }

    #[test]
    fn a_model_without_adapters_never_enters_lora_code() {
        let base = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 6).unwrap();
        let before = adapter_projections();
        loss(&base).backward().unwrap();
        assert_eq!(
            adapter_projections(),
            before,
            "LoRA code ran without adapters"
        );
        // With adapters on q and v only: two per layer, in each of the two layers.
        let config = LoraConfig {
            target_modules: vec![Projection::Q, Projection::V],
            ..on()
        };
        let model = base.with_lora(&config, 0).unwrap();
        loss(&model).backward().unwrap();
        assert_eq!(adapter_projections() - before, 2 * 2);
    }

    #[test]
    fn projections_are_read_by_their_hf_names() {
        let config: LoraConfig =
            toml::from_str("target_modules = [\"q_proj\", \"down_proj\"]").unwrap();
        assert_eq!(config.target_modules, [Projection::Q, Projection::Down]);
        let err = toml::from_str::<LoraConfig>("target_modules = [\"qkv\"]")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("qkv") && err.contains("target_modules"),
            "{err}"
        );
        for p in Projection::ALL {
            assert_eq!(p.hf_name().parse::<Projection>(), Ok(p));
            assert_eq!(Projection::ALL[p.index()], p);
        }
        assert!("qkv".parse::<Projection>().unwrap_err().contains("q_proj"));
    }

    #[test]
    fn configs_are_checked() {
        assert!(on().validate().is_ok());
        for bad in [
            LoraConfig { rank: 0, ..on() },
            LoraConfig { alpha: 0.0, ..on() },
            LoraConfig {
                dropout: 0.1,
                ..on()
            },
            LoraConfig {
                target_modules: vec![],
                ..on()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}

//! AdamW with gradient accumulation and global grad-norm clipping, fused on the CPU.
//!
//! candle_nn's `AdamW` builds about thirteen full-size temporaries per parameter and step. Here,
//! on the CPU, the update of one parameter is a single pass over its data: the clipped gradient,
//! both moments and the decayed weight are read and written element by element in place. On
//! other devices the same arithmetic runs as tensor ops.
//!
//! The update is PyTorch's / candle_nn's decoupled AdamW, with bias correction:
//!
//! ```text
//! g  ← g · c                        c = min(1, max_norm / ‖g‖₂) over all parameters
//! m  ← β₁ m + (1 − β₁) g
//! v  ← β₂ v + (1 − β₂) g²
//! θ  ← θ (1 − lr λ) − lr · (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + ε)
//! ```
//!
//! Gradients of several micro-batches are summed with [`AdamW::accumulate`] before one
//! [`AdamW::step`]; the losses are expected to be normalised over the whole batch already (see
//! grpo-core's reductions), so the sum is the full-batch gradient.

use std::cell::RefCell;

use candle_core::backprop::GradStore;
use candle_core::{CpuStorage, DType, Device, InplaceOp2, Layout, Tensor, Var};
use serde::{Deserialize, Serialize};

/// AdamW hyper-parameters (the learning rate comes from the schedule at every step).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdamWConfig {
    /// Exponential decay of the first moment.
    pub beta1: f64,
    /// Exponential decay of the second moment.
    pub beta2: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// Decoupled weight decay λ (applied as `θ ← θ (1 − lr λ)`).
    pub weight_decay: f64,
    /// Clip the global L2 norm of the gradient to this value; `None` disables clipping.
    pub max_grad_norm: Option<f64>,
}

impl Default for AdamWConfig {
    fn default() -> Self {
        AdamWConfig {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
            max_grad_norm: Some(1.0),
        }
    }
}

/// What one optimiser step did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepStats {
    /// Global L2 norm of the accumulated gradient, before clipping.
    pub grad_norm: f64,
    /// The factor the gradient was multiplied by (1 when not clipped).
    pub clip_scale: f64,
    /// The learning rate used.
    pub lr: f64,
}

/// Serialisable optimiser state, for checkpoints: step count and both moments per parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct AdamWState {
    /// Number of steps taken.
    pub step: u64,
    /// `(name, first moment, second moment)` per parameter, in optimiser order.
    pub moments: Vec<(String, Vec<f32>, Vec<f32>)>,
}

#[derive(Debug)]
struct Param {
    name: String,
    var: Var,
    m: Vec<f32>,
    v: Vec<f32>,
    grad: Option<Tensor>,
}

/// AdamW over a fixed list of named parameters.
#[derive(Debug)]
pub struct AdamW {
    params: Vec<Param>,
    step: u64,
    config: AdamWConfig,
}

impl AdamW {
    /// An optimiser over `vars` (name, variable); non-float variables are skipped.
    pub fn new(vars: Vec<(String, Var)>, config: AdamWConfig) -> candle_core::Result<Self> {
        let params = vars
            .into_iter()
            .filter(|(_, var)| var.dtype() == DType::F32)
            .map(|(name, var)| {
                let n = var.elem_count();
                Param {
                    name,
                    var,
                    m: vec![0.0; n],
                    v: vec![0.0; n],
                    grad: None,
                }
            })
            .collect();
        Ok(AdamW {
            params,
            step: 0,
            config,
        })
    }

    /// The hyper-parameters.
    pub fn config(&self) -> &AdamWConfig {
        &self.config
    }

    /// Number of steps taken so far.
    pub fn steps_taken(&self) -> u64 {
        self.step
    }

    /// Number of parameters (tensors) under optimisation.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether no parameter is under optimisation.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Adds the gradients of one micro-batch to the running sum.
    pub fn accumulate(&mut self, grads: &GradStore) -> candle_core::Result<()> {
        for p in &mut self.params {
            let Some(g) = grads.get(p.var.as_tensor()) else {
                continue;
            };
            let g = g.detach();
            p.grad = Some(match p.grad.take() {
                None => g,
                Some(acc) => (acc + g)?,
            });
        }
        Ok(())
    }

    /// Drops the accumulated gradients without stepping.
    pub fn zero_grad(&mut self) {
        for p in &mut self.params {
            p.grad = None;
        }
    }

    /// Global L2 norm of the accumulated gradient.
    pub fn grad_norm(&self) -> candle_core::Result<f64> {
        let mut sq = 0f64;
        for p in &self.params {
            if let Some(g) = &p.grad {
                sq += sum_squares(g)?;
            }
        }
        Ok(sq.sqrt())
    }

    /// Applies one AdamW update with learning rate `lr` from the accumulated gradients, then
    /// clears them. Parameters that received no gradient are left untouched (their moments too).
    pub fn step(&mut self, lr: f64) -> candle_core::Result<StepStats> {
        let grad_norm = self.grad_norm()?;
        let clip_scale = match self.config.max_grad_norm {
            Some(max) if grad_norm > max && grad_norm.is_finite() => max / (grad_norm + 1e-6),
            _ => 1.0,
        };
        self.step += 1;
        let c = self.config;
        let t = self.step as i32;
        let hyper = Hyper {
            lr,
            beta1: c.beta1,
            beta2: c.beta2,
            eps: c.eps,
            decay: 1.0 - lr * c.weight_decay,
            scale_m: 1.0 / (1.0 - c.beta1.powi(t)),
            scale_v: 1.0 / (1.0 - c.beta2.powi(t)),
            clip: clip_scale,
        };
        for p in &mut self.params {
            let Some(g) = p.grad.take() else { continue };
            let theta = p.var.as_tensor();
            if matches!(theta.device(), Device::Cpu) && theta.is_contiguous() {
                let g = g.contiguous()?;
                let op = FusedAdamW {
                    hyper,
                    moments: RefCell::new((&mut p.m, &mut p.v)),
                };
                theta.inplace_op2(&g, &op)?;
            } else {
                tensor_step(&p.var, &g, &mut p.m, &mut p.v, &hyper)?;
            }
        }
        Ok(StepStats {
            grad_norm,
            clip_scale,
            lr,
        })
    }

    /// The state to save in a checkpoint.
    pub fn state(&self) -> AdamWState {
        AdamWState {
            step: self.step,
            moments: self
                .params
                .iter()
                .map(|p| (p.name.clone(), p.m.clone(), p.v.clone()))
                .collect(),
        }
    }

    /// Restores a state saved by [`AdamW::state`]; parameter names and sizes must match.
    pub fn load_state(&mut self, state: AdamWState) -> candle_core::Result<()> {
        if state.moments.len() != self.params.len() {
            candle_core::bail!(
                "optimiser state has {} parameters, the model has {}",
                state.moments.len(),
                self.params.len()
            );
        }
        for (p, (name, m, v)) in self.params.iter().zip(&state.moments) {
            if &p.name != name || m.len() != p.m.len() || v.len() != p.v.len() {
                candle_core::bail!(
                    "optimiser state for `{name}` ({} values) does not fit parameter `{}` ({} values)",
                    m.len(),
                    p.name,
                    p.m.len()
                );
            }
        }
        for (p, (_, m, v)) in self.params.iter_mut().zip(state.moments) {
            p.m = m;
            p.v = v;
        }
        self.step = state.step;
        Ok(())
    }
}

fn sum_squares(g: &Tensor) -> candle_core::Result<f64> {
    if matches!(g.device(), Device::Cpu) && g.is_contiguous() && g.dtype() == DType::F32 {
        let (storage, layout) = g.storage_and_layout();
        if let (candle_core::Storage::Cpu(CpuStorage::F32(data)), Some((a, b))) =
            (&*storage, layout.contiguous_offsets())
        {
            return Ok(data[a..b]
                .iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum());
        }
    }
    g.to_dtype(DType::F64)?.sqr()?.sum_all()?.to_scalar::<f64>()
}

#[derive(Debug, Clone, Copy)]
struct Hyper {
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    decay: f64,
    scale_m: f64,
    scale_v: f64,
    clip: f64,
}

/// The in-place CPU kernel: θ is the destination, the gradient the source, the moments live
/// on the host beside it.
struct FusedAdamW<'a> {
    hyper: Hyper,
    moments: RefCell<(&'a mut Vec<f32>, &'a mut Vec<f32>)>,
}

impl InplaceOp2 for FusedAdamW<'_> {
    fn name(&self) -> &'static str {
        "fused-adamw"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<()> {
        let (CpuStorage::F32(theta), CpuStorage::F32(grad)) = (s1, s2) else {
            candle_core::bail!("fused-adamw: only f32 parameters are supported");
        };
        let (Some((a1, b1)), Some((a2, b2))) = (l1.contiguous_offsets(), l2.contiguous_offsets())
        else {
            candle_core::bail!("fused-adamw: parameter and gradient must be contiguous");
        };
        let theta = &mut theta[a1..b1];
        let grad = &grad[a2..b2];
        let mut moments = self.moments.borrow_mut();
        let (m, v) = &mut *moments;
        if theta.len() != grad.len() || theta.len() != m.len() || theta.len() != v.len() {
            candle_core::bail!("fused-adamw: parameter, gradient and moments differ in size");
        }
        let h = self.hyper;
        let (b1, b2) = (h.beta1 as f32, h.beta2 as f32);
        let (ob1, ob2) = ((1.0 - h.beta1) as f32, (1.0 - h.beta2) as f32);
        let (sm, sv) = (h.scale_m as f32, h.scale_v as f32);
        let (lr, eps, decay, clip) = (h.lr as f32, h.eps as f32, h.decay as f32, h.clip as f32);
        for (((t, &g), m), v) in theta
            .iter_mut()
            .zip(grad)
            .zip(m.iter_mut())
            .zip(v.iter_mut())
        {
            let g = g * clip;
            let nm = b1 * *m + ob1 * g;
            let nv = b2 * *v + ob2 * g * g;
            *m = nm;
            *v = nv;
            *t = *t * decay - lr * (nm * sm) / ((nv * sv).sqrt() + eps);
        }
        Ok(())
    }
}

/// The same update as [`FusedAdamW`] with tensor ops, for devices other than the CPU.
fn tensor_step(
    var: &Var,
    g: &Tensor,
    m: &mut Vec<f32>,
    v: &mut Vec<f32>,
    h: &Hyper,
) -> candle_core::Result<()> {
    let theta = var.as_tensor();
    let dev = theta.device();
    let shape = theta.shape();
    let g = (g * h.clip)?;
    let mt = Tensor::from_slice(m, shape, dev)?;
    let vt = Tensor::from_slice(v, shape, dev)?;
    let nm = ((mt * h.beta1)? + (&g * (1.0 - h.beta1))?)?;
    let nv = ((vt * h.beta2)? + (g.sqr()? * (1.0 - h.beta2))?)?;
    let update = ((&nm * h.scale_m)? / ((&nv * h.scale_v)?.sqrt()? + h.eps)?)?;
    let next = ((theta * h.decay)? - (update * h.lr)?)?;
    var.set(&next)?;
    *m = nm.flatten_all()?.to_vec1()?;
    *v = nv.flatten_all()?.to_vec1()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use candle_nn::Optimizer;

    use super::*;

    fn var(data: &[f32], shape: &[usize]) -> Var {
        Var::from_tensor(&Tensor::from_slice(data, shape, &Device::Cpu).unwrap()).unwrap()
    }

    /// A small quadratic-plus-cubic loss so gradients change from step to step.
    fn loss(a: &Var, b: &Var) -> Tensor {
        let x = Tensor::new(&[[1.0f32, -2.0], [0.5, 3.0]], &Device::Cpu).unwrap();
        let y = a.as_tensor().matmul(&x).unwrap();
        let l1 = y.sqr().unwrap().sum_all().unwrap();
        let l2 = b.as_tensor().powf(3.0).unwrap().sum_all().unwrap();
        (l1 + l2).unwrap()
    }

    /// Ten steps of ours and of candle_nn's AdamW from the same start give the same weights.
    #[test]
    fn matches_candle_nn_adamw() {
        for wd in [0.0, 0.01, 0.3] {
            let init_a = [0.3f32, -0.7, 1.1, 0.05];
            let init_b = [0.9f32, -0.4, 0.2];
            let (a1, b1) = (var(&init_a, &[2, 2]), var(&init_b, &[3]));
            let (a2, b2) = (var(&init_a, &[2, 2]), var(&init_b, &[3]));
            let params = candle_nn::ParamsAdamW {
                lr: 0.05,
                beta1: 0.8,
                beta2: 0.95,
                eps: 1e-6,
                weight_decay: wd,
            };
            let mut reference =
                candle_nn::AdamW::new(vec![a1.clone(), b1.clone()], params.clone()).unwrap();
            let config = AdamWConfig {
                beta1: 0.8,
                beta2: 0.95,
                eps: 1e-6,
                weight_decay: wd,
                max_grad_norm: None,
            };
            let mut ours = AdamW::new(
                vec![("a".into(), a2.clone()), ("b".into(), b2.clone())],
                config,
            )
            .unwrap();
            for _ in 0..10 {
                reference.backward_step(&loss(&a1, &b1)).unwrap();
                ours.accumulate(&loss(&a2, &b2).backward().unwrap())
                    .unwrap();
                ours.step(0.05).unwrap();
            }
            for (r, o) in [(&a1, &a2), (&b1, &b2)] {
                let r: Vec<f32> = r.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
                let o: Vec<f32> = o.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
                for (x, y) in r.iter().zip(&o) {
                    assert!((x - y).abs() < 1e-5, "wd {wd}: {r:?} vs {o:?}");
                }
            }
        }
    }

    /// First step from zero moments: m̂ = g, v̂ = g², so θ moves by lr·g/(|g|+ε) ≈ lr·sign(g).
    /// θ = 1, g = 2θ = 2 (loss θ²), lr 0.1 → θ = 1 − 0.1·2/(2 + 1e-8) = 0.9.
    #[test]
    fn first_step_moves_by_lr_times_sign() {
        let a = var(&[1.0, -1.0], &[2]);
        let mut opt = AdamW::new(
            vec![("a".into(), a.clone())],
            AdamWConfig {
                max_grad_norm: None,
                ..Default::default()
            },
        )
        .unwrap();
        opt.accumulate(
            &a.as_tensor()
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap(),
        )
        .unwrap();
        opt.step(0.1).unwrap();
        let got: Vec<f32> = a.as_tensor().to_vec1().unwrap();
        assert!(
            (got[0] - 0.9).abs() < 1e-6 && (got[1] + 0.9).abs() < 1e-6,
            "{got:?}"
        );
    }

    /// Two accumulated micro-batches equal one step on the summed loss.
    #[test]
    fn accumulation_equals_summed_loss() {
        let init = [0.3f32, -0.7, 1.1, 0.05];
        let (a1, b1) = (var(&init, &[2, 2]), var(&[0.5, 0.1, -0.2], &[3]));
        let (a2, b2) = (var(&init, &[2, 2]), var(&[0.5, 0.1, -0.2], &[3]));
        let cfg = AdamWConfig::default();
        let mut one = AdamW::new(
            vec![("a".into(), a1.clone()), ("b".into(), b1.clone())],
            cfg,
        )
        .unwrap();
        let mut two = AdamW::new(
            vec![("a".into(), a2.clone()), ("b".into(), b2.clone())],
            cfg,
        )
        .unwrap();
        let x = Tensor::new(&[[1.0f32, 2.0], [3.0, -1.0]], &Device::Cpu).unwrap();
        let half = |a: &Var| {
            a.as_tensor()
                .matmul(&x)
                .unwrap()
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
        };
        let whole = (half(&a1) + loss(&a1, &b1)).unwrap();
        one.accumulate(&whole.backward().unwrap()).unwrap();
        let s1 = one.step(0.01).unwrap();
        two.accumulate(&half(&a2).backward().unwrap()).unwrap();
        two.accumulate(&loss(&a2, &b2).backward().unwrap()).unwrap();
        let s2 = two.step(0.01).unwrap();
        assert!((s1.grad_norm - s2.grad_norm).abs() < 1e-4 * s1.grad_norm);
        let r: Vec<f32> = a1.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
        let o: Vec<f32> = a2.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
        for (x, y) in r.iter().zip(&o) {
            assert!((x - y).abs() < 1e-6);
        }
    }

    /// Gradient (3, 4) has norm 5; clipping to 1 scales it by 1/5. With β₁ = β₂ = 0 and ε = 0
    /// the AdamW direction is sign(g) whatever the scale, so check the reported norm and scale,
    /// and that the moments hold the clipped gradient: m = (1 − β₁)·g/5 = (0.6, 0.8).
    #[test]
    fn clipping_scales_the_gradient() {
        let a = var(&[1.5, 2.0], &[2]);
        let cfg = AdamWConfig {
            beta1: 0.0,
            beta2: 0.0,
            eps: 0.0,
            weight_decay: 0.0,
            max_grad_norm: Some(1.0),
        };
        let mut opt = AdamW::new(vec![("a".into(), a.clone())], cfg).unwrap();
        // loss = θ² → g = 2θ = (3, 4).
        opt.accumulate(
            &a.as_tensor()
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap(),
        )
        .unwrap();
        let stats = opt.step(0.1).unwrap();
        assert!((stats.grad_norm - 5.0).abs() < 1e-9);
        assert!((stats.clip_scale - 0.2).abs() < 1e-6);
        let state = opt.state();
        assert!((state.moments[0].1[0] - 0.6).abs() < 1e-5);
        assert!((state.moments[0].1[1] - 0.8).abs() < 1e-5);
        // No clip when under the limit.
        let b = var(&[0.1, 0.2], &[2]);
        let mut opt = AdamW::new(vec![("b".into(), b.clone())], cfg).unwrap();
        opt.accumulate(
            &b.as_tensor()
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(opt.step(0.1).unwrap().clip_scale, 1.0);
    }

    /// Saving and restoring the state continues exactly as an uninterrupted optimiser would.
    #[test]
    fn state_round_trip_continues_identically() {
        let init = [0.3f32, -0.7, 1.1, 0.05];
        let (a1, b1) = (var(&init, &[2, 2]), var(&[0.5, 0.1, -0.2], &[3]));
        let cfg = AdamWConfig::default();
        let mut first = AdamW::new(
            vec![("a".into(), a1.clone()), ("b".into(), b1.clone())],
            cfg,
        )
        .unwrap();
        for _ in 0..3 {
            first
                .accumulate(&loss(&a1, &b1).backward().unwrap())
                .unwrap();
            first.step(0.02).unwrap();
        }
        let a2 = var(
            &a1.as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap(),
            &[2, 2],
        );
        let b2 = var(&b1.as_tensor().to_vec1::<f32>().unwrap(), &[3]);
        let mut second = AdamW::new(
            vec![("a".into(), a2.clone()), ("b".into(), b2.clone())],
            cfg,
        )
        .unwrap();
        second.load_state(first.state()).unwrap();
        for _ in 0..3 {
            first
                .accumulate(&loss(&a1, &b1).backward().unwrap())
                .unwrap();
            first.step(0.02).unwrap();
            second
                .accumulate(&loss(&a2, &b2).backward().unwrap())
                .unwrap();
            second.step(0.02).unwrap();
        }
        assert_eq!(
            a1.as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap(),
            a2.as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        );
        // A state for another model is refused.
        let c = var(&[1.0], &[1]);
        let mut other = AdamW::new(vec![("c".into(), c)], cfg).unwrap();
        assert!(other.load_state(first.state()).is_err());
    }

    /// A parameter without a gradient keeps its value and moments.
    #[test]
    fn parameter_without_gradient_is_untouched() {
        let a = var(&[1.0, 2.0], &[2]);
        let frozen = var(&[5.0], &[1]);
        let mut opt = AdamW::new(
            vec![("a".into(), a.clone()), ("frozen".into(), frozen.clone())],
            AdamWConfig {
                weight_decay: 0.5,
                ..Default::default()
            },
        )
        .unwrap();
        opt.accumulate(&a.as_tensor().sum_all().unwrap().backward().unwrap())
            .unwrap();
        opt.step(0.1).unwrap();
        assert_eq!(frozen.as_tensor().to_vec1::<f32>().unwrap(), vec![5.0]);
        assert!(opt.state().moments[1].1.iter().all(|&x| x == 0.0));
    }
}

//! grpo-core throughput: advantages and the policy loss on a realistic batch, and the
//! logits → log-probs path.
//!
//! Run with `cargo bench -p grpo-benches --bench core`.
//!
//! - `advantages/64x16`: group advantages of 64 prompts × 16 completions.
//! - `loss/64x16x1024/*`: the GRPO loss (token ratios, k3 KL, sequence mean) from log-probs of
//!   1,024 completions × 1,024 tokens, forward only and forward + backward, and the same with
//!   GSPO sequence ratios.
//! - `logprobs/8x256x32000/*`: token log-probs from logits of a 32k vocabulary, forward only and
//!   forward + backward, through grpo-core (the fused kernel on the CPU) and through candle's
//!   ops composed (`composed_*`, the baseline).

use candle_core::{D, DType, Device, Tensor, Var};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use grpo_core::{
    AdvantageConfig, LossConfig, LossInputs, Normalizer, RatioLevel, group_advantages, policy_loss,
    token_logprobs,
};
use rand::{Rng, SeedableRng, rngs::StdRng};

const PROMPTS: usize = 64;
const GROUP: usize = 16;
const TOKENS: usize = 1024;

fn uniform(rng: &mut StdRng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.gen_range(lo..hi)).collect()
}

fn bench_advantages(c: &mut Criterion) {
    let mut rng = StdRng::seed_from_u64(1);
    let rewards: Vec<f32> = (0..PROMPTS * GROUP)
        .map(|_| f32::from(u8::from(rng.gen_bool(0.3))))
        .collect();
    let rewards = Tensor::from_vec(rewards, (PROMPTS, GROUP), &Device::Cpu).unwrap();
    let config = AdvantageConfig::default();
    c.bench_function("advantages/64x16", |b| {
        b.iter(|| group_advantages(&rewards, &config).unwrap())
    });
}

fn bench_loss(c: &mut Criterion) {
    let cpu = Device::Cpu;
    let batch = PROMPTS * GROUP;
    let mut rng = StdRng::seed_from_u64(2);
    let old = uniform(&mut rng, batch * TOKENS, -4.0, -0.01);
    let logp: Vec<f32> = old.iter().map(|x| x + rng.gen_range(-0.3..0.3)).collect();
    let reference: Vec<f32> = old.iter().map(|x| x + rng.gen_range(-0.3..0.3)).collect();
    let old = Tensor::from_vec(old, (batch, TOKENS), &cpu).unwrap();
    let logp = Var::from_vec(logp, (batch, TOKENS), &cpu).unwrap();
    let reference = Tensor::from_vec(reference, (batch, TOKENS), &cpu).unwrap();
    let advantages = Tensor::from_vec(uniform(&mut rng, batch, -2.0, 2.0), batch, &cpu).unwrap();
    // Completion lengths uniform in [64, 1024].
    let mask: Vec<f32> = (0..batch)
        .flat_map(|_| {
            let len = rng.gen_range(64..=TOKENS);
            (0..TOKENS).map(move |t| if t < len { 1.0 } else { 0.0 })
        })
        .collect();
    let mask = Tensor::from_vec(mask, (batch, TOKENS), &cpu).unwrap();
    let normalizer = Normalizer::from_mask(&mask).unwrap();
    let inputs = LossInputs {
        logprobs: logp.as_tensor(),
        old_logprobs: &old,
        ref_logprobs: Some(&reference),
        advantages: &advantages,
        mask: &mask,
        logits: None,
        group_size: Some(GROUP),
    };
    let grpo = LossConfig::default();
    let gspo = LossConfig {
        ratio_level: RatioLevel::Sequence,
        ..LossConfig::default()
    };
    let mut group = c.benchmark_group("loss/64x16x1024");
    group.sample_size(10);
    group.throughput(Throughput::Elements((batch * TOKENS) as u64));
    group.bench_function("grpo_forward", |b| {
        b.iter(|| policy_loss(&inputs, &grpo, &normalizer).unwrap())
    });
    group.bench_function("grpo_forward_backward", |b| {
        b.iter(|| {
            let (loss, _) = policy_loss(&inputs, &grpo, &normalizer).unwrap();
            loss.backward().unwrap()
        })
    });
    group.bench_function("gspo_forward_backward", |b| {
        b.iter(|| {
            let (loss, _) = policy_loss(&inputs, &gspo, &normalizer).unwrap();
            loss.backward().unwrap()
        })
    });
    group.finish();
}

fn bench_logprobs(c: &mut Criterion) {
    let cpu = Device::Cpu;
    let (batch, seq, vocab) = (8, 256, 32_000);
    let mut rng = StdRng::seed_from_u64(3);
    let logits = Var::from_vec(
        uniform(&mut rng, batch * seq * vocab, -8.0, 8.0),
        (batch, seq, vocab),
        &cpu,
    )
    .unwrap();
    let ids: Vec<u32> = (0..batch * seq)
        .map(|_| rng.gen_range(0..vocab as u32))
        .collect();
    let ids = Tensor::from_vec(ids, (batch, seq), &cpu).unwrap();
    let weights = Tensor::ones((batch, seq), DType::F32, &cpu).unwrap();
    let mut group = c.benchmark_group("logprobs/8x256x32000");
    group.sample_size(10);
    group.throughput(Throughput::Elements((batch * seq) as u64));
    group.bench_function("forward", |b| {
        b.iter(|| token_logprobs(logits.as_tensor(), &ids).unwrap())
    });
    group.bench_function("forward_backward", |b| {
        b.iter(|| {
            let logp = token_logprobs(logits.as_tensor(), &ids).unwrap();
            (logp * &weights)
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap()
        })
    });
    // The same with candle's ops composed (what grpo-core runs off the CPU or in f64): the
    // baseline of the fused kernel, measured in the same run.
    let composed = |logits: &Tensor| {
        let max = logits.max_keepdim(D::Minus1).unwrap().detach();
        let shifted = logits.broadcast_sub(&max).unwrap();
        let lse = shifted
            .exp()
            .unwrap()
            .sum_keepdim(D::Minus1)
            .unwrap()
            .log()
            .unwrap();
        let picked = shifted
            .gather(
                &ids.unsqueeze(D::Minus1).unwrap().contiguous().unwrap(),
                D::Minus1,
            )
            .unwrap();
        (picked - lse).unwrap().squeeze(D::Minus1).unwrap()
    };
    group.bench_function("composed_forward", |b| {
        b.iter(|| composed(logits.as_tensor()))
    });
    group.bench_function("composed_forward_backward", |b| {
        b.iter(|| {
            (composed(logits.as_tensor()) * &weights)
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_advantages, bench_loss, bench_logprobs);
criterion_main!(benches);

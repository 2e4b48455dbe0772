//! The sampler: recorded log-probs equal a re-scoring forward, seeded reproducibility
//! independent of batching, greedy decoding, EOS and length stops.

use crate::common::{random_ids, random_model, random_tensors, small_config};
use candle_core::{D, DType, Device, Tensor};
use grpo_runner::model::{Architecture, Model};
use grpo_runner::rollout::sampler::{FinishReason, SampleRequest, Sampled, SamplingConfig, sample};

/// Log-probabilities of `completion` given `prompt` under `model` at `temperature` (1.0 for
/// the unscaled policy), from one full forward pass: the re-scoring that must agree with the
/// log-probs the sampler recorded.
fn score_completion(
    model: &Model,
    prompt: &[u32],
    completion: &[u32],
    temperature: f64,
) -> grpo_runner::Result<Vec<f32>> {
    assert!(
        !prompt.is_empty() && !completion.is_empty(),
        "prompt and completion must be non-empty"
    );
    let ids: Vec<u32> = prompt.iter().chain(completion).copied().collect();
    let n = ids.len();
    let input = Tensor::from_vec(ids, (1, n), model.device())?;
    let logits = model.detached()?.forward(&input, &[0], None)?;
    let logits = logits
        .narrow(1, prompt.len() - 1, completion.len())?
        .squeeze(0)?;
    let logits = (logits.to_dtype(DType::F64)? / temperature)?;
    let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
    let target = Tensor::new(completion, model.device())?.unsqueeze(1)?;
    let picked = logp.gather(&target, 1)?.squeeze(1)?.to_dtype(DType::F32)?;
    Ok(picked.to_vec1::<f32>()?)
}

fn model() -> Model {
    random_model(&small_config(Architecture::Qwen2, 30, true), 21, DType::F32)
}

fn prompts() -> Vec<Vec<u32>> {
    vec![
        random_ids(5, 30, 1),
        random_ids(2, 30, 2),
        random_ids(9, 30, 3),
    ]
}

#[test]
fn recorded_logprobs_equal_a_rescoring_forward() {
    let model = model();
    for config in [
        SamplingConfig {
            temperature: 1.0,
            max_new_tokens: 12,
            seed: 1,
            ..Default::default()
        },
        SamplingConfig {
            temperature: 0.7,
            top_k: 5,
            top_p: 0.9,
            max_new_tokens: 12,
            seed: 2,
            ..Default::default()
        },
        SamplingConfig::greedy(12),
    ] {
        let prompts = prompts();
        let completions = sample(&model, SampleRequest::new(&prompts, 3, &config))
            .map(Sampled::completions)
            .unwrap();
        assert_eq!(completions.len(), 9);
        let temperature = if config.temperature == 0.0 {
            1.0
        } else {
            config.temperature
        };
        for c in &completions {
            assert_eq!(c.tokens.len(), c.logprobs.len());
            let rescored =
                score_completion(&model, &prompts[c.prompt_index], &c.tokens, temperature).unwrap();
            for (a, b) in c.logprobs.iter().zip(&rescored) {
                assert!(
                    (a - b).abs() < 1e-4,
                    "{config:?}: recorded {a}, rescored {b}"
                );
            }
        }
    }
}

#[test]
fn completions_are_ordered_by_prompt_and_reproducible() {
    let model = model();
    let config = SamplingConfig {
        max_new_tokens: 10,
        seed: 7,
        ..Default::default()
    };
    let a = sample(&model, SampleRequest::new(&prompts(), 4, &config))
        .map(Sampled::completions)
        .unwrap();
    let b = sample(&model, SampleRequest::new(&prompts(), 4, &config))
        .map(Sampled::completions)
        .unwrap();
    assert_eq!(a, b);
    let order: Vec<usize> = a.iter().map(|c| c.prompt_index).collect();
    assert_eq!(order, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    // A group's completions differ from each other (independent streams).
    assert!(a[0].tokens != a[1].tokens || a[1].tokens != a[2].tokens);
    let other_seed = sample(
        &model,
        SampleRequest::new(
            &prompts(),
            4,
            &SamplingConfig {
                seed: 8,
                ..config.clone()
            },
        ),
    )
    .map(Sampled::completions)
    .unwrap();
    assert_ne!(a, other_seed);
}

#[test]
fn batching_does_not_change_the_samples() {
    let model = model();
    let config = SamplingConfig {
        max_new_tokens: 10,
        seed: 3,
        ..Default::default()
    };
    let together = sample(&model, SampleRequest::new(&prompts(), 2, &config))
        .map(Sampled::completions)
        .unwrap();
    // One prompt per chunk: different padding, different batch, same streams.
    let chunked = sample(
        &model,
        SampleRequest::new(
            &prompts(),
            2,
            &SamplingConfig {
                max_batch_rows: 2,
                ..config
            },
        ),
    )
    .map(Sampled::completions)
    .unwrap();
    assert_eq!(together.len(), chunked.len());
    for (a, b) in together.iter().zip(&chunked) {
        assert_eq!(a.tokens, b.tokens);
        for (x, y) in a.logprobs.iter().zip(&b.logprobs) {
            assert!((x - y).abs() < 1e-4);
        }
    }
}

/// The trainer samples a step's prompts in pieces (scoring one while sampling the next):
/// sampling a piece `starting_at` its offset's offset draws what sampling them together draws.
#[test]
fn sampling_in_pieces_draws_the_same_tokens() {
    let model = model();
    let config = SamplingConfig {
        max_new_tokens: 10,
        seed: 4,
        ..Default::default()
    };
    let prompts = prompts();
    let together = sample(&model, SampleRequest::new(&prompts, 3, &config))
        .map(Sampled::completions)
        .unwrap();
    let mut groups = sample(&model, SampleRequest::new(&prompts[..2], 3, &config))
        .unwrap()
        .groups;
    let second = SampleRequest::new(&prompts[2..], 3, &config).starting_at(2);
    groups.extend(sample(&model, second).unwrap().groups);
    // One group of G per prompt, in prompt order.
    assert_eq!(groups.len(), prompts.len());
    for (p, group) in groups.iter().enumerate() {
        assert_eq!(group.len(), 3);
        assert!(group.iter().all(|c| c.prompt_index == p), "{p}");
    }
    let pieces: Vec<_> = groups.into_iter().flatten().collect();
    assert_eq!(together.len(), pieces.len());
    for (a, b) in together.iter().zip(&pieces) {
        assert_eq!((a.prompt_index, &a.tokens), (b.prompt_index, &b.tokens));
    }
}

#[test]
fn greedy_follows_the_argmax_of_full_forwards() {
    let model = model();
    let prompt = random_ids(4, 30, 4);
    let completion = &sample(
        &model,
        SampleRequest::new(std::slice::from_ref(&prompt), 1, &SamplingConfig::greedy(8)),
    )
    .map(Sampled::completions)
    .unwrap()[0];
    let mut ids = prompt.clone();
    for &token in &completion.tokens {
        let input = Tensor::new(ids.as_slice(), &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let logits = model.forward(&input, &[0], None).unwrap();
        let last = logits.squeeze(0).unwrap().get(ids.len() - 1).unwrap();
        let argmax = last.argmax(0).unwrap().to_scalar::<u32>().unwrap();
        assert_eq!(token, argmax);
        ids.push(token);
    }
}

#[test]
fn eos_stops_a_completion_and_is_recorded() {
    let base = small_config(Architecture::Qwen2, 30, true);
    let tensors = random_tensors(&base, 21);
    let free = Model::from_tensors(&base, tensors.clone(), DType::F32, &Device::Cpu).unwrap();
    let prompt = random_ids(4, 30, 5);
    let greedy = &sample(
        &free,
        SampleRequest::new(std::slice::from_ref(&prompt), 1, &SamplingConfig::greedy(6)),
    )
    .map(Sampled::completions)
    .unwrap()[0];
    // Make the third greedy token the EOS: generation must stop right there, EOS included.
    let mut config = base.clone();
    config.eos_token_ids = vec![greedy.tokens[2]];
    let first_eos = greedy
        .tokens
        .iter()
        .position(|t| *t == greedy.tokens[2])
        .unwrap();
    let stopping = Model::from_tensors(&config, tensors, DType::F32, &Device::Cpu).unwrap();
    let c = &sample(
        &stopping,
        SampleRequest::new(&[prompt], 1, &SamplingConfig::greedy(6)),
    )
    .map(Sampled::completions)
    .unwrap()[0];
    assert_eq!(c.finish_reason, FinishReason::Eos);
    assert_eq!(c.tokens, greedy.tokens[..=first_eos]);
    assert_eq!(c.logprobs.len(), c.tokens.len());
}

#[test]
fn length_limit_stops_with_length() {
    let mut config = small_config(Architecture::Llama, 30, true);
    config.eos_token_ids = vec![];
    let model = random_model(&config, 22, DType::F32);
    let completions = sample(
        &model,
        SampleRequest::new(
            &prompts(),
            2,
            &SamplingConfig {
                max_new_tokens: 5,
                ..Default::default()
            },
        ),
    )
    .map(Sampled::completions)
    .unwrap();
    for c in completions {
        assert_eq!(c.finish_reason, FinishReason::Length);
        assert_eq!(c.tokens.len(), 5);
    }
}

#[test]
fn context_length_stops_generation() {
    let mut config = small_config(Architecture::Llama, 30, true);
    config.eos_token_ids = vec![];
    config.max_position_embeddings = 12;
    let model = random_model(&config, 23, DType::F32);
    // Prompt of 9 leaves room for 3 more positions: the 3rd token is the last fed.
    let c = &sample(
        &model,
        SampleRequest::new(&[random_ids(9, 30, 6)], 1, &SamplingConfig::greedy(50)),
    )
    .map(Sampled::completions)
    .unwrap()[0];
    assert_eq!(c.finish_reason, FinishReason::Length);
    assert_eq!(c.tokens.len(), 4);
}

#[test]
fn bad_arguments_are_errors() {
    let model = model();
    assert!(
        sample(
            &model,
            SampleRequest::new(&[vec![]], 1, &SamplingConfig::default())
        )
        .map(Sampled::completions)
        .is_err()
    );
    assert!(
        sample(
            &model,
            SampleRequest::new(&prompts(), 0, &SamplingConfig::default())
        )
        .map(Sampled::completions)
        .is_err()
    );
    assert!(
        sample(
            &model,
            SampleRequest::new(&[vec![99]], 1, &SamplingConfig::default())
        )
        .map(Sampled::completions)
        .is_err()
    );
}

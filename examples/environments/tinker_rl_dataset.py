#!/usr/bin/env python3
"""A tinker-cookbook RL dataset over a grpo-rs task pack: `PackDatasetBuilder` is the
`dataset_builder` a cookbook RL recipe takes (`tinker_cookbook.rl.train.Config`). Run as a
script it builds the dataset, takes the first group of envs, and answers its task once right
and once wrong, printing the rewards the pack's scorer gives.

    python tinker_rl_dataset.py --tokenizer DIR   # DIR: a tokenizer.json (+ tokenizer_config.json)

Needs `tinker-cookbook` and `grpo_rewards`. With a hub model, pass its id and renderer
(`--tokenizer Qwen/Qwen3-8B --renderer qwen3`).
"""

import argparse
import asyncio

from grpo_rewards.tinker_env import PackDatasetBuilder


async def main(tokenizer: str, renderer_name: str) -> None:
    builder = PackDatasetBuilder(pack="builtin:arith", batch_size=4, group_size=2,
                                 model_name_for_tokenizer=tokenizer, renderer_name=renderer_name)
    train, _ = await builder()
    group = train.get_batch(0)[0]
    envs = await group.make_envs()
    answer = envs[0].task["answer"]
    for env, text in zip(envs, [f"<think>add</think><answer>{answer}</answer>", "<answer>0</answer>"]):
        await env.initial_observation()
        # A model samples these tokens; here, the tokens its renderer trains for `text`.
        tokens, weights = env.renderer.build_supervised_example(env.messages() + [{"role": "assistant", "content": text}])
        action = [t for t, w in zip(tokens.to_ints(), weights.tolist()) if w > 0]
        step = await env.step(action)
        print(f"{group.task_id}: {text!r} -> reward {step.reward} ({step.logs['verdict']})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", required=True, help="a tokenizer directory or hub id")
    ap.add_argument("--renderer", default="role_colon", help="a tinker-cookbook renderer name")
    args = ap.parse_args()
    asyncio.run(main(args.tokenizer, args.renderer))

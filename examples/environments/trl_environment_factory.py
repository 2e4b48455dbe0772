#!/usr/bin/env python3
"""TRL's GRPOTrainer trained against `grpo serve`'s task environment through OpenEnv's client.

Each rollout gets one `ArithTask`: its `reset` draws a task from `/openenv/tasks` (the pack
given to `grpo serve --pack`), its `answer` tool sends the model's answer as the episode's one
step, and `get_reward` hands TRL the reward `grpo score` would give that answer.

    grpo serve --pack builtin:arith &            # prints {"listening": "127.0.0.1:PORT"}
    GRPO_URL=http://127.0.0.1:PORT python trl_environment_factory.py [--model Qwen/Qwen3-0.6B]

Without --model it trains a tiny randomly initialised Qwen3 (built here, no download) for one
step, which is what CI runs: the wiring, not the learning. Needs `trl`, `torch` and `openenv`.
"""

from __future__ import annotations

import argparse
import os

from datasets import Dataset
from openenv.core import GenericEnvClient
from trl import GRPOConfig, GRPOTrainer

URL = os.environ.get("GRPO_URL", "http://127.0.0.1:8000")


class ArithTask:
    """One episode of `/openenv/tasks`, held open over a WebSocket by OpenEnv's client."""

    episodes = 0  # tasks drawn, over every instance

    def __init__(self):
        self.env = GenericEnvClient(base_url=URL + "/openenv/tasks").sync()
        self.env.connect()
        self.task_id = None
        self.reward = 0.0

    def reset(self, **kwargs) -> str:
        result = self.env.reset()
        ArithTask.episodes += 1
        self.task_id, self.reward = result.observation["task_id"], 0.0
        return result.observation["prompt"]

    def answer(self, answer: str) -> str:
        """Submits the final answer to the task.

        Args:
            answer: The final answer, a number.

        Returns:
            Whether the answer was right.
        """
        result = self.env.step({"completion": f"<answer>{answer}</answer>", "task_id": self.task_id})
        self.reward = result.reward or 0.0
        return "right" if self.reward > 0 else "wrong"

    def get_reward(self) -> float:
        return self.reward


def tiny_model(out: str) -> str:
    """A randomly initialised two-layer Qwen3 with a byte-level tokenizer and TRL's own Qwen3
    chat template (so TRL knows how to parse its tool calls), saved under `out`."""
    import pathlib

    import trl
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                "<tool_response>", "</tool_response>", "<think>", "</think>"]
    vocab = {t: i for i, t in enumerate(specials)}
    for b in pre_tokenizers.ByteLevel.alphabet():
        vocab.setdefault(b, len(vocab))
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(specials)
    template = (pathlib.Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        chat_template=template)
    config = Qwen3Config(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=2048,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    Qwen3ForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a model id or directory (default: a tiny random Qwen3, one step)")
    ap.add_argument("--out", default="trl-grpo-serve")
    ap.add_argument("--steps", type=int, default=1)
    args = ap.parse_args()
    model = args.model or tiny_model(os.path.join(args.out, "tiny-model"))
    # The environment hands out the prompts: the dataset only says how many rollouts to run.
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "Solve the task, then call answer."}]}] * 4)
    trainer = GRPOTrainer(
        model=model,
        train_dataset=dataset,
        environment_factory=ArithTask,
        args=GRPOConfig(output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=2,
                        num_generations=2, max_completion_length=24, logging_steps=1, report_to="none",
                        use_cpu=args.model is None, save_strategy="no"),
    )
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    print(f"{ArithTask.episodes} episodes drawn from {URL}/openenv/tasks; last step: "
          + ", ".join(f"{k} {v:.3g}" for k, v in logged[-1].items() if k.startswith(("reward", "tools/"))))
    if ArithTask.episodes == 0:
        raise SystemExit("no episode was drawn from the environment")


if __name__ == "__main__":
    main()

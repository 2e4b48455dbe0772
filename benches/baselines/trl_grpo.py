#!/usr/bin/env python3
"""Side-by-side: TRL's GRPOTrainer against `grpo train` on the same configuration, CPU, fp32.

    python3 benches/baselines/trl_grpo.py [--grpo target/release/grpo] [--steps 5]
                                          [--prompts 16] [--group 8] [--max-new 40]

What it does:
1. creates a venv under target/trl-venv and pip-installs `trl==1.16.0` and
   `transformers==5.24.0` with their dependencies (torch, datasets, accelerate, requests)
   once, then re-runs itself in it (trl 0.25 does not import with transformers 5);
2. runs our trainer first (`grpo train --preset tiny`, warm-up off, evaluation off, `--steps`
   GRPO steps) and reads its seconds per step from `metrics.jsonl`; the run's `final/`
   directory gives TRL the same tokenizer (`tokenizer.json`) and the same model shape
   (`config.json`, a LlamaForCausalLM);
3. runs TRL's `GRPOTrainer` on the same model shape (fresh random weights), the same prompts
   (the train split of `arith-digits`, the tiny preset's pack, with the same `{prompt}\\n`
   template), the same prompts x group per step, the same maximum completion length,
   temperature 1, beta 0, fp32 on the CPU with `bf16`/`fp16` and gradient checkpointing off,
   one optimizer step per batch; a callback times each step;
4. prints the median seconds per step of both, after dropping the first (warm-up) step, and
   the ratio TRL / ours.

Both sides use the same thread count (torch.set_num_threads = the CPU count, candle's
default). Rewards are the same rules: 1 for the right number inside <answer></answer>, plus
0.1 for the <think></think><answer></answer> format.

Note: PyPI's torch wheel for Linux x86_64 depends on the CUDA runtime wheels: the venv is
about 6 GB (the CPU-only wheels live on download.pytorch.org, not on PyPI).
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "trl-venv"
PACKAGES = ["trl==1.16.0", "transformers==5.24.0", "datasets", "accelerate", "torch", "requests"]


def ensure_venv():
    """Re-executes this script inside a venv that has TRL."""
    py = VENV / "bin" / "python"
    if pathlib.Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not py.exists():
        print(f"creating {VENV} and installing {' '.join(PACKAGES)}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    os.execv(str(py), [str(py), __file__, *sys.argv[1:]])


def run_ours(args, out):
    """Runs `grpo train` and returns (seconds per step list, final model dir)."""
    cmd = [
        args.grpo, "train", "--preset", "tiny", "--out", str(out), "--quiet",
        "--set", "warmup.steps=0",
        # TRL keeps every group; so do we here (the preset drops tied groups and refills).
        "--set", "algorithm.shaping.filter_zero_variance_groups=false",
        "--set", f"budget.steps={args.steps}",
        "--set", f"eval.every={args.steps + 1000}",
        "--set", "eval.problems=1",
        "--set", "checkpoint.every=0",
        "--set", f"sampling.prompts_per_step={args.prompts}",
        "--set", f"sampling.group_size={args.group}",
        "--set", f"sampling.max_new_tokens={args.max_new}",
    ]
    subprocess.run(cmd, check=True)
    steps = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines() if l.strip()]
    return [s["step_seconds"] for s in steps], out / "final"


ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
FORMAT = re.compile(r"^<think>.+?</think>\s*<answer>.+?</answer>\s*$", re.S)


def run_trl(args, final):
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(final / "tokenizer.json"))
    tokenizer.eos_token = "<|endoftext|>"
    tokenizer.pad_token = tokenizer.eos_token
    cfg = json.loads((final / "config.json").read_text())
    config = LlamaConfig(**{k: v for k, v in cfg.items() if k not in ("architectures", "torch_dtype", "transformers_version")})
    model = LlamaForCausalLM(config).float()

    tasks = [json.loads(l) for l in (ROOT / "tasks/packs/arith-digits/train.jsonl").read_text().splitlines() if l.strip()]
    data = Dataset.from_list([{"prompt": t["prompt"] + "\n", "answer": t["answer"]} for t in tasks])

    def accuracy(completions, answer, **_):
        out = []
        for c, a in zip(completions, answer):
            m = ANSWER.findall(c)
            out.append(1.0 if m and m[-1].strip() == a.strip() else 0.0)
        return out

    def format_reward(completions, **_):
        return [0.1 if FORMAT.match(c) else 0.0 for c in completions]

    times = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.t = time.perf_counter()

        def on_step_end(self, *a, **k):
            times.append(time.perf_counter() - self.t)

    with tempfile.TemporaryDirectory() as tmp:
        training = GRPOConfig(
            output_dir=tmp,
            per_device_train_batch_size=args.prompts * args.group,
            num_generations=args.group,
            max_completion_length=args.max_new,
            temperature=1.0,
            beta=0.0,
            learning_rate=1e-3,
            max_steps=args.steps,
            gradient_accumulation_steps=1,
            num_iterations=1,
            bf16=False,
            fp16=False,
            gradient_checkpointing=False,
            use_cpu=True,
            logging_steps=1,
            report_to=[],
            save_strategy="no",
            seed=0,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=[accuracy, format_reward],
            args=training,
            train_dataset=data,
            callbacks=[Timer()],
        )
        trainer.train()
    return times


def main():
    ensure_venv()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grpo", default=str(ROOT / "target/release/grpo"))
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--prompts", type=int, default=16)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--max-new", type=int, default=40)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ours, final = run_ours(args, pathlib.Path(tmp) / "run")
        trl = run_trl(args, final)
    o = statistics.median(ours[1:] or ours)
    t = statistics.median(trl[1:] or trl)
    print(f"configuration: {args.prompts} prompts x {args.group} completions, <= {args.max_new} new tokens, fp32 CPU")
    print(f"grpo-rs: {o:.3f} s/step (median of {len(ours)} steps)")
    print(f"TRL    : {t:.3f} s/step (median of {len(trl)} steps)")
    print(f"ratio TRL / grpo-rs: {t / o:.2f}x")


if __name__ == "__main__":
    main()

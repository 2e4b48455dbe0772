#!/usr/bin/env python3
"""TRL's GRPOTrainer with grpo_rewards.trl's reward functions, checked against `grpo score`.

    python3 benches/baselines/trl_real_run.py [--steps 4] [--group 4] [--max-new 12]
                                              [--grpo target/debug/grpo] [--json FILE]

A real run, not a benchmark: `GRPOTrainer` from PyPI (TRL 1.16.0, CPU torch, the venv of
`trl_grpo.py`, created on first use) trains a tiny random Llama (the tiny preset's shape,
`trl_grpo.tiny_model`) with a character tokenizer built here (`trl_grpo.char_tokenizer`) for
a few steps. The dataset mixes five math prompts and one code task; the reward functions are
`grpo_rewards.trl.math_reward` (the `solution` column; `None` on the code row, which TRL
leaves out) and `grpo_rewards.trl.task_reward` (the `task` column, our task schema as JSON:
math, and the code task run in the sandbox). The code task is HumanEval-shaped (`prefix`
mode) and its prompt ends inside a comment, so a random model's output passes while it stays
on that line and fails once a newline lets its characters into the program: both rewards
occur.

After every step the script takes the completions and the per-completion rewards TRL logged
(its completions log, `_logs`, the table it sends to wandb or trackio) and the means it
logged (`rewards/<name>/mean`). After training it writes the tasks as a pack and the
completions as JSONL and runs `grpo score` on them: every reward TRL logged must equal
`grpo score`'s reward for the same completion (exactly; the rewards are 0 and 1), and every
logged mean must equal the mean of `grpo score`'s rewards. It prints the steps, their time,
and the comparison.

The grpo_rewards wheel is the one in target/wheels-dev (built with maturin, dev profile, when
missing), installed into the venv on each run.
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import trl_grpo  # noqa: E402  (the venv, the tiny model and the tokenizer are the benchmark's)

ROOT = trl_grpo.ROOT
WHEELS = ROOT / "target" / "wheels-dev"

MATH = [("3+4", "7"), ("9-6", "3"), ("2*4", "8"), ("5+1", "6"), ("8/4", "2")]
# HumanEval-style (`prefix`: the program is prompt + completion + tests), the completion
# continuing a comment: it passes while it stays on that line (or adds only valid lines).
CODE_TASK = {
    "id": "code-comment",
    "kind": "code",
    "prompt": "def answer():\n    return 7  # ",
    "language": "python",
    "mode": "prefix",
    "tests": {"type": "assert", "code": "assert answer() == 7\n", "entry_point": "answer"},
}


def tasks():
    out = [{"id": f"math-{k}", "kind": "math", "prompt": f"What is {q}?", "answer": a} for k, (q, a) in enumerate(MATH)]
    return out + [CODE_TASK]


def render(task):
    """The prompt TRL samples from: a `prefix` code task's prompt as it is (the completion
    continues it), a math question followed by a newline."""
    return task["prompt"] if task.get("mode") == "prefix" else task["prompt"] + "\n"


def install_wheel():
    """The grpo_rewards wheel from target/wheels-dev into this venv."""
    if not list(WHEELS.glob("*.whl")):
        maturin = ROOT / "target" / "py-tools-venv" / "bin" / "maturin"
        if not maturin.exists():
            subprocess.run([sys.executable, "-m", "venv", str(maturin.parents[1])], check=True)
            subprocess.run([str(maturin.parent / "pip"), "install", "-q", "maturin==1.16.0"], check=True)
        subprocess.run([str(maturin), "build", "-q", "-m", str(ROOT / "grpo-py" / "Cargo.toml"), "--profile", "dev",
                        "--out", str(WHEELS)], check=True)
    wheel = sorted(WHEELS.glob("*.whl"))[-1]
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall",
                    "--no-deps", str(wheel)], check=True)


def train(args):
    """Runs GRPOTrainer; returns the per-step records of what TRL logged."""
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    from grpo_rewards.trl import math_reward, task_reward

    all_tasks = tasks()
    rows = [{"prompt": render(t), "solution": t.get("answer"), "task": json.dumps(t)} for t in all_tasks]
    # The alphabet: every prompt's characters, so the random model writes digits, operators,
    # letters and spaces.
    tokenizer = trl_grpo.char_tokenizer("".join(r["prompt"] for r in rows) + "".join(trl_grpo.FORMAT_TAGS))
    longest = max(len(tokenizer(r["prompt"], add_special_tokens=False)["input_ids"]) for r in rows)
    model = trl_grpo.tiny_model(len(tokenizer), longest + args.max_new + 1)

    steps = []

    class Capture(TrainerCallback):
        """At each log (every step): TRL's completions log and its logged means."""

        trainer = None
        last = None

        def on_train_begin(self, *_, **__):
            self.last = time.perf_counter()

        def on_log(self, _args, state, _control, logs=None, **__):
            if logs is None or "loss" not in logs:
                return
            now = time.perf_counter()
            table = self.trainer._logs
            steps.append({
                "step": state.global_step,
                "seconds": now - self.last,
                "prompts": list(table["prompt"]),
                "completions": list(table["completion"]),
                "rewards": {name: list(values) for name, values in table["rewards"].items()},
                "means": {k: v for k, v in logs.items() if k.startswith("rewards/") and k.endswith("/mean")},
                "loss": logs["loss"],
            })
            self.last = now

    torch.set_num_threads(os.cpu_count() or 1)
    capture = Capture()
    with tempfile.TemporaryDirectory() as tmp:
        config = GRPOConfig(
            output_dir=tmp,
            per_device_train_batch_size=len(rows) * args.group,
            num_generations=args.group,
            max_completion_length=args.max_new,
            temperature=1.0,
            beta=0.0,
            learning_rate=1e-3,
            max_steps=args.steps,
            logging_steps=1,
            use_cpu=True,
            bf16=False,
            fp16=False,
            report_to=[],
            save_strategy="no",
            disable_tqdm=True,
            seed=0,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=[math_reward, task_reward],
            args=config,
            train_dataset=Dataset.from_list(rows),
            callbacks=[capture],
        )
        capture.trainer = trainer
        # The summary below says what the steps logged; no log line per step.
        trainer.remove_callback(PrinterCallback)
        trainer.train()
    return steps


def grpo_score(grpo, steps):
    """`grpo score` on every completion TRL logged: one reward per completion, step by step."""
    by_prompt = {render(t): t for t in tasks()}
    with tempfile.TemporaryDirectory() as tmp:
        pack = pathlib.Path(tmp) / "tasks.jsonl"
        pack.write_text("".join(json.dumps(t) + "\n" for t in tasks()))
        lines = [{"task_id": by_prompt[p]["id"], "completion": c}
                 for s in steps for p, c in zip(s["prompts"], s["completions"], strict=True)]
        completions = pathlib.Path(tmp) / "completions.jsonl"
        completions.write_text("".join(json.dumps(line) + "\n" for line in lines))
        done = subprocess.run([grpo, "score", "--tasks", str(pack), "--completions", str(completions)],
                              check=True, capture_output=True, text=True)
    scored = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(scored) == len(lines), f"grpo score gave {len(scored)} results for {len(lines)} completions"
    return lines, scored


def compare(steps, lines, scored):
    """Every logged reward against `grpo score`'s; returns counts for the report."""
    k = 0
    counts = {"math": [0, 0], "code": [0, 0]}  # [rewards equal, of which 1.0]
    for s in steps:
        n = len(s["completions"])
        ours = scored[k:k + n]
        ids = [line["task_id"] for line in lines[k:k + n]]
        k += n
        math_logged, task_logged = s["rewards"]["math_reward"], s["rewards"]["task_reward"]
        for i in range(n):
            reward, is_code = ours[i]["reward"], ids[i] == CODE_TASK["id"]
            assert task_logged[i] == reward, (s["step"], ids[i], s["completions"][i], task_logged[i], reward)
            if is_code:
                assert math.isnan(math_logged[i]), (s["step"], "math_reward scored the code row", math_logged[i])
            else:
                assert math_logged[i] == reward, (s["step"], ids[i], s["completions"][i], math_logged[i], reward)
            c = counts["code" if is_code else "math"]
            c[0] += 1
            c[1] += reward == 1.0
        math_rows = [o["reward"] for o, i in zip(ours, ids) if i != CODE_TASK["id"]]
        expected_means = {
            "rewards/math_reward/mean": sum(math_rows) / len(math_rows),
            "rewards/task_reward/mean": sum(o["reward"] for o in ours) / n,
        }
        for key, value in expected_means.items():
            assert abs(s["means"][key] - value) < 1e-6, (s["step"], key, s["means"][key], value)
    return counts


def main():
    trl_grpo.ensure_venv(__file__)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--group", type=int, default=4, help="completions per prompt")
    p.add_argument("--max-new", type=int, default=12, help="completion length in tokens (characters)")
    p.add_argument("--grpo", default=os.environ.get("GRPO_BIN", str(ROOT / "target" / "debug" / "grpo")))
    p.add_argument("--json", help="write the steps and the comparison as JSON to this file")
    args = p.parse_args()
    if not pathlib.Path(args.grpo).exists():
        p.error(f"{args.grpo} not found (cargo build -p grpo-cli, or pass --grpo)")
    install_wheel()

    started = time.perf_counter()
    steps = train(args)
    trained = time.perf_counter() - started
    assert len(steps) == args.steps, f"TRL logged {len(steps)} steps, expected {args.steps}"
    lines, scored = grpo_score(args.grpo, steps)
    counts = compare(steps, lines, scored)

    per_step = ", ".join(f"{s['seconds']:.2f}" for s in steps)
    print(f"TRL GRPOTrainer: {len(steps)} steps of {len(tasks())} prompts x {args.group} completions x "
          f"{args.max_new} tokens in {trained:.1f} s (per step: {per_step} s)")
    for s in steps:
        means = ", ".join(f"{k.split('/')[1]} {v:.3f}" for k, v in sorted(s["means"].items()))
        print(f"  step {s['step']}: loss {s['loss']:.4f}, logged means: {means}")
    for kind, (equal, ones) in counts.items():
        print(f"{kind}: {equal} logged rewards equal grpo score's ({ones} of them 1.0, {equal - ones} 0.0)")
    if not all(0 < ones < equal for equal, ones in counts.values()):
        print("warning: a kind's rewards were all equal: the comparison saw one value only", file=sys.stderr)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"steps": steps, "counts": counts}, indent=2) + "\n")
    print("trl real run: ok")


if __name__ == "__main__":
    main()

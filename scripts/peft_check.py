#!/usr/bin/env python3
"""Checks a LoRA adapter written by `grpo train` against PEFT itself (PyPI `peft`, torch):

1. `grpo train --preset smoke` makes a base model (an HF directory: config, safetensors,
   tokenizer).
2. `grpo train` trains LoRA adapters on that base (every projection, rank 4) for a few steps
   at a large learning rate, so the adapters move the logits well past the tolerance.
3. PEFT loads the adapter from the run's `final/adapter/` onto the base with
   `PeftModel.from_pretrained`, and its logits must equal ours (`examples/logits` with
   `--adapter`) within f32 tolerance; the adapter must have changed the logits.
4. transformers loads the merged weights in `final/`, and PEFT's
   `merge_and_unload` must give the same weights and logits.

    python3 scripts/peft_check.py [--grpo target/debug/grpo] [--logits target/debug/examples/logits]

The first run sets up target/trl-venv (torch, transformers, peft; see
benches/baselines/trl_grpo.py) and re-runs itself there.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches" / "baselines"))
import trl_grpo  # noqa: E402  (the shared venv)

# Rank and alpha away from 1:1 so that a scale applied wrongly (alpha/rank vs alpha) shows.
RANK, ALPHA = 4, 12


def run(cmd):
    subprocess.run([str(c) for c in cmd], check=True, stdout=subprocess.DEVNULL)


def our_logits(binary, model, adapter=None):
    cmd = [str(binary), str(model)] + (["--adapter", str(adapter)] if adapter else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    return got["tokens"], got["logits"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grpo", default=str(ROOT / "target" / "debug" / "grpo"))
    parser.add_argument("--logits", default=str(ROOT / "target" / "debug" / "examples" / "logits"))
    args = parser.parse_args()
    trl_grpo.ensure_venv(__file__)

    import peft
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    failures = []

    def expect(what, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        run([args.grpo, "train", "--preset", "smoke", "--out", tmp / "base", "--quiet"])
        base_dir = tmp / "base" / "final"
        run([args.grpo, "train", "--preset", "smoke", "--out", tmp / "lora", "--quiet",
             "--set", f"model.source={base_dir}", "--set", "warmup.steps=0",
             "--set", "lora.enabled=true", "--set", f"lora.rank={RANK}",
             "--set", f"lora.alpha={ALPHA}", "--set", "optimizer.lr=0.02"])
        final = tmp / "lora" / "final"
        adapter_dir = final / "adapter"
        config = json.loads((adapter_dir / "adapter_config.json").read_text())
        names = load_file(str(adapter_dir / "adapter_model.safetensors")).keys()
        expect("adapter_config.json says LORA with our rank and alpha",
               config["peft_type"] == "LORA" and config["r"] == RANK and config["lora_alpha"] == ALPHA,
               json.dumps({k: config.get(k) for k in ("peft_type", "r", "lora_alpha")}))
        expect("tensor names are PEFT's (base_model.model.…lora_A.weight, no adapter name)",
               all(n.startswith("base_model.model.model.layers.") and n.endswith((".lora_A.weight", ".lora_B.weight"))
                   for n in names) and len(names) > 0, sorted(names)[0])

        tokens, ours = our_logits(args.logits, base_dir, adapter_dir)
        _, ours_base = our_logits(args.logits, base_dir)
        ids = torch.tensor([tokens])
        base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32).eval()
        with torch.no_grad():
            hf_base = base(ids).logits[0]
        model = peft.PeftModel.from_pretrained(base, adapter_dir).eval()
        with torch.no_grad():
            theirs = model(ids).logits[0]
        ours = torch.tensor(ours)
        ours_base = torch.tensor(ours_base)
        scale = float(theirs.abs().max())
        moved = float((theirs - hf_base).abs().max())
        diff = float((theirs - ours).abs().max())
        diff_base = float((hf_base - ours_base).abs().max())
        tol = 1e-4 * max(1.0, scale)
        expect("the base model's logits, ours against transformers", diff_base <= tol,
               f"max |diff| {diff_base:.2e} (tolerance {tol:.1e})")
        expect("the adapter moves the logits well past the tolerance", moved > 100 * tol,
               f"max |PEFT - base| {moved:.3f}")
        expect("PEFT's logits with our adapter equal ours", diff <= tol,
               f"max |diff| {diff:.2e} over {ids.shape[1]} positions x {theirs.shape[1]} logits")

        merged = model.merge_and_unload()
        ours_merged = load_file(str(final / "model.safetensors"))
        worst = max(float((merged.state_dict()[name] - tensor).abs().max())
                    for name, tensor in ours_merged.items() if name in merged.state_dict())
        expect("PEFT's merge_and_unload gives our merged weights", worst <= 1e-5, f"max |diff| {worst:.2e}")
        loaded = AutoModelForCausalLM.from_pretrained(final, dtype=torch.float32).eval()
        with torch.no_grad():
            merged_logits = loaded(ids).logits[0]
        diff_merged = float((merged_logits - theirs).abs().max())
        expect("transformers on our merged final/ equals PEFT on the adapter", diff_merged <= tol,
               f"max |diff| {diff_merged:.2e}")

    print(f"peft {peft.__version__}, torch {torch.__version__}")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()

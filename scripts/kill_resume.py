#!/usr/bin/env python3
"""Crash-safety check: SIGKILL a training run at random moments, resume it each time, and
compare the result with an uninterrupted run of the same config.

    python3 scripts/kill_resume.py [--kills 20] [--seed 1] [--grpo target/release/grpo]
                                   [--steps 12] [--keep DIR]

1. runs `grpo train --preset smoke` (with --steps GRPO steps, checkpoints every 2, one thread)
   uninterrupted into REF, timing it;
2. starts the same run into RUN and kills it with SIGKILL at --kills moments drawn uniformly
   over the reference's duration (seeded), resuming with `grpo train --resume` after each; a
   kill so early that the run directory has no config.toml yet is followed by the original
   command instead (there is nothing to resume);
3. after every kill, checks the run directory is readable: config.toml present, every line of
   the JSONL files but a torn last one is a JSON record, every checkpoint directory complete,
   `final/` absent or complete;
4. lets the last resume finish, then compares with REF: eval.jsonl and metrics.jsonl with
   timing fields removed, samples.jsonl likewise, and final/model.safetensors tensor by tensor.

Prints where each kill landed (warm-up before the first checkpoint, GRPO steps, finishing)
and exits non-zero on any difference.
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def is_timing(key):
    return key.endswith("_seconds") or key.endswith("per_second") or key in ("seconds", "score_fraction")


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not is_timing(k)}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def records(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tensors(path):
    """safetensors: 8-byte little-endian header length, JSON header, raw data."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        out[name] = (meta["dtype"], tuple(meta["shape"]), body[start:end])
    return out


def check_readable(run):
    """Problems that would make the run directory unreadable (a torn last JSONL line is
    allowed: resuming drops it)."""
    problems = []
    if not (run / "config.toml").is_file():
        problems.append("config.toml missing")
    for name in ("metrics.jsonl", "eval.jsonl", "samples.jsonl"):
        path = run / name
        if not path.exists():
            continue
        lines = path.read_text().split("\n")
        complete, last = lines[:-1], lines[-1]
        for i, line in enumerate(complete):
            try:
                json.loads(line)
            except ValueError:
                problems.append(f"{name}:{i + 1} is not a JSON record")
        if last:
            try:
                json.loads(last)
            except ValueError:
                pass  # a torn last line: dropped on resume
    ckpts = run / "checkpoints"
    if ckpts.exists():
        for d in ckpts.iterdir():
            if d.name.startswith("step-") and not (d / "state.json").is_file():
                problems.append(f"checkpoint {d.name} incomplete")
    final = run / "final"
    if final.exists() and not (final / "model.safetensors").is_file():
        problems.append("final/ incomplete")
    return problems


def phase(run):
    ckpts = run / "checkpoints"
    if not (run / "config.toml").exists():
        return "before the run directory"
    if not ckpts.exists() or not any(d.name.startswith("step-") for d in ckpts.iterdir()):
        return "warm-up (no checkpoint yet)"
    if (run / "final.partial").exists() or (run / "final").exists():
        return "finishing (final model)"
    return f"GRPO steps (latest {max(d.name for d in ckpts.iterdir() if d.name.startswith('step-'))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--grpo", default=os.environ.get("GRPO_BIN", str(ROOT / "target" / "release" / "grpo")))
    ap.add_argument("--keep", help="keep the two run directories under this folder")
    args = ap.parse_args()

    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="grpo-kill-"))
    work.mkdir(parents=True, exist_ok=True)
    ref, run = work / "ref", work / "run"
    for d in (ref, run):
        shutil.rmtree(d, ignore_errors=True)
    settings = ["--preset", "smoke", "--set", f"budget.steps={args.steps}", "--set", "checkpoint.every=2",
                "--set", "eval.every=4", "--set", "threads=1", "--quiet"]
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}

    started = time.perf_counter()
    proc = subprocess.Popen([args.grpo, "train", *settings, "--out", str(ref)], env=env)
    warm = None
    while proc.poll() is None:
        if warm is None and (ref / "checkpoints" / "step-000000").exists():
            warm = time.perf_counter() - started
        time.sleep(0.02)
    if proc.returncode != 0:
        sys.exit(f"the uninterrupted run failed ({proc.returncode})")
    duration = time.perf_counter() - started
    warm = warm or duration / 3
    # What a resume costs before it makes progress: a resume of the finished run.
    copy = work / "ref-resume"
    shutil.copytree(ref, copy)
    t0 = time.perf_counter()
    subprocess.run([args.grpo, "train", "--resume", "--out", str(copy), "--quiet"], check=True, env=env)
    load = time.perf_counter() - t0
    shutil.rmtree(copy)
    print(f"uninterrupted run: {duration:.1f} s, warm-up and first checkpoint {warm:.1f} s, "
          f"a resume's start {load:.1f} s ({args.grpo})", flush=True)

    rng = random.Random(args.seed)
    landed = []
    failures = []
    for k in range(args.kills):
        if (run / "config.toml").exists():
            cmd = [args.grpo, "train", "--resume", "--out", str(run), "--quiet"]
        else:
            cmd = [args.grpo, "train", *settings, "--out", str(run)]
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        # Spread the kills over the whole run: a sixth inside the warm-up (each restarts it),
        # the rest over the GRPO steps, mid-step, mid-evaluation and mid-checkpoint alike.
        def has_ckpt():
            return (run / "checkpoints").exists() and any(
                d.name.startswith("step-") for d in (run / "checkpoints").iterdir())
        in_warmup = sum(1 for w in landed if w.startswith("warm-up") or w.startswith("before"))
        if not has_ckpt() and in_warmup >= max(1, args.kills // 6):
            while proc.poll() is None and not has_ckpt():
                time.sleep(0.005)
        span = warm * 1.3 if not has_ckpt() else load + 3 * (duration - warm) / max(args.kills, 1)
        delay = rng.uniform(0.0, span)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            where = phase(run)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            landed.append(where)
            problems = check_readable(run) if (run / "config.toml").exists() or where != "before the run directory" else []
            print(f"kill {k + 1:2}: after {delay:5.2f} s, during {where}"
                  + (f"  UNREADABLE: {problems}" if problems else ""), flush=True)
            failures += [f"kill {k + 1}: {p}" for p in problems]
            continue
        err = proc.stderr.read()
        if proc.returncode != 0:
            failures.append(f"run {k + 1} exited {proc.returncode}: {err.strip()[-500:]}")
            print(f"run {k + 1} failed: {err.strip()[-500:]}", flush=True)
            break
        print(f"kill {k + 1:2}: the run finished within {delay:.2f} s; starting the next kill on a finished run", flush=True)
        landed.append("after the end")
    # Finish the run.
    if not (run / "final" / "model.safetensors").exists() or landed and landed[-1] != "after the end":
        cmd = ([args.grpo, "train", "--resume", "--out", str(run), "--quiet"] if (run / "config.toml").exists()
               else [args.grpo, "train", *settings, "--out", str(run)])
        subprocess.run(cmd, check=True, env=env)

    for name in ("eval.jsonl", "metrics.jsonl", "samples.jsonl"):
        a, b = strip(records(ref / name)), strip(records(run / name))
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            failures.append(f"{name} differs from the uninterrupted run (first at record {first}; {len(a)} vs {len(b)} records)")
        else:
            print(f"{name}: identical ({len(a)} records, timing fields aside)")
    ta, tb = tensors(ref / "final" / "model.safetensors"), tensors(run / "final" / "model.safetensors")
    differing = sorted(n for n in set(ta) | set(tb) if ta.get(n) != tb.get(n))
    if differing:
        failures.append(f"final weights differ in {len(differing)} tensors: {differing[:5]}")
    else:
        print(f"final/model.safetensors: {len(ta)} tensors, each identical")
    counts = {}
    for where in landed:
        key = where.split(" (latest")[0]
        counts[key] = counts.get(key, 0) + 1
    print("kills by phase: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"OK: {len(landed)} kills, every resume exact")
    return 0


if __name__ == "__main__":
    sys.exit(main())

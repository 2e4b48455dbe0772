#!/usr/bin/env python3
"""TensorBoard's own reader against the event files of a `grpo train --report-to tensorboard`
run: every scalar of every `metrics.jsonl` record (nested keys as `parent/key`) and of every
`eval.jsonl` record (as `eval/key`) must be there, at its step, with its value (as float32).

    scripts/tensorboard_check.sh            # a venv with tensorboard from PyPI, then this
    python3 scripts/tensorboard_check.py [--grpo target/debug/grpo] [--dir RUN_DIR]

With `--dir`, checks an existing run directory instead of training a smoke run.
Exit status 0 when every scalar matches.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import struct
import subprocess
import sys
import tempfile

from tensorboard.backend.event_processing import event_accumulator

ROOT = pathlib.Path(__file__).resolve().parent.parent


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def leaves(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for key, v in value.items():
            leaves(f"{prefix}/{key}" if prefix else key, v, out)
    elif isinstance(value, bool):
        out[prefix] = 1.0 if value else 0.0
    elif isinstance(value, (int, float)):
        out[prefix] = float(value)


def expected(run: pathlib.Path) -> dict[str, dict[int, float]]:
    want: dict[str, dict[int, float]] = {}
    for name, prefix in (("metrics.jsonl", ""), ("eval.jsonl", "eval/")):
        for line in (run / name).read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            step = record.pop("step")
            scalars: dict = {}
            for key, value in record.items():
                leaves(prefix + key, value, scalars)
            for tag, value in scalars.items():
                want.setdefault(tag, {})[step] = value
    return want


def check(run: pathlib.Path) -> int:
    files = sorted(run.glob("events.out.tfevents.*"))
    if len(files) != 1:
        print(f"FAIL expected one event file in {run}, found {[f.name for f in files]}")
        return 1
    acc = event_accumulator.EventAccumulator(str(run), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    want = expected(run)
    failures = 0
    for tag, by_step in sorted(want.items()):
        if tag not in tags:
            print(f"FAIL tag {tag!r} missing")
            failures += 1
            continue
        got = {e.step: e.value for e in acc.Scalars(tag)}
        for step, value in by_step.items():
            seen = got.get(step)
            if seen is None or not (seen == f32(value) or (math.isnan(seen) and math.isnan(value))):
                print(f"FAIL {tag} at step {step}: TensorBoard has {seen!r}, the JSON {value!r}")
                failures += 1
        if set(got) != set(by_step):
            print(f"FAIL {tag}: steps {sorted(got)} in TensorBoard, {sorted(by_step)} in the JSON")
            failures += 1
    extra = tags - set(want)
    if extra:
        print(f"FAIL tags not in the JSON records: {sorted(extra)}")
        failures += 1
    points = sum(len(v) for v in want.values())
    print(f"{len(want)} tags, {points} points checked in {files[0].name}: {failures} failure(s)")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grpo", default=os.environ.get("GRPO_BIN", str(ROOT / "target" / "debug" / "grpo")))
    parser.add_argument("--dir")
    args = parser.parse_args()
    if args.dir:
        return check(pathlib.Path(args.dir))
    with tempfile.TemporaryDirectory() as tmp:
        run = pathlib.Path(tmp) / "run"
        subprocess.run([args.grpo, "train", "--preset", "smoke", "--out", str(run), "--quiet",
                        "--report-to", "tensorboard"], check=True)
        status = check(run)
        # A resumed run writes the event file again from the records it kept: still one file,
        # still every scalar once.
        subprocess.run([args.grpo, "train", "--resume", "--out", str(run), "--quiet"], check=True)
        return status or check(run)


if __name__ == "__main__":
    sys.exit(main())

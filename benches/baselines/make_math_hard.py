#!/usr/bin/env python3
"""Writes benches/data/math_hard.jsonl: adversarial pairs for the per-check time bound, the
input families the fuzzer (benches/src/bin/math_fuzz.rs) found slow or that stress the caps.

Deterministic. Each family at several sizes, each input both as the prediction and as the
reference:

- long decimals (up to 4,000 digits) against short ones, and runs of nines (the fuzzer's
  slowest input, `1.39691999…9` against `6.875`);
- huge exponents and factorials (`10^{10^{10}}`, `3^{70301}`, `2362!`, `\\frac{1}{2006!}`);
- logarithms of long numbers (`\\log_9` of a 3,500-digit number);
- `±` inside factorials and powers;
- deep and unbalanced nesting, long flat sums and products, long lists and sets;
- long completions (up to the 4 KiB answer cap and beyond) with many boxes, dollars and
  backslashes, and text escaped twice.

Verdicts are not the point here (the file has no `expected`): `check_pairs` reports the time
of every check.
"""
import json
import pathlib
import random

rng = random.Random(7)
rows = []


def add(gold, pred):
    rows.append({"gold": gold, "pred": pred})
    rows.append({"gold": pred, "pred": gold})


for n in (50, 200, 580, 1000, 2000, 4000):
    add("6.875", "1.3969" + "9" * n + "1")
    add("\\frac{37}{3}", "12." + "3" * n)
    add("1/7", "0." + "142857" * (n // 6))
    add(str(rng.randrange(10**n)), str(rng.randrange(10**n)))
    add("0." + "0" * (n // 2) + "1", "10^{-" + str(n // 2 + 1) + "}")
for e in ("10^{10^{10}}", "3^{70301}", "2^{100000}", "2362!", "5000!", "\\frac{1}{2006!}", "9^{9^{9}}"):
    add(e, e + "+1")
    add("\\boxed{" + e + "}", "\\frac{" + e + "}{" + e + "}")
big = "".join(str(rng.randrange(10)) for _ in range(3500))
add("\\log_9 {" + big + "}", "3")
add("\\log_{2} {" + "1" + "0" * 3000 + "}", "\\log_2 10^{3000}")
add("(3 \\pm 2)!", "\\{1, 120\\}")
add("(1 \\pm 1)^{(2 \\pm 1)} \\pm 3", "\\{0, 3, 8\\}")
add("\\frac{-1 \\pm \\sqrt{5}}{2} \\pm \\frac{1 \\pm \\sqrt{3}}{2}", "0")
for depth in (60, 63, 200, 3000):
    add("(" * depth + "1" + ")" * depth, "1")
    add("\\frac{" * depth + "1" + "}{2}" * depth, "1")
    add("(" * depth + "x", "x")
    add("\\sqrt{" * depth + "2" + "}" * depth, "2")
for n in (100, 1000, 2000):
    add("+".join(["1"] * n), str(n))
    add("\\cdot".join(["x"] * n), "x^{" + str(n) + "}")
    add(", ".join(str(k) for k in range(n)), "\\{" + ", ".join(str(k) for k in reversed(range(n))) + "\\}")
    add("(" + ", ".join(str(k) for k in range(n // 10)) + ")", "(" + ", ".join(str(k) for k in range(n // 10)) + ")")
for size in (4000, 16000, 64000):
    body = " ".join(rng.choice(["$x$", "\\frac{1}{2}", "\\boxed{3}", "and", "$$", "\\(", "\\\\frac", "{", "}", "answer is"]) for _ in range(size // 6))
    add("3", body)
    add("3", body + " so the answer is $\\boxed{3}$.")
    add("\\{1, 2\\}", body + " \\boxed{1} and \\boxed{2}")
    add("3", "\\boxed{" * 40 + body + "}")
add("x = \\infty", "x = 12,500")
add("x^{x^{x^{x^{x}}}}", "x^{x^{x^{x^{x}}}} + 10^{-30}")
add("\\sum_{k=1}^{255} k!", "\\sum_{k=1}^{255} k!")
add("\\sum_{k=1}^{100000} k", "5000050000")
add("\\prod_{k=1}^{250} \\sum_{j=1}^{250} j", "1")

out = pathlib.Path(__file__).resolve().parent.parent / "data" / "math_hard.jsonl"
out.write_text("".join(json.dumps(r) + "\n" for r in rows))
print(f"wrote {len(rows)} pairs to {out}")

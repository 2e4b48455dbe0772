#!/usr/bin/env python3
"""Writes benches/data/math_pairs.jsonl: the gold/prediction pairs that both the criterion
bench (benches/benches/math.rs) and the Math-Verify baseline (math_verify.py) check.

Deterministic (fixed seed). Categories: integers, decimals, fractions, LaTeX expressions,
sets, intervals, tuples, GSM8K-style solutions, long chain-of-thought completions with a
boxed answer, and near misses that must be judged unequal.
"""
import json
import pathlib
import random

rng = random.Random(20240229)
pairs = []


def add(category, gold, pred, expected):
    """`expected`: whether the prediction is equivalent to the gold answer, by construction."""
    pairs.append({"category": category, "gold": gold, "pred": pred, "expected": expected})


def cot(answer, steps=12):
    lines = []
    for k in range(steps):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        lines.append(f"Step {k + 1}: we compute ${a} \\times {b} = {a * b}$, and then simplify the expression "
                     f"$\\frac{{{a * b}}}{{{b}}} = {a}$ to keep the bookkeeping simple.")
    lines.append(f"Therefore the final answer is $\\boxed{{{answer}}}$.")
    return "\n".join(lines)


for _ in range(40):
    n = rng.randint(-10**6, 10**6)
    add("integer", str(n), f"The answer is \\boxed{{{n}}}." if rng.random() < 0.5 else f"so we get {n:,}", True)
    add("integer", str(n), f"\\boxed{{{n + rng.choice([-1, 1])}}}", False)
for _ in range(30):
    p, q = rng.randint(1, 500), rng.randint(2, 500)
    add("fraction", f"\\frac{{{p}}}{{{q}}}", f"\\boxed{{\\frac{{{2 * p}}}{{{2 * q}}}}}", True)
    add("fraction", f"\\frac{{{p}}}{{{q}}}", f"\\boxed{{{p}/{q + 1}}}", False)
    add("decimal", f"{p / 8:.3f}".rstrip("0").rstrip("."), f"\\boxed{{\\frac{{{p}}}{{8}}}}", True)
for _ in range(25):
    a, b = rng.randint(2, 30), rng.randint(2, 30)
    add("latex", f"{a}\\sqrt{{{b}}}", f"\\boxed{{\\sqrt{{{a * a * b}}}}}", True)
    add("latex", f"\\frac{{{a}\\pi}}{{{b}}}", f"\\boxed{{\\frac{{{a}}}{{{b}}}\\pi}}", True)
    add("latex", f"{a}x^2 + {b}x", f"\\boxed{{x({a}x+{b})}}", True)
    add("latex", f"(x+{a})^2", f"\\boxed{{x^2+{2 * a}x+{a * a + 1}}}", False)
for _ in range(20):
    s = sorted(rng.sample(range(-20, 20), 3))
    shuffled = s[:]
    rng.shuffle(shuffled)
    add("set", "\\{" + ", ".join(map(str, s)) + "\\}", "\\boxed{\\{" + ", ".join(map(str, shuffled)) + "\\}}", True)
    add("set", ", ".join(map(str, s)), "\\boxed{" + ", ".join(map(str, shuffled[:2])) + "}", False)
for _ in range(20):
    a, b = sorted(rng.sample(range(-50, 50), 2))
    add("interval", f"({a}, {b}]", f"\\boxed{{\\left({a}, {b}\\right]}}", True)
    add("interval", f"[{a}, \\infty)", f"\\boxed{{({a}, \\infty)}}", False)
    add("tuple", f"({a}, {b})", f"\\boxed{{({a},{b})}}", True)
for _ in range(25):
    x = rng.randint(2, 500)
    add("gsm8k", str(x), f"She buys {x // 2} apples and {x - x // 2} pears, so {x} fruits.\n#### {x}", True)
for _ in range(25):
    p, q = rng.randint(1, 50), rng.randint(2, 50)
    add("long_cot", f"\\frac{{{p}}}{{{q}}}", cot(f"\\frac{{{p}}}{{{q}}}"), True)
    add("long_cot", str(p * q), cot(str(p * q + 1)), False)
for k in range(5):
    add("near_miss", f"\\frac{{1}}{{2^{{{99 + k}}}}}", f"\\boxed{{\\frac{{1}}{{2^{{{98 + k}}}}}}}", False)
    add("near_miss", f"\\frac{{1}}{{{2004 + k}!}}", f"\\boxed{{\\frac{{1}}{{{2006 + k}!}}}}", False)
    add("near_miss", f"10^{{{20 + k}}}", f"\\boxed{{10^{{{20 + k}}}+1}}", False)

out = pathlib.Path(__file__).resolve().parent.parent / "data" / "math_pairs.jsonl"
out.write_text("".join(json.dumps(p) + "\n" for p in pairs))
print(f"wrote {len(pairs)} pairs to {out}")

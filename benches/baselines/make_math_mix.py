#!/usr/bin/env python3
"""Writes benches/data/math_mix.jsonl: a mix of pairs shaped like the traffic a reward sees,
for timing (the per-check time distribution, and the Python package against Math-Verify).

Deterministic (fixed seed), and apart from benches/data/math_pairs.jsonl. Each pair carries
the verdict it was constructed to have:

- long chains of thought (1 to 8 KB) ending in a boxed answer, with math spans and, in some,
  intermediate boxes and a closing "Final Answer: The final answer is ...";
- decimals against fractions with long expansions (`\\frac{37}{3}` against `12.333333`),
  rounded, truncated or wrong in the last digit;
- big integers: factorials and powers written out against their expressions, off by one;
- relations, sets, intervals and tuples; units, times and words in `\\text{}`.
"""
import json
import math
import pathlib
import random

rng = random.Random(20261202)
pairs = []


def add(category, gold, pred, expected):
    pairs.append({"category": category, "gold": gold, "pred": pred, "expected": expected})


FILLER = [
    "Let us look at the constraint again and write it in a cleaner form.",
    "We can check small cases by hand to see the pattern.",
    "Substituting back, both sides agree, which is reassuring.",
    "Note that the expression is symmetric, so we may assume the first variable is the larger.",
    "This is a standard telescoping argument.",
]


def chain_of_thought(answer, size, intermediate_boxes=False, final_line=None):
    lines = []
    while sum(map(len, lines)) < size:
        a, b = rng.randint(2, 999), rng.randint(2, 99)
        kind = rng.randrange(4)
        if kind == 0:
            lines.append(f"We compute ${a} \\times {b} = {a * b}$ and divide: $\\frac{{{a * b}}}{{{b}}} = {a}$.")
        elif kind == 1:
            lines.append(f"So $x^2 - {a}x + {b} = 0$ has discriminant ${a * a - 4 * b}$.")
        elif kind == 2 and intermediate_boxes:
            lines.append(f"This part gives $\\boxed{{{a}}}$ for the first case.")
        else:
            lines.append(rng.choice(FILLER))
    lines.append(f"Therefore the answer is $\\boxed{{{answer}}}$.")
    if final_line:
        lines.append(final_line)
    return "\n".join(lines)


# Long chains of thought.
for _ in range(150):
    p, q = rng.randint(1, 99), rng.randint(2, 60)
    g = math.gcd(p, q)
    gold = f"\\frac{{{p // g}}}{{{q // g}}}"
    size = rng.choice([1000, 2000, 4000, 8000])
    add("long_cot", gold, chain_of_thought(f"\\frac{{{2 * p}}}{{{2 * q}}}", size, rng.random() < 0.3), True)
    wrong = f"\\frac{{{p + q}}}{{{q}}}" if p % q else f"{p // q + 1}"
    add("long_cot", gold, chain_of_thought(wrong, size), False)
for _ in range(40):
    n = rng.randint(1000, 99999)
    size = rng.choice([2000, 4000])
    final = f"Final Answer: The final answer is ${n:,}$. I hope it is correct."
    add("long_cot_final", str(n), chain_of_thought(rng.randint(2, 999), size, True, final), True)
    add("long_cot_final", str(n + 1), chain_of_thought(rng.randint(2, 999), size, True, final), False)

# Decimals against fractions with long expansions.
for _ in range(120):
    q = rng.choice([3, 7, 9, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97])
    p = rng.randint(1, 40 * q)
    if p % q == 0:
        p += 1
    places = rng.choice([3, 4, 6, 9, 12, 20, 30])
    scaled = p * 10**places // q
    whole, frac = divmod(scaled, 10**places)
    truncated = f"{whole}.{frac:0{places}d}"
    add("decimal_fraction", f"\\frac{{{p}}}{{{q}}}", f"\\boxed{{{truncated}}}", True)
    bumped = scaled + 2
    whole, frac = divmod(bumped, 10**places)
    add("decimal_fraction", f"\\frac{{{p}}}{{{q}}}", f"\\boxed{{{whole}.{frac:0{places}d}}}", False)
    add("decimal_fraction", f"{truncated}", f"\\boxed{{\\frac{{{p}}}{{{q}}}}}", True)

# Big integers.
for _ in range(40):
    n = rng.randint(20, 300)
    add("big_integer", f"{n}!", f"\\boxed{{{math.factorial(n)}}}", True)
    add("big_integer", f"{n}!", f"\\boxed{{{math.factorial(n) + 1}}}", False)
    k = rng.randint(64, 2000)
    add("big_integer", f"2^{{{k}}}", f"The value is \\boxed{{{2**k}}}.", True)
    add("big_integer", f"{2**k - 1}", f"\\boxed{{2^{{{k}}}}}", False)

# Relations, collections, units and times.
for _ in range(40):
    a, b = sorted(rng.sample(range(-30, 30), 2))
    add("relations", f"{a} \\le x \\le {b}", f"\\boxed{{x \\in [{a}, {b}]}}", True)
    add("relations", f"x \\in [{a}, {b})", f"\\boxed{{{a} \\le x < {b}}}", True)
    add("relations", f"x \\in [{a}, {b})", f"\\boxed{{{a} < x < {b}}}", False)
    add("relations", f"x = {a}", f"$x = {a - 1} + 1 = {a}$", True)
    add("collections", f"({a}, {b}) \\cup ({b}, {b + 5})", f"\\boxed{{({a},{b})\\cup({b},{b + 5})}}", True)
    add("collections", f"\\{{{a}, {b}\\}}", f"\\boxed{{({a}, {b})}}", False)
    h, m = rng.randint(1, 12), rng.randint(0, 59)
    half = rng.choice(["a.m.", "p.m."])
    other = "p.m." if half == "a.m." else "a.m."
    add("units_times", f"\\text{{{h}:{m:02d} {half}}}", f"\\boxed{{{h}:{m:02d} \\text{{ {half}}}}}", True)
    add("units_times", f"\\text{{{h}:{m:02d} {half}}}", f"\\boxed{{{h}:{m:02d} \\text{{ {other}}}}}", False)
    add("units_times", f"{abs(a) + 1} \\text{{ cm}}", f"\\boxed{{\\text{{{abs(a) + 1} cm}}}}", True)

out = pathlib.Path(__file__).resolve().parent.parent / "data" / "math_mix.jsonl"
out.write_text("".join(json.dumps(p) + "\n" for p in pairs))
print(f"wrote {len(pairs)} pairs to {out}")

#!/usr/bin/env python3
"""Writes benches/data/math_pairs.jsonl: the gold/prediction pairs that both the criterion
bench (benches/benches/math.rs) and the Math-Verify baseline (math_verify.py) check.

Deterministic (fixed seed). Generated categories: integers, decimals, fractions, LaTeX
expressions, sets, intervals, tuples, GSM8K-style solutions, long chain-of-thought completions
with a boxed answer, and near misses that must be judged unequal. Then hand-judged pairs, at
least 20 per answer kind (numbers, relations, matrices, several answers, decimals
for exact values, delimiters and prose, text and symbols, variable names, must-differ).
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


# Hand-judged pairs, one block per answer kind (verdicts by hand, not by a
# checker): numbers as people write them, relations, matrices, several answers, decimals for
# exact values, delimiters and prose, text and symbols, variable names (default, strict
# mode: different names do not match), and pairs that must stay unequal.
HAND = {
    "numbers": [
        ("12500", "The total is 12 500 people.", True),
        ("12500", r"\boxed{12,\!500}", True),
        ("12500", r"\boxed{12\,500}", True),
        ("1234567", r"\boxed{1 234 567}", True),
        ("3.75", r"\boxed{3,75}", True),
        ("0.375", r"\boxed{0,375}", True),
        ("12.5", r"\boxed{12,5}", True),
        ("-2.5", r"\boxed{-2,5}", True),
        ("1000", r"\boxed{1,000}", True),
        ("250000", r"\boxed{250{,}000}", True),
        ("(3,1)", r"\boxed{(3,1)}", True),
        ("7", "so the value is 7", True),
        ("12", "We found 12 items and the label H2O", True),
        ("3.75", r"\boxed{3,76}", False),
        ("12500", r"\boxed{12 501}", False),
        ("1000", r"\boxed{1,0}", False),
        ("(3,1)", r"\boxed{3.1}", False),
        ("7", "The code is XQ7Z", False),
        ("4500", r"\boxed{4,50}", False),
        ("0.5", r"\boxed{0,05}", False),
        ("2024", r"\boxed{2 024}", True),
        ("99999", r"\boxed{99,999}", True),
    ],
    "relations": [
        (r"x \geq 3", r"\boxed{x \ge 3}", True),
        (r"x \geq 3", r"\boxed{x >= 3}", True),
        (r"x \geq 3", r"\boxed{3 \le x}", True),
        (r"x > 3", r"\boxed{x \gt 3}", True),
        (r"x < 3", r"\boxed{x \lt 3}", True),
        (r"x \neq 3", r"\boxed{x != 3}", True),
        ("y < 4", r"\boxed{-y > -4}", True),
        ("2x + 1 > 5", r"\boxed{x > 2}", True),
        ("5", r"\boxed{x = 2+3 = 5}", True),
        (r"\pi", r"\boxed{x = \pi \approx 3.1416}", True),
        ("[-1, 4]", r"\boxed{-1 \le x \le 4}", True),
        (r"x \in [-1, 4]", r"\boxed{-1 \le x \le 4}", True),
        ("(0, 2)", r"\boxed{0 < g(t) < 2}", True),
        ("(0, 2]", r"\boxed{2 \geq y > 0}", True),
        (r"(-\infty, -1) \cup (2, \infty)", r"\boxed{x < -1 \text{ or } x > 2}", True),
        ("y < 4", r"\boxed{-y < -4}", False),
        ("x > 2", r"\boxed{x \geq 2}", False),
        ("6", r"\boxed{x = 2+3 = 5}", False),
        ("[-1, 4]", r"\boxed{-1 < x \le 4}", False),
        (r"(-\infty, -1) \cup (2, \infty)", r"\boxed{x < -1 \text{ or } x \ge 2}", False),
        (r"x \le 7", r"\boxed{x < 7}", False),
        (r"x \neq 3", r"\boxed{x = 3}", False),
    ],
    "matrices": [
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}}", True),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\left[ \begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array} \right]}", True),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"So the matrix is $\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}$.", True),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", "Multiplying out we get \\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix} as the result", True),
        (r"\begin{pmatrix} 2 & 2 \\ 3 & 5 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} + \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}}", True),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}", True),
        (r"\begin{pmatrix} 7 & 10 \\ 15 & 22 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}^2}", True),
        (r"\begin{pmatrix} 2 & 4 \\ 6 & 8 \end{pmatrix}", r"\boxed{2\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}", True),
        (r"\begin{pmatrix} \frac{1}{2} & 0 \\ 0 & 1 \end{pmatrix}", r"\boxed{\begin{pmatrix} 0.5 & 0 \\ 0 & 1 \end{pmatrix}}", True),
        (r"\begin{pmatrix} 3 \\ -1 \end{pmatrix}", r"\boxed{\begin{pmatrix} 3 \\ -1 \end{pmatrix}}", True),
        (r"\begin{pmatrix} 3 \\ -1 \end{pmatrix}", r"\boxed{\begin{bmatrix} 6/2 \\ -1 \end{bmatrix}}", True),
        (r"\begin{pmatrix} 0 & 1 \\ 1 & 0 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 1 \\ 1 & 1 \end{pmatrix} - \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}}", True),
        (r"\begin{pmatrix} \sqrt{2} & 0 \\ 0 & 1 \end{pmatrix}", r"\boxed{\begin{pmatrix} \sqrt{8}/2 & 0 \\ 0 & 1 \end{pmatrix}}", True),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 3 \\ 2 & 4 \end{pmatrix}}", False),
        (r"\begin{pmatrix} 2 & 2 \\ 3 & 5 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} - \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}}", False),
        (r"\begin{pmatrix} 7 & 10 \\ 15 & 22 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 4 \\ 9 & 16 \end{pmatrix}}", False),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{pmatrix} 1 & 2 & 0 \\ 3 & 4 & 0 \end{pmatrix}}", False),
        (r"\begin{pmatrix} 3 \\ -1 \end{pmatrix}", r"\boxed{\begin{pmatrix} -1 \\ 3 \end{pmatrix}}", False),
        (r"\begin{pmatrix} 2 & 4 \\ 6 & 8 \end{pmatrix}", r"\boxed{3\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}", False),
        (r"\begin{pmatrix} \frac{1}{2} & 0 \\ 0 & 1 \end{pmatrix}", r"\boxed{\begin{pmatrix} 0.51 & 0 \\ 0 & 1 \end{pmatrix}}", False),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"So the matrix is $\begin{pmatrix} 1 & 2 \\ 4 & 3 \end{pmatrix}$.", False),
    ],
    "several_answers": [
        (r"\{2, 5\}", r"So $x = \boxed{2}$ and $x = \boxed{5}$.", True),
        ("2, 5", r"\boxed{5} and \boxed{2}", True),
        ("2, 5", r"\boxed{2}, \boxed{5}", True),
        ("-3, 3", r"The solutions are $\boxed{-3}$ or $\boxed{3}$.", True),
        ("(1,4), (4,1)", r"\boxed{(4,1), (1,4)}", True),
        ("(1,4), (4,1)", r"\boxed{(1,4) \text{ and } (4,1)}", True),
        ("(1,4), (4,1)", r"\boxed{(4,1) and (1,4)}", True),
        ("3, 8", r"\boxed{a = 3, b = 8}", True),
        ("(2,9)", r"\boxed{(m,n) = (2,9)}", True),
        ("5:12", r"\boxed{P:Q = 5:12}", True),
        ("4", r"\boxed{f(x) = 4}", True),
        ("4", r"\boxed{|CD| = 4}", True),
        ("1, 2, 3", r"\boxed{3}, \boxed{1}, and \boxed{2}", True),
        ("2, 5", r"\boxed{2}, \boxed{6}", False),
        ("(1,4), (4,1)", r"\boxed{(1,4), (1,4)}", False),
        ("3, 8", r"\boxed{a = 3, b = 9}", False),
        ("(2,9)", r"\boxed{(m,n) = (9,2)}", False),
        ("5:12", r"\boxed{12:5}", False),
        ("4", r"\boxed{|CD| = 5}", False),
        ("-3, 3", r"The solutions are $\boxed{-3}$ or $\boxed{4}$.", False),
        ("1, 2, 3", r"\boxed{3}, \boxed{1}, and \boxed{4}", False),
        (r"\{2, 5\}", r"We first get \boxed{2}, then after checking the constraint, \boxed{5}.", False),
    ],
    "decimals": [
        (r"\frac{3}{7}", r"\boxed{0.4286}", True),
        (r"\frac{3}{7}", r"\boxed{0.4285}", True),
        (r"\frac{3}{7}", r"\boxed{0.429}", True),
        (r"\frac{2}{3}", r"\boxed{0.667}", True),
        (r"\frac{2}{3}", r"\boxed{0.666}", True),
        (r"\sqrt{2}", r"\boxed{1.414}", True),
        (r"\sqrt{2}", r"\boxed{1.4142}", True),
        (r"\pi", r"\boxed{3.14}", True),
        (r"-\frac{1}{3}", r"\boxed{-0.333}", True),
        (r"(\frac{1}{4}, \frac{5}{3}]", r"\boxed{(0.25, 1.6667]}", True),
        ("0.125", r"\boxed{\frac{1}{8}}", True),
        ("3", r"\boxed{3.000}", True),
        (r"\frac{3}{7}", r"\boxed{0.43}", False),
        (r"\frac{3}{7}", r"\boxed{0.4287}", False),
        (r"\frac{2}{3}", r"\boxed{0.668}", False),
        (r"\sqrt{2}", r"\boxed{1.415}", False),
        (r"\pi", r"\boxed{3.1}", False),
        (r"(\frac{1}{4}, \frac{5}{3}]", r"\boxed{(0.25, 1.6667)}", False),
        ("3", r"\boxed{2.999}", False),
        ("12.75", r"\boxed{12.8}", False),
        (r"e", r"\boxed{2.718}", True),
        (r"e", r"\boxed{2.719}", False),
    ],
    "delimiters": [
        ("17", r"The result is \(17\)", True),
        ("17", "We conclude\n\\[\n17\n\\]", True),
        (r"\frac{1}{2}", "Therefore\n$$\n\\frac{1}{2}\n$$", True),
        (r"\frac{1}{2}", "so the probability is $\\frac{1}{2}$", True),
        ("17", "Final Answer: the largest k is 17.", True),
        ("x^2 + 1", "Expanding, we get $x = 3$ and then $f(x) = x^2 + 1$", True),
        ("42", "First we add 20 and 20 to get 40.\nThen we add 2 more.\nSo in total we have $42$.", True),
        ("9", "Final Answer: The final answer is $9$. I hope it is correct.", True),
        (r"\sqrt{3}", "The side length works out to be\n\\[\n\\sqrt{3}\n\\]", True),
        ("6", "Answer: the number of ways is 6", True),
        ("-4", "Combining the terms gives \\(-4\\)", True),
        ("17", "Final Answer: the largest k is 18.", False),
        ("42", "First we add 20 and 20 to get 40.\nThen we add 2 more.\nSo in total we have $43$.", False),
        ("17", r"The result is \(71\)", False),
        (r"\frac{1}{2}", "Therefore\n$$\n\\frac{1}{3}\n$$", False),
        ("9", "Final Answer: The final answer is $8$. I hope it is correct.", False),
        (r"\sqrt{3}", "The side length works out to be\n\\[\n\\sqrt{2}\n\\]", False),
        ("6", "Answer: the number of ways is 7", False),
        ("-4", "Combining the terms gives \\(4\\)", False),
        ("x^2 + 1", "Expanding, we get $f(x) = x^2 + 2$", False),
        ("12", "$3 \\times 4$ is what we start with, and the total comes to 13", False),
    ],
    "text_symbols": [
        (r"\text{(B)}", r"\boxed{B}", True),
        (r"\text{(B)}", r"\boxed{\textbf{(B)}}", True),
        (r"\text{Tuesday}", r"\boxed{\text{tuesday}}", True),
        ("19, 46, and 82", r"\boxed{19, 46, \text{ and } 82}", True),
        ("19, 46, and 82", r"\boxed{19, 82, \text{and } 46}", True),
        ("10:30", r"\boxed{10:30}", True),
        ("a + b", r"\boxed{b + a}", True),
        (r"10^{10^{10}} + 1", r"\boxed{1 + 10^{10^{10}}}", True),
        (r"2 \cdot 10^{10^{10}}", r"\boxed{10^{10^{10}} \cdot 2}", True),
        (r"\text{no solution}", r"\boxed{\text{No solution}}", True),
        ("2xy", r"\boxed{2yx}", True),
        (r"\text{(B)}", r"\boxed{(C)}", False),
        (r"\text{Tuesday}", r"\boxed{\text{Wednesday}}", False),
        ("19, 46, and 82", r"\boxed{19, 46, \text{ and } 83}", False),
        ("10:30", r"\boxed{10:45}", False),
        ("10:30", r"\boxed{1:3}", False),
        (r"10^{10^{10}} + 1", r"\boxed{2 + 10^{10^{10}}}", False),
        ("a + b", r"\boxed{a - b}", False),
        (r"\text{no solution}", r"\boxed{0}", False),
        (r"2 \cdot 10^{10^{10}}", r"\boxed{10^{10^{10}} \cdot 3}", False),
        ("2xy", r"\boxed{2x}", False),
    ],
    "variable_names": [
        ("g(s)", r"\boxed{g(t)}", False),
        ("x^2 + 1", r"\boxed{t^2 + 1}", False),
        ("x^2 + y", r"\boxed{b + a^2}", False),
        ("3n + 1", r"\boxed{3k + 1}", False),
        (r"\frac{a}{b}", r"\boxed{\frac{p}{q}}", False),
        ("2m", r"\boxed{2n}", False),
        (r"\sin(\theta)", r"\boxed{\sin(x)}", False),
        (r"y = 2x + 1", r"\boxed{y = 2t + 1}", False),
        ("(a, b)", r"\boxed{(x, y)}", False),
        ("x + y", r"\boxed{2t}", False),
        ("x^2 + 1", r"\boxed{1 + x^2}", True),
        ("g(s)", r"\boxed{g(s)}", True),
        ("3n + 1", r"\boxed{1 + 3n}", True),
        (r"\frac{a}{b}", r"\boxed{a/b}", True),
        ("2m", r"\boxed{m + m}", True),
        (r"\sin(\theta)", r"\boxed{\sin \theta}", True),
        (r"y = 2x + 1", r"\boxed{y = 1 + 2x}", True),
        ("(a, b)", r"\boxed{(a, b)}", True),
        ("x + y", r"\boxed{y + x}", True),
        (r"x^2 - y^2", r"\boxed{(x - y)(x + y)}", True),
    ],
    "must_differ": [
        ("(4,2)", r"\boxed{\{2,4\}}", False),
        (r"\{2,4\}", r"\boxed{(4,2)}", False),
        (r"\{2,4\}", r"\boxed{(2,4)}", False),
        (r"\frac{1}{2^{99}}", r"\boxed{\frac{1}{2^{98}}}", False),
        (r"\frac{1}{2004!}", r"\boxed{\frac{1}{2006!}}", False),
        ("[1, 2)", r"\boxed{[1, 2]}", False),
        ("[1, 2)", r"\boxed{(1, 2)}", False),
        ("(1, 2]", r"\boxed{[1, 2]}", False),
        ("(1,2,3)", r"\boxed{\{1,2,3\}}", False),
        (r"\frac{1}{3^{50}}", r"\boxed{\frac{1}{3^{51}}}", False),
        ("1000000", r"\boxed{1000001}", False),
        (r"\frac{1}{1000!}", r"\boxed{\frac{1}{1001!}}", False),
        ("(1, 2)", r"\boxed{(2, 1)}", False),
        ("[0, 1]", r"\boxed{(0, 1)}", False),
        (r"\frac{1}{7}", r"\boxed{0.14}", False),
        ("(4,2)", r"\boxed{(4,2)}", True),
        (r"\{2,4\}", r"\boxed{\{4,2\}}", True),
        ("[1, 2)", r"\boxed{[1, 2)}", True),
        (r"\frac{1}{2^{99}}", r"\boxed{2^{-99}}", True),
        (r"\frac{1}{7}", r"\boxed{0.142857}", True),
    ],
}
for category, rows in HAND.items():
    for gold, pred, expected in rows:
        add(category, gold, pred, expected)

out = pathlib.Path(__file__).resolve().parent.parent / "data" / "math_pairs.jsonl"
out.write_text("".join(json.dumps(p) + "\n" for p in pairs))
print(f"wrote {len(pairs)} pairs to {out}")

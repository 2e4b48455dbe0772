#!/usr/bin/env python3
"""Math-Verify's own test suite, run unmodified against ``grpo_rewards.math_verify``.

    python3 grpo-py/bench/math_verify_suite.py [--wheel PATH] [--dump cases.jsonl]
                                               [--verdicts ours.jsonl]

1. downloads the sdist of ``math-verify==0.9.0`` with pip at run time (its tests ship in it)
   into ``target/math-verify-suite/`` and makes a venv there with it, pytest, and this
   package (``--wheel PATH`` installs a wheel already built; otherwise ``pip install
   ./grpo-py`` builds one, in release mode);
2. runs pytest on the sdist's ``tests/`` with a plugin that swaps ``math_verify.parse`` and
   ``math_verify.verify`` for ours before the test modules import them, keeps every case
   that compares a gold with a prediction (parameters ``gold`` and ``pred``), and records
   each case's outcome; the test files are not changed;
3. prints the agreement with the suite's expectations, the false positives (we say equal
   where the suite expects unequal), and the agreement after our adjudication: the cases in
   ``ADJUDICATED`` below are those where we believe the suite's expectation is wrong, each
   with the reason; for them the expectation is inverted.

``--dump FILE`` only collects the cases (no package of ours needed) and writes one JSON object
per case (``id``, ``gold``, ``pred``, ``expected``, ``strict``); ``--verdicts FILE`` scores
verdicts that another checker wrote for those cases (one ``{"id", "correct"}`` per line, as
``cargo run --release -p grpo-rewards --example check_pairs --`` prints them)
instead of running the suite.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORK = ROOT / "target" / "math-verify-suite"
VENV = WORK / "venv"
VERSION = "0.9.0"

# Cases where we believe the suite's expectation is wrong, by test id, with the reason.
ADJUDICATED = {
    "tests/test_yujianll.py::test_string_extraction[$1 - \\\\frac{1}{\\\\mathrm{e}}$-$1 + \\\\frac{1}{\\\\mathrm{e}}$-1]":
        "1 - 1/e (0.632) and 1 + 1/e (1.368) are different numbers; the suite expects them equal",
    "tests/test_all.py::test_latex_notation[$9$-Answer $ \\n 9 \\n $-0]":
        "the answer 9 inside $...$ is 9 whether or not the span has line breaks; the suite "
        "expects the span refused",
    "tests/test_all.py::test_latex_notation[$9$-Answer \\\\( \\n 9 \\n \\\\)-0]":
        "the same answer inside \\(...\\) with line breaks: 9 is 9",
    "tests/test_all.py::test_set_rel_assymetry[$x \\\\in [-2,7]$-$-2 \\\\\\\\le x \\\\\\\\le 7$-0-False]":
        "x in [-2,7] and -2 <= x <= 7 are the same set; the suite's own cases with the option on, "
        "and with the sides swapped, expect them equal: the False here tests an option of "
        "Math-Verify, not the mathematics",
}


def ensure_venv(wheel):
    py = VENV / "bin" / "python"
    if pathlib.Path(sys.prefix).resolve() == VENV.resolve():
        return
    WORK.mkdir(parents=True, exist_ok=True)
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "pytest",
                        f"math-verify[antlr4_13_2]=={VERSION}"], check=True)
    if wheel:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--force-reinstall",
                        "--no-deps", wheel], check=True)
    elif "--dump" not in sys.argv and "--verdicts" not in sys.argv:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--force-reinstall",
                        str(ROOT / "grpo-py")], check=True)
    args = [a for a in sys.argv[1:]]
    if "--wheel" in args:
        k = args.index("--wheel")
        del args[k:k + 2]
    os.execv(str(py), [str(py), __file__, *args])


def sdist_tests():
    src = WORK / f"math_verify-{VERSION}"
    if not (src / "tests").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"math-verify=={VERSION}", "-d", str(WORK)],
                       check=True)
        with tarfile.open(WORK / f"math_verify-{VERSION}.tar.gz") as tar:
            tar.extractall(WORK, filter="data")
    return src


class Cases:
    """The pytest plugin: swaps in our functions, keeps the gold/prediction cases, records."""

    def __init__(self, run):
        self.run = run
        self.cases = {}
        self.outcomes = {}

    def pytest_configure(self, config):
        if not self.run:
            return
        import math_verify
        from grpo_rewards import math_verify as ours

        math_verify.parse = ours.parse
        math_verify.verify = ours.verify

    def pytest_collection_modifyitems(self, session, config, items):
        kept = []
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            if "gold" in params and "pred" in params:
                expected = params.get("expected", params.get("result"))
                self.cases[item.nodeid] = {
                    "id": item.nodeid,
                    "gold": params["gold"],
                    "pred": params["pred"],
                    "expected": bool(expected),
                    "strict": params.get("strict", True),
                }
                kept.append(item)
        items[:] = kept

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.outcomes[report.nodeid] = report.passed


def summarise(cases, correct_of):
    """Prints agreement, false positives and the adjudicated agreement."""
    n = len(cases)
    agree = fp = adj_agree = 0
    misses = []
    for c in cases:
        got = correct_of(c)
        want = c["expected"]
        agree += got == want
        fp += got and not want
        adjudicated = not want if c["id"] in ADJUDICATED else want
        adj_agree += got == adjudicated
        if got != adjudicated:
            misses.append((c["id"], got))
    adj_fp = sum(1 for c in cases if correct_of(c) and not (
        (not c["expected"]) if c["id"] in ADJUDICATED else c["expected"]))
    print(f"{n} cases of Math-Verify {VERSION}'s suite")
    print(f"agreement with the suite's expectations: {agree}/{n} ({100 * agree / n:.1f}%), "
          f"{fp} false positives")
    print(f"after adjudicating {len(ADJUDICATED)} expectations as wrong: "
          f"{adj_agree}/{n} ({100 * adj_agree / n:.1f}%), {adj_fp} false positives")
    for case_id, reason in ADJUDICATED.items():
        print(f"  adjudicated: {case_id}\n    {reason}")
    for case_id, got in misses:
        print(f"  disagree (we say {'equal' if got else 'unequal'}): {case_id}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel")
    ap.add_argument("--dump")
    ap.add_argument("--verdicts")
    args = ap.parse_args()
    ensure_venv(args.wheel)
    import pytest

    src = sdist_tests()
    offline = bool(args.dump or args.verdicts)
    plugin = Cases(run=not offline)
    os.chdir(src)
    sys.path.insert(0, str(src))  # as `python -m pytest` does: the tests import `tests.test_all`
    pytest_args = ["-q", "-p", "no:cacheprovider", "tests"]
    if offline:
        pytest_args.insert(0, "--collect-only")
    pytest.main(pytest_args, plugins=[plugin])
    cases = list(plugin.cases.values())
    missing = [i for i in ADJUDICATED if i not in plugin.cases]
    if missing:
        sys.exit(f"adjudicated cases not in the suite: {missing}")
    if args.dump:
        with open(args.dump, "w") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
        print(f"wrote {len(cases)} cases to {args.dump}")
        return
    if args.verdicts:
        verdicts = {}
        for line in pathlib.Path(args.verdicts).read_text().splitlines():
            if line.strip():
                v = json.loads(line)
                verdicts[v["id"]] = bool(v["correct"])
        summarise(cases, lambda c: verdicts.get(c["id"], False))
        return
    # A passed case is one where our verdict is the suite's expectation.
    summarise(cases, lambda c: c["expected"] == plugin.outcomes.get(c["id"], False))


if __name__ == "__main__":
    main()

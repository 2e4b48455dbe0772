"""Math checks: single, batch, the Math-Verify-shaped module, options and bad input."""
import pytest

import grpo_rewards
from grpo_rewards import check_math, check_math_batch
from grpo_rewards.math_verify import parse, verify


def test_check_math_reports_answer_and_verdict():
    r = check_math("\\frac{1}{2}", "So the probability is $\\boxed{0.5}$.")
    assert r.correct and r.extracted == "0.5" and r.kind == "correct"
    assert "equivalent" in r.reason
    wrong = check_math("1/2", "\\boxed{1/3}")
    assert not wrong.correct and wrong.kind == "wrong_answer" and wrong.extracted == "1/3"
    none = check_math("7", "I could not solve it.")
    assert not none.correct and none.kind == "no_answer" and none.extracted is None
    assert "MathResult(correct=False" in repr(wrong)


@pytest.mark.parametrize(
    "gold, pred, expected",
    [
        # Near misses a float comparison gets wrong: exact arithmetic keeps them apart.
        ("1/2^{99}", "\\boxed{1/2^{98}}", False),
        ("10000000000000001", "\\boxed{10000000000000000}", False),
        ("\\frac{1}{3}", "\\boxed{0.3333333}", True),
        ("(4,2)", "\\boxed{\\{2,4\\}}", False),
        ("\\{2,4\\}", "\\boxed{\\{4,2\\}}", True),
        ("(2,9)", "\\boxed{(m,n) = (2,9)}", True),
        ("[1, 3)", "\\boxed{[1,3]}", False),
        ("\\sqrt{2}/2", "\\boxed{\\frac{1}{\\sqrt{2}}}", True),
        ("x^2+2x+1", "\\boxed{(x+1)^2}", True),
        ("x^2+2x+1", "\\boxed{(x+1)^2 + 10^{-12}}", False),
    ],
)
def test_near_misses(gold, pred, expected):
    assert check_math(gold, pred).correct is expected


def test_every_benchmark_pair_gets_its_constructed_verdict(math_pairs):
    pairs = [(p["gold"], p["pred"]) for p in math_pairs]
    results = check_math_batch(pairs)
    wrong = [(p, r) for p, r in zip(math_pairs, results) if r.correct != p["expected"]]
    assert not wrong, wrong[:5]
    # The batch and the single call agree, pair by pair.
    for p, r in zip(math_pairs[::25], results[::25]):
        single = check_math(p["gold"], p["pred"])
        assert (single.correct, single.extracted, single.kind) == (r.correct, r.extracted, r.kind)


def test_batch_keeps_input_order_on_any_thread_count():
    pairs = [(str(i), f"\\boxed{{{i if i % 3 else i + 1}}}") for i in range(500)]
    expected = [i % 3 != 0 for i in range(500)]
    for threads in (1, 2, 7):
        assert [r.correct for r in check_math_batch(pairs, threads=threads)] == expected
    assert check_math_batch([]) == []


def test_math_verify_module_is_a_drop_in(math_pairs):
    assert verify(parse("$\\frac{1}{2}$"), parse("The answer is $\\boxed{0.5}$."))
    assert not verify(parse("1/2^{99}"), parse("\\boxed{1/2^{98}}"))
    assert parse("no answer here at all, none") == []
    assert not verify(parse("5"), [])
    assert verify("5", "5.0")
    # Math-Verify's own parse results are [sympy_expr, text]: the text is used.
    assert verify([object(), "3/4"], ["0.75"])
    near = [p for p in math_pairs if p["category"] in ("near_miss", "must_differ")]
    assert len(near) >= 30
    for p in near:
        assert verify(parse(p["gold"]), parse(p["pred"])) is p["expected"], p


def test_verify_reads_both_sides_as_check_math_does():
    # A reference that boxes two parts, against a prediction that lists them: parse finds the
    # last box as a prediction's answer, verify reads the reference from its source.
    gold = parse("\\boxed{6} chairs and \\boxed{3} tables")
    assert gold == ["3"] and gold.source.startswith("\\boxed")
    assert verify(gold, parse("$\\boxed{6, 3}$"))
    # A multi-part prediction: its boxes joined by a short phrase answer a listed reference.
    assert verify(parse("(2, 5), (4, 1)"), parse("$\\boxed{(2, 5)} \\text{ for part (a) and } \\boxed{(4, 1)}$"))
    assert not verify(parse("(2, 5), (4, 1)"), parse("$\\boxed{(4, 1)}$"))
    # strict=False: variable names may differ, as in Math-Verify.
    assert not verify(parse("$f(x)$"), parse("$f(y)$"))
    assert verify(parse("$f(x)$"), parse("$f(y)$"), strict=False)
    # The same verdict through both interfaces.
    for g, p in [("\\text{4:30 p.m.}", "\\boxed{4:30 \\text{ p.m.}}"), ("9 = 4b + d", "\\boxed{4b + d}")]:
        assert verify(parse(g), parse(p)) is check_math(g, p).correct


def test_options_and_bad_input():
    assert not check_math("5", "<answer>5</answer>", rules=["boxed"]).correct
    assert check_math("5", "\\boxed{5}", rules=["boxed"]).correct
    assert check_math("b", "\\boxed{b}", alternatives=["a"]).correct
    assert check_math("x + 1", "\\boxed{y + 1}", rename_variables=True).correct
    assert not check_math("x + 1", "\\boxed{y + 1}").correct
    with pytest.raises(ValueError, match=r'rules\[1\]: unknown extraction rule "boxxed"; the rules are answer_tag, boxed'):
        check_math("1", "1", rules=["boxed", "boxxed"])
    with pytest.raises(ValueError, match="no extraction rule"):
        check_math("1", "1", rules=[])
    with pytest.raises(ValueError, match="threads"):
        check_math_batch([("1", "1")], threads=0)
    with pytest.raises(TypeError):
        check_math(1, "1")


def test_hostile_inputs_answer_quickly():
    import time

    nasty = [
        ("1", "\\boxed{" + "(" * 100_000 + "}"),
        ("1", "\\boxed{10^{10^{10^{10}}}}"),
        ("1", "\\boxed{100000!}"),
        ("1", "x" * 2_000_000),
        ("1", "\\boxed{" + "\\frac{1}{" * 5000 + "}" * 5000 + "}"),
    ]
    started = time.perf_counter()
    results = check_math_batch(nasty)
    assert all(not r.correct for r in results)
    # A safety net against a hang, not a timing claim.
    assert time.perf_counter() - started < 30


def test_version():
    assert grpo_rewards.__version__.count(".") == 2

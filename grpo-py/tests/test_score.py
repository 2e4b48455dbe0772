"""Task scoring: math, countdown and code through the in-process sandbox, packs, errors."""
import asyncio
import json
import os
import pathlib
import subprocess

import pytest

from grpo_rewards import Pack, RewardFault, score, score_async

ROOT = pathlib.Path(__file__).resolve().parents[2]

STDIO_TASK = {
    "id": "sum-two",
    "kind": "code",
    "prompt": "Read two integers and print their sum.",
    "language": "python",
    "mode": "full",
    "tests": {
        "type": "stdio",
        "cases": [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "-5 5\n", "stdout": "0\n"}],
    },
}

GOOD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
LOOP = "```python\nwhile True:\n    pass\n```"
ESCAPE = "```python\nprint(open('/etc/passwd').read())\n```"


def test_math_and_countdown_tasks():
    math = {"id": "half", "kind": "math", "prompt": "Half of one?", "answer": "1/2"}
    good, bad = score(math, ["<think>1/2</think><answer>0.5</answer>", "\\boxed{1/3}"], format=0.5)
    assert good.correct and good.kind == "correct" and good.tests is None
    assert good.rewards == {"accuracy": 1.0, "format": 1.0} and good.reward == pytest.approx(1.5)
    assert not bad.correct and bad.kind == "wrong_answer" and bad.reward == 0.0
    countdown = {"id": "c", "kind": "countdown", "prompt": "p", "numbers": [94, 24, 52], "target": 66}
    (ok,) = score(json.dumps(countdown), ["<answer>94 + 24 - 52</answer>"])
    assert ok.correct and ok.reward == 1.0


def test_code_task_runs_in_the_sandbox():
    results = score(STDIO_TASK, [GOOD, WRONG, LOOP, ESCAPE])
    assert [r.correct for r in results] == [True, False, False, False]
    good, wrong, loop, escape = results
    assert [t.passed for t in good.tests] == [True, True]
    assert wrong.kind == "tests_failed" and wrong.tests[0].status == "ok" and not wrong.tests[0].passed
    assert loop.kind == "timeout" and loop.tests[0].status == "timeout"
    # No host files inside the sandbox: the read fails in the program, not on the host.
    assert escape.kind != "correct" and "root:" not in escape.reason


def test_async_variant_runs_concurrently():
    async def main():
        return await asyncio.gather(*(score_async(STDIO_TASK, [GOOD, WRONG]) for _ in range(4)))

    for pair in asyncio.run(main()):
        assert [r.correct for r in pair] == [True, False]


def test_malformed_tasks_raise_value_error_naming_the_field():
    with pytest.raises(ValueError, match=r"task\.tests\.cases\[0\]\.stdout"):
        score({**STDIO_TASK, "tests": {"type": "stdio", "cases": [{"stdin": "1"}]}}, [GOOD])
    with pytest.raises(ValueError, match=r"task\.answer"):
        score({"id": "x", "kind": "math", "prompt": "p"}, ["1"])
    with pytest.raises(ValueError, match="task"):
        score("{not json", ["1"])
    with pytest.raises(ValueError, match="accuracy"):
        score({"id": "x", "kind": "math", "prompt": "p", "answer": "1"}, ["1"], accuracy=-1.0)
    with pytest.raises(TypeError):
        score({"id": "x", "kind": "math", "prompt": "p", "answer": "1"}, "1")
    assert issubclass(RewardFault, RuntimeError)


def test_pack_scores_with_its_own_weights():
    pack = Pack("builtin:python")
    assert pack.name == "python" and len(pack) == len(pack.ids()) > 10
    task_id = pack.ids()[0]
    task = pack.task(task_id)
    assert task["id"] == task_id and task["kind"] == "code"
    reference = "<think>ok</think><answer>\n```python\n" + task["reference"] + "```\n</answer>"
    (scored,) = pack.score(task_id, [reference])
    # The pack's weights: accuracy 1, format 0.1.
    assert scored.correct and scored.reward == pytest.approx(1.1)
    with pytest.raises(ValueError, match="no task"):
        pack.score("no-such-task", ["x"])
    with pytest.raises(ValueError, match="nope"):
        Pack("builtin:nope")


@pytest.mark.skipif("GRPO_BIN" not in os.environ, reason="needs the grpo binary (GRPO_BIN)")
def test_same_results_as_grpo_score(tmp_path):
    pack = Pack("builtin:python")
    lines = []
    for task_id in pack.ids()[:6]:
        ref = pack.task(task_id)["reference"]
        for completion in (f"```python\n{ref}```", "```python\nprint(1)\n```", "no code"):
            lines.append({"task_id": task_id, "completion": completion})
    path = tmp_path / "completions.jsonl"
    path.write_text("".join(json.dumps(l) + "\n" for l in lines))
    out = subprocess.run(
        [os.environ["GRPO_BIN"], "score", "--tasks", "builtin:python", "--completions", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout
    cli = [json.loads(l) for l in out.splitlines()]
    assert len(cli) == len(lines)
    for line, expected in zip(lines, cli):
        (ours,) = pack.score(line["task_id"], [line["completion"]])
        assert ours.reward == expected["reward"]
        assert ours.rewards == expected["rewards"]
        assert ours.correct == expected["correct"]
        assert ours.kind == expected["verdict"]["kind"]


def test_calls_reuse_their_scorer():
    """A `score` call builds nothing but its inputs: the scorer for given weights, and a
    pack's scorer, are built on first use and kept."""
    from grpo_rewards import _native

    math = {"id": "m", "kind": "math", "prompt": "p", "answer": "4"}
    pack = Pack("builtin:arith-digits")
    task_id = pack.ids()[0]
    # First use of each builds one scorer.
    score(math, ["\\boxed{4}"], format=0.25)
    pack.score(task_id, ["\\boxed{4}"])
    built = _native.scorers_built()
    for _ in range(20):
        (r,) = score(math, ["<think>x</think><answer>4</answer>"], format=0.25)
        assert r.reward == pytest.approx(1.25)
        pack.score(task_id, ["\\boxed{4}"])
    assert _native.scorers_built() == built
    # Other weights (no other test uses these) are another scorer, once.
    score(math, ["\\boxed{4}"], format=0.375)
    score(math, ["\\boxed{4}"], format=0.375)
    assert _native.scorers_built() == built + 1

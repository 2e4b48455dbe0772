#!/usr/bin/env python3
"""tinker-cookbook's own classes (PyPI `tinker-cookbook==0.5.8`, unmodified) drive
`grpo_rewards.tinker_env`: `PackDatasetBuilder` builds `RLDataset`s from builtin:arith and
builtin:python; a group builder's envs, given a right and a wrong completion's tokens through
`initial_observation`/`step`, give the rewards `grpo score --tasks PACK` gives the same
completions; the cookbook's `do_group_rollout` gives the same totals with the rewards in
`step` and, with `score_in_group`, in `compute_group_rewards`; the group builder pickles; chz
builds the builder from command-line fields as the cookbook's recipes do; bad fields are errors
naming the field.

    python3 scripts/tinker_env_check.py TOKENIZER_DIR MODEL_DIR   # run by tinker_env_check.sh

TOKENIZER_DIR holds the project's tiny tokenizer (`tokenizer.json`, `tokenizer_config.json`
from a `grpo train --preset tools` run: every printable ASCII character a token); MODEL_DIR is
that run's `final/` (the same files beside the model's `config.json`), which the builder takes
exactly when transformers loads a tokenizer from it that gives back the text it encodes. The
completion tokens are what the cookbook's renderer trains the model to emit for that message
(`build_supervised_example`, its trained tokens). The `grpo` binary: `$GRPO_BIN`, else
target/debug/grpo, else target/release/grpo.

Provenance: torch comes from another environment (see tinker_env_check.sh); every other module
outside the standard library must load from this venv's site-packages, which the check asserts
before anything else, so the cookbook code under test is the PyPI release as installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import chz
from tinker_cookbook.completers import TokenCompleter, TokensWithLogprobs
from tinker_cookbook.rl.rollouts import do_group_rollout
from tinker_cookbook.rl.types import Env, EnvGroupBuilder, RLDataset, RLDatasetBuilder

from grpo_rewards import Pack
from grpo_rewards.tinker_env import PackDatasetBuilder, PackEnv

ROOT = Path(__file__).resolve().parent.parent
HERE_SITE = tuple(os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib"))
STDLIB = tuple(os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib"))


def where(module) -> str:
    # Not resolved: a module loaded through the torch directory's links keeps that path.
    return os.path.abspath(getattr(module, "__file__", None) or "")


def check_provenance() -> str:
    """torch (and what torch itself requires) from the directory the venv's `.pth` names;
    every other module outside the standard library from this venv's site-packages."""
    import tinker
    import tinker_cookbook
    import tinker_cookbook.rl.types  # noqa: F401  (imports torch through its renderers)
    import torch
    import transformers

    import grpo_rewards.tinker_env

    torch_site = os.path.dirname(os.path.dirname(where(torch))) + os.sep
    assert not torch_site.startswith(HERE_SITE), f"torch is this venv's own: {torch_site}"
    assert float(torch.tensor([1.5, 2.5]).sum()) == 4.0
    for module in (tinker_cookbook, tinker, transformers, grpo_rewards.tinker_env):
        assert where(module).startswith(HERE_SITE), f"{module.__name__} from {where(module)}"
    borrowed, stray = set(), {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        # torch.ops and torch.classes name placeholder files ("_ops.py"): no file was loaded.
        if not isinstance(file, str) or not os.path.isabs(file) or name in ("__main__", "__mp_main__"):
            continue
        path = where(module)
        if path.startswith(HERE_SITE) or path.startswith(STDLIB):
            continue
        if path.startswith(torch_site):
            borrowed.add(name.split(".")[0])
        else:
            stray[name] = path
    assert not stray, f"modules from neither this venv nor the torch directory: {stray}"
    return f"torch {torch.__version__} from {torch_site} (with {', '.join(sorted(borrowed - {'torch'}))})"


def grpo_binary() -> str:
    for candidate in (os.environ.get("GRPO_BIN"), ROOT / "target/debug/grpo", ROOT / "target/release/grpo"):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    raise SystemExit("no grpo binary: set GRPO_BIN or build target/debug/grpo")


def grpo_score(pack: str, lines: list[tuple[str, str]]) -> list[dict]:
    """`grpo score --tasks PACK` on (task_id, completion) pairs."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in lines))
    try:
        out = subprocess.run(
            [grpo_binary(), "score", "--tasks", pack, "--completions", f.name],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        os.unlink(f.name)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def action_tokens(renderer, prompt: str, completion: str) -> list[int]:
    """The tokens the renderer trains a model to emit for `completion` after `prompt`."""
    messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": completion}]
    model_input, weights = renderer.build_supervised_example(messages)
    tokens = model_input.to_ints()
    trained = [t for t, w in zip(tokens, weights.tolist()) if w > 0]
    assert trained, "the renderer trains no token of the assistant message"
    return trained


class Scripted(TokenCompleter):
    """A token policy answering with `completions` in turn, through the cookbook's
    `TokenCompleter` interface (a model would sample these tokens)."""

    def __init__(self, renderer, prompt: str, completions: list[str]):
        self._tokens = [action_tokens(renderer, prompt, c) for c in completions]
        self._next = 0

    async def __call__(self, model_input, stop, *, max_tokens=None):
        tokens = self._tokens[self._next % len(self._tokens)]
        self._next += 1
        return TokensWithLogprobs(tokens=tokens, maybe_logprobs=[0.0] * len(tokens), stop_reason="stop")


async def check_pack(tokenizer_dir: str, spec: str, right: str, wrong: str) -> str:
    pack = Pack(spec)
    group_size = 3
    builder = PackDatasetBuilder(
        pack=spec,
        batch_size=2,
        group_size=group_size,
        model_name_for_tokenizer=tokenizer_dir,
        renderer_name="role_colon",
        seed=None,
        test_pack=spec,
    )
    assert isinstance(builder, RLDatasetBuilder)
    train, test = await builder()
    assert isinstance(train, RLDataset) and isinstance(test, RLDataset)
    assert len(train) == len(pack) // 2, (len(train), len(pack))
    batch = train.get_batch(0)
    assert len(batch) == 2 and all(isinstance(g, EnvGroupBuilder) for g in batch)
    group = batch[0]
    task_id = pack.ids()[0]
    task = pack.task(task_id)
    assert group.task_id == task_id, group.task_id
    assert group.logging_tags() == [pack.name]
    copy = pickle.loads(pickle.dumps(group))
    assert copy.task_id == task_id and copy.pack.name == pack.name

    right, wrong = right.format(**task), wrong.format(**task)
    completions = [right, wrong, right]
    expected = {line_c: line for line_c, line in zip(completions, grpo_score(spec, [(task_id, c) for c in completions]))}
    assert expected[right]["correct"] and not expected[wrong]["correct"], expected

    envs = await group.make_envs()
    assert len(envs) == group_size and all(isinstance(e, Env) and isinstance(e, PackEnv) for e in envs)
    renderer = envs[0].renderer
    tokenizer = renderer.tokenizer
    for completion in (right, wrong):
        text = tokenizer.decode(tokenizer.encode(completion, add_special_tokens=False))
        assert text == completion, f"the tokenizer does not round-trip {completion!r}: {text!r}"
    for env, completion in zip(envs, completions):
        observation, stop = await env.initial_observation()
        shown = tokenizer.decode(observation.to_ints())
        assert task["prompt"].splitlines()[0][:40] in shown and shown.endswith("Assistant:"), shown
        assert stop == ["\n\nUser:"], stop
        result = await env.step(action_tokens(renderer, task["prompt"], completion))
        want = expected[completion]
        assert env.completion == completion, (env.completion, completion)
        assert result.episode_done and result.next_observation.length == 0
        assert result.reward == want["reward"], (result.reward, want)
        assert result.metrics["correct"] == float(want["correct"]), (result.metrics, want)
        assert result.metrics["parse/clean"] == 1.0, result.metrics
        for name, value in want["rewards"].items():
            assert result.metrics[f"reward/{name}"] == value, (result.metrics, want)
        assert result.logs["verdict"] == want["verdict"]["kind"], (result.logs, want)
    try:
        await envs[0].step(action_tokens(renderer, task["prompt"], right))
    except RuntimeError as e:
        assert "stepped twice" in str(e), e
    else:
        raise AssertionError("a second step was accepted")
    step_rewards = [expected[c]["reward"] for c in completions]

    # The cookbook's own group rollout, both ways of giving the reward.
    totals = {}
    for in_group in (False, True):
        grouped = PackDatasetBuilder(
            pack=spec,
            batch_size=2,
            group_size=group_size,
            model_name_for_tokenizer=tokenizer_dir,
            renderer_name="role_colon",
            seed=None,
            score_in_group=in_group,
        )
        dataset, none = await grouped()
        assert none is None
        trajectories = await do_group_rollout(dataset.get_batch(0)[0], Scripted(renderer, task["prompt"], completions))
        got = []
        for trajectory, total, final, metrics in zip(
            trajectories.trajectories_G,
            trajectories.get_total_rewards(),
            trajectories.final_rewards_G,
            trajectories.metrics_G,
        ):
            (transition,) = trajectory.transitions
            message, _ = renderer.parse_response(transition.ac.tokens)
            want = expected[message["content"]]
            assert total == want["reward"], (in_group, total, want)
            assert (transition.reward, final) == ((0.0, want["reward"]) if in_group else (want["reward"], 0.0))
            if in_group:
                assert metrics["correct"] == float(want["correct"]), metrics
            got.append(total)
        totals[in_group] = sorted(got)
    assert totals[False] == totals[True] == sorted(step_rewards), totals
    return f"{spec}: step rewards {step_rewards} equal grpo score's; group rollout totals equal, in step and in group"


async def check_errors(tokenizer_dir: str, model_dir: str) -> None:
    base = dict(pack="builtin:arith", batch_size=2, group_size=2, model_name_for_tokenizer=tokenizer_dir,
                renderer_name="role_colon")
    for change, needle in (
        ({"batch_size": 0}, "batch_size"),
        ({"group_size": -1}, "group_size"),
        ({"pack": "builtin:no-such-pack"}, "pack:"),
        ({"test_pack": "builtin:no-such-pack"}, "test_pack:"),
        ({"pack": "builtin:python", "batch_size": 10_000}, "batch_size"),
    ):
        try:
            await PackDatasetBuilder(**{**base, **change})()
        except ValueError as e:
            assert str(e).startswith(needle), (change, e)
        else:
            raise AssertionError(f"{change} was accepted")
    # The run's final/ directory: its config.json (model_type llama) and a tokenizer_config.json
    # without tokenizer_class make transformers choose a class of its own. The builder must
    # accept it exactly when that tokenizer gives back the text it encodes.
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    probe = "<think>1 + 2 = 3</think>\n<answer>3</answer>"
    loaded = get_tokenizer(model_dir)
    faithful = loaded.decode(loaded.encode(probe, add_special_tokens=False)) == probe
    try:
        await PackDatasetBuilder(**{**base, "model_name_for_tokenizer": model_dir})()
        refused = None
    except ValueError as e:
        refused = str(e)
    assert (refused is None) == faithful, (faithful, refused)
    assert refused is None or refused.startswith("model_name_for_tokenizer:"), refused
    print(f"a model directory's tokenizer ({type(loaded).__name__}): {'accepted' if faithful else 'refused'}")
    # The cookbook's recipes take their builder's fields from the command line through chz.
    argv = [f"{k}={v}" for k, v in base.items()] + ["score_in_group=True", "seed=None"]
    from_cli = chz.Blueprint(PackDatasetBuilder).make_from_argv(argv)
    assert from_cli == PackDatasetBuilder(**base, score_in_group=True, seed=None), from_cli
    train, _ = await PackDatasetBuilder(**base)()
    try:
        train.get_batch(len(train))
    except IndexError:
        pass
    else:
        raise AssertionError("a batch past the end was given")


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    tokenizer_dir, model_dir = sys.argv[1:]
    print(check_provenance())
    reports = [
        asyncio.run(check_pack(tokenizer_dir, "builtin:arith",
                               "<think>adding</think><answer>{answer}</answer>",
                               "<think>adding</think><answer>{answer}1</answer>")),
        asyncio.run(check_pack(tokenizer_dir, "builtin:python",
                               "```python\n{reference}\n```",
                               "```python\ndef fizzbuzz(n):\n    return []\n```")),
    ]
    asyncio.run(check_errors(tokenizer_dir, model_dir))
    print("\n".join(reports))
    print("tinker env check: ok")


if __name__ == "__main__":
    main()

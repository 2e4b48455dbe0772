"""tinker-cookbook RL datasets over grpo-rs task packs: ``PackDatasetBuilder`` is an
``RLDatasetBuilder`` (a ``chz`` class, like the cookbook's own recipes) whose datasets hand out
one ``EnvGroupBuilder`` per task of a pack; each of its ``group_size`` envs shows the task's
prompt through the renderer and, in one step, scores the model's answer with the pack's own
``Scorer`` (its ``[rewards]`` weights), exactly as ``grpo score --tasks PACK`` scores it.

    from grpo_rewards.tinker_env import PackDatasetBuilder

    builder = PackDatasetBuilder(pack="builtin:arith", batch_size=8, group_size=4,
                                 model_name_for_tokenizer="Qwen/Qwen3-8B", renderer_name="qwen3")
    train, test = await builder()             # test: the ``test_pack``'s dataset, or None
    group = train.get_batch(0)[0]             # a PackGroupBuilder
    envs = await group.make_envs()

Where the reward is given (``score_in_group``):

- ``False`` (default): each env's ``step`` returns its completion's reward, scored on its own;
  ``compute_group_rewards`` adds 0. Every rollout strategy (retries, minimum viable groups)
  sees each trajectory's reward as soon as it ends.
- ``True``: ``step`` returns 0 and ``compute_group_rewards`` scores the group's completions in
  one ``Scorer`` call (a code task's programs judged together). The totals
  (``TrajectoryGroup.get_total_rewards``) are the same numbers.

What is scored is the assistant message the renderer parses from the sampled tokens, its
thinking (for renderers that split it off) restored as ``<think>…</think>``: the completion
without the renderer's turn delimiters. The step's ``metrics`` carry ``correct``, the reward's
components (``reward/accuracy``, ``reward/format``) and ``parse/clean`` (whether the response
ended with a stop sequence or EOS); its ``logs`` the verdict and its reason. A task that
cannot be scored (a fault of the sandbox) raises: it is never a reward.

``model_name_for_tokenizer`` goes to the cookbook's ``get_tokenizer``: a hub id, a name given
to ``register_tokenizer``, or a local directory. A directory holding only ``tokenizer.json``
and ``tokenizer_config.json`` loads exactly as written; next to a model's ``config.json``
without a ``tokenizer_class``, transformers picks the model's tokenizer class instead, which
may not give back the text it encodes: a tokenizer that does not round-trip the answer format
is refused (a ``ValueError`` naming the field), never a silently different reward.

Requires ``tinker-cookbook`` and what its RL types import (torch among them).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import chz
import tinker
from tinker_cookbook import renderers
from tinker_cookbook.completers import StopCondition
from tinker_cookbook.rl.types import (
    Action,
    ActionExtra,
    Env,
    EnvGroupBuilder,
    Metrics,
    Observation,
    RLDataset,
    RLDatasetBuilder,
    StepResult,
    Trajectory,
)
from tinker_cookbook.tokenizer_utils import get_tokenizer

from . import Pack, Score


def _metrics(scored: Score) -> Metrics:
    metrics: Metrics = {"correct": float(scored.correct)}
    for name, value in scored.rewards.items():
        metrics[f"reward/{name}"] = float(value)
    return metrics


def _logs(scored: Score) -> dict[str, str | int | float]:
    return {"task_id": scored.task_id, "verdict": scored.kind, "reason": scored.reason}


async def _score(pack: Pack, task_id: str, completions: list[str]) -> list[Score]:
    # The Scorer releases the GIL: a thread of the loop's executor keeps the loop free.
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, pack.score, task_id, completions)


class PackEnv(Env):
    """One task of a pack, answered in one step."""

    def __init__(
        self,
        pack: Pack,
        task: dict[str, Any],
        renderer: renderers.Renderer,
        convo_prefix: Optional[list[renderers.Message]] = None,
        score_in_step: bool = True,
    ) -> None:
        self.pack = pack
        self.task = task
        self.renderer = renderer
        self.convo_prefix = list(convo_prefix or [])
        self.score_in_step = score_in_step
        self.completion: Optional[str] = None
        """The parsed completion, once ``step`` has run (what ``compute_group_rewards`` scores)."""
        self.clean: Optional[bool] = None

    @property
    def task_id(self) -> str:
        return self.task["id"]

    @property
    def stop_condition(self) -> StopCondition:
        return self.renderer.get_stop_sequences()

    def messages(self) -> list[renderers.Message]:
        return self.convo_prefix + [{"role": "user", "content": self.task["prompt"]}]

    async def initial_observation(self) -> tuple[Observation, StopCondition]:
        return self.renderer.build_generation_prompt(self.messages()), self.stop_condition

    async def step(self, action: Action, *, extra: Optional[ActionExtra] = None) -> StepResult:
        if self.completion is not None:
            raise RuntimeError(f"task {self.task_id}: the env was stepped twice (it takes one answer)")
        message, termination = self.renderer.parse_response(action)
        self.completion = renderers.format_content_as_string(message["content"], separator="")
        self.clean = termination.is_clean
        metrics: Metrics = {"parse/clean": float(termination.is_clean)}
        logs: dict[str, str | int | float] = {"task_id": self.task_id}
        reward = 0.0
        if self.score_in_step:
            scored = (await _score(self.pack, self.task_id, [self.completion]))[0]
            reward = scored.reward
            metrics.update(_metrics(scored))
            logs.update(_logs(scored))
        return StepResult(
            reward=reward,
            episode_done=True,
            next_observation=tinker.ModelInput.empty(),
            next_stop_condition=self.stop_condition,
            metrics=metrics,
            logs=logs,
        )


@dataclass(frozen=True)
class PackGroupBuilder(EnvGroupBuilder):
    """``group_size`` envs over one task. Pickles (the pack by its spec, the renderer by name)."""

    pack: Pack
    task_id: str
    renderer: renderers.Renderer
    group_size: int
    score_in_group: bool = False
    convo_prefix: Optional[list[renderers.Message]] = field(default=None)

    async def make_envs(self) -> Sequence[Env]:
        task = self.pack.task(self.task_id)
        return [
            PackEnv(self.pack, task, self.renderer, self.convo_prefix, score_in_step=not self.score_in_group)
            for _ in range(self.group_size)
        ]

    async def compute_group_rewards(
        self, trajectory_group: list[Trajectory], env_group: Sequence[Env]
    ) -> list[tuple[float, Metrics]]:
        if not self.score_in_group:
            return [(0.0, {}) for _ in trajectory_group]
        completions = []
        for env in env_group:
            if not isinstance(env, PackEnv) or env.completion is None:
                raise RuntimeError(f"task {self.task_id}: an env of the group was never stepped")
            completions.append(env.completion)
        scored = await _score(self.pack, self.task_id, completions)
        return [(s.reward, _metrics(s)) for s in scored]

    def logging_tags(self) -> list[str]:
        return [self.pack.name]


class PackDataset(RLDataset):
    """Batches of ``batch_size`` group builders, one per task, in ``task_ids`` order; a last
    partial batch is left out."""

    def __init__(
        self,
        pack: Pack,
        task_ids: Sequence[str],
        renderer: renderers.Renderer,
        batch_size: int,
        group_size: int,
        score_in_group: bool = False,
        convo_prefix: Optional[list[renderers.Message]] = None,
    ) -> None:
        self.pack = pack
        self.task_ids = list(task_ids)
        self.renderer = renderer
        self.batch_size = batch_size
        self.group_size = group_size
        self.score_in_group = score_in_group
        self.convo_prefix = convo_prefix

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index}: the dataset has {len(self)} batches")
        start = index * self.batch_size
        return [
            PackGroupBuilder(
                pack=self.pack,
                task_id=task_id,
                renderer=self.renderer,
                group_size=self.group_size,
                score_in_group=self.score_in_group,
                convo_prefix=self.convo_prefix,
            )
            for task_id in self.task_ids[start : start + self.batch_size]
        ]

    def __len__(self) -> int:
        return len(self.task_ids) // self.batch_size


# The answer format's tags, spaces, digits and signs: text every scored completion is made of.
_PROBE = "<think>1 + 2 = 3</think>\n<answer>3</answer>"


def _check_round_trip(name: str, tokenizer: Any) -> None:
    """A tokenizer that does not give back what it encodes would score other text than the
    model wrote: refused, naming the field."""
    back = tokenizer.decode(tokenizer.encode(_PROBE, add_special_tokens=False))
    if back != _PROBE:
        raise ValueError(
            f"model_name_for_tokenizer: the tokenizer of {name!r} does not give back the text it "
            f"encodes ({_PROBE!r} came back as {back!r}); a directory with a model's config.json "
            "and no tokenizer_class in tokenizer_config.json is read as that model's tokenizer "
            "class: give a directory holding only tokenizer.json and tokenizer_config.json"
        )


def _positive(name: str, value: int) -> None:
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")


def _load_pack(name: str, spec: str) -> Pack:
    try:
        return Pack(spec)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from e


@chz.chz
class PackDatasetBuilder(RLDatasetBuilder):
    """The training dataset over ``pack`` (its tasks shuffled with ``seed``, or in file order
    when ``seed`` is None) and, with ``test_pack``, a test dataset over that pack (file order,
    the same group size)."""

    pack: str
    batch_size: int
    group_size: int
    model_name_for_tokenizer: str
    renderer_name: str
    convo_prefix: list[renderers.Message] | None = None
    score_in_group: bool = False
    seed: int | None = 0
    test_pack: str | None = None

    async def __call__(self) -> tuple[PackDataset, PackDataset | None]:
        _positive("batch_size", self.batch_size)
        _positive("group_size", self.group_size)
        train_pack = _load_pack("pack", self.pack)
        test_pack = _load_pack("test_pack", self.test_pack) if self.test_pack is not None else None
        tokenizer = get_tokenizer(self.model_name_for_tokenizer)
        _check_round_trip(self.model_name_for_tokenizer, tokenizer)
        renderer = renderers.get_renderer(self.renderer_name, tokenizer=tokenizer)

        def dataset(pack: Pack, field_name: str, ids: list[str]) -> PackDataset:
            if len(ids) < self.batch_size:
                raise ValueError(
                    f"batch_size: {self.batch_size} is more than the {len(ids)} tasks of {field_name} {pack.name!r}"
                )
            return PackDataset(
                pack,
                ids,
                renderer,
                batch_size=self.batch_size,
                group_size=self.group_size,
                score_in_group=self.score_in_group,
                convo_prefix=self.convo_prefix,
            )

        ids = train_pack.ids()
        if self.seed is not None:
            random.Random(self.seed).shuffle(ids)
        train = dataset(train_pack, "pack", ids)
        test = dataset(test_pack, "test_pack", test_pack.ids()) if test_pack is not None else None
        return train, test

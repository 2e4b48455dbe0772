#!/usr/bin/env python3
"""`grpo serve` as a NeMo Gym resources server, called the way NeMo Gym's agents call one (and
so NeMo RL's rollouts, which run through them): NeMo Gym's `ServerClient`, with the server
named in NeMo Gym's configuration shape, and `math_with_judge`'s request and response models.

    grpo serve &                                  # prints {"listening": "127.0.0.1:PORT"}
    GRPO_URL=http://127.0.0.1:PORT python nemo_gym_resources_server.py

In a NeMo Gym configuration, the same entry (`grpo_math: resources_servers: math_with_judge:
{host, port}`) points an agent's `resources_server` at `grpo serve` instead of a
`math_with_judge` server. Needs `nemo-gym` (with its models' imports; see
scripts/nemo_gym_check.py).
"""

from __future__ import annotations

import asyncio
import os
from urllib.parse import urlsplit

from nemo_gym.base_resources_server import ResourcesCloseSessionRequest, ResourcesSeedSessionRequest
from nemo_gym.config_types import BaseServerConfig
from nemo_gym.episode_types import EpisodeId, TaskId
from nemo_gym.openai_utils import (
    NeMoGymEasyInputMessage,
    NeMoGymResponse,
    NeMoGymResponseCreateParamsNonStreaming,
    NeMoGymResponseOutputMessage,
    NeMoGymResponseOutputText,
)
from nemo_gym.server_utils import ServerClient
from omegaconf import OmegaConf
from resources_servers.math_with_judge.app import LibraryJudgeMathVerifyRequest, LibraryJudgeMathVerifyResponse

URL = urlsplit(os.environ.get("GRPO_URL", "http://127.0.0.1:8000"))
SERVER = {"host": URL.hostname, "port": URL.port}
CLIENT = ServerClient(
    head_server_config=BaseServerConfig(**SERVER),
    global_config_dict=OmegaConf.create({"grpo_math": {"resources_servers": {"math_with_judge": SERVER}}}),
)


def rollout(question: str, answer_text: str, expected: str) -> LibraryJudgeMathVerifyRequest:
    """A finished rollout as an agent hands it to `/verify`: the prompt, the model's response
    and the row's fields."""
    return LibraryJudgeMathVerifyRequest(
        responses_create_params=NeMoGymResponseCreateParamsNonStreaming(
            input=[NeMoGymEasyInputMessage(role="user", content=question)]),
        response=NeMoGymResponse(
            id="resp_1", created_at=0.0, model="policy", object="response", parallel_tool_calls=False,
            tool_choice="auto", tools=[],
            # Every field set, as a model server's JSON has them: the client sends only the
            # fields that were set.
            output=[NeMoGymResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed",
                content=[NeMoGymResponseOutputText(type="output_text", annotations=[], text=answer_text)])]),
        question=question,
        expected_answer=expected,
    )


async def main() -> None:
    episode = EpisodeId(rollout_id="rollout-1")
    seed = ResourcesSeedSessionRequest(resources_session_id="s-1", episode_id=episode,
                                       task_id=TaskId(taskset="arith", task_id="t-1"),
                                       task_data={"question": "What is 6 * 7?"})
    response = await CLIENT.post("grpo_math", "/seed_session", json=seed)
    print("seed_session:", response.status, await response.json())
    rewards = []
    for text in ("6 * 7 is \\boxed{42}.", "6 * 7 is \\boxed{48}."):
        response = await CLIENT.post("grpo_math", "/verify", json=rollout("What is 6 * 7?", text, "42"))
        verified = LibraryJudgeMathVerifyResponse.model_validate(await response.json())
        print(f"verify {text!r}: reward {verified.reward}")
        rewards.append(verified.reward)
    close = ResourcesCloseSessionRequest(resources_session_id="s-1", episode_id=episode)
    response = await CLIENT.post("grpo_math", "/close_session", json=close)
    print("close_session:", response.status, await response.json())
    if rewards != [1.0, 0.0]:
        raise SystemExit(f"rewards {rewards}, wanted [1.0, 0.0]")


if __name__ == "__main__":
    asyncio.run(main())

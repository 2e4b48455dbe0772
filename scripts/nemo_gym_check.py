#!/usr/bin/env python3
"""`grpo serve` as a NeMo Gym resource server, checked with NeMo Gym's own pydantic models.

1. Starts `grpo serve --addr 127.0.0.1:0` (the binary from $GRPO_BIN, else target/release or
   target/debug) and reads the address it prints.
2. Builds verify requests with NeMo Gym's models (`math_with_judge`'s and `code_gen`'s request
   classes, an OpenAI Responses `response` from `nemo_gym.openai_utils`) for right and wrong
   math and code rows (plain and packed unit tests), posts them to `/verify` and to
   `/ng-rollout/<id>/verify`, and validates each answer with the matching NeMo Gym response
   model: reward 1.0 for the right answers, 0.0 for the wrong ones, `response` and
   `responses_create_params` echoed unchanged.
3. Checks `/seed_session` (both body forms) and `/close_session` against NeMo Gym's session
   models, `/aggregate_metrics` against `AggregateMetrics`, and that a request without a
   `response` is a 422 naming it.

Run with a Python that has `nemo-gym` installed (it declares Python >= 3.13; install it with
`pip install nemo-gym --ignore-requires-python` where needed). Exits non-zero on any failure.
"""

from __future__ import annotations

import base64
import json
import sys
import urllib.error
import urllib.request
import zlib
from pathlib import Path

from nemo_gym.base_resources_server import (
    BaseSeedSessionResponse,
    BaseVerifyRequest,
    BaseVerifyResponse,
    ResourcesCloseSessionRequest,
    ResourcesCloseSessionResponse,
    ResourcesSeedSessionRequest,
    ResourcesSeedSessionResponse,
)
from nemo_gym.episode_types import EpisodeId, TaskId
from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest
from nemo_gym.openai_utils import (
    NeMoGymEasyInputMessage,
    NeMoGymResponse,
    NeMoGymResponseCreateParamsNonStreaming,
    NeMoGymResponseOutputMessage,
    NeMoGymResponseOutputText,
    NeMoGymResponseReasoningItem,
    NeMoGymSummary,
)

import resources_servers  # noqa: E402  (NeMo Gym's servers, installed with nemo-gym)

# NeMo Gym runs each server from its own folder: code_gen imports its `lcb_integration` as a
# top-level package.
sys.path.insert(0, str(Path(resources_servers.__path__[0]) / "code_gen"))

from resources_servers.code_gen.app import CompCodingVerifyRequest, CompCodingVerifyResponse  # noqa: E402
from resources_servers.math_with_judge.app import (  # noqa: E402
    LibraryJudgeMathVerifyRequest,
    LibraryJudgeMathVerifyResponse,
)

ROOT = Path(__file__).resolve().parent.parent


sys.path.insert(0, str(ROOT / "benches"))
import grpo_server  # noqa: E402  (finding the binary, starting a server)


FAILURES: list[str] = []


def check(condition: bool, what: str, detail: object = "") -> None:
    print(("ok   " if condition else "FAIL ") + what + (f": {detail}" if not condition and detail != "" else ""))
    if not condition:
        FAILURES.append(what)


def post(url: str, body: object) -> tuple[int, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def params(question: str) -> NeMoGymResponseCreateParamsNonStreaming:
    return NeMoGymResponseCreateParamsNonStreaming(input=[NeMoGymEasyInputMessage(role="user", content=question)])


def response(text: str, reasoning: str) -> NeMoGymResponse:
    """A Responses `response`: a reasoning item (never scored), then the message `text`."""
    return NeMoGymResponse(
        id="resp_check",
        created_at=0.0,
        model="policy",
        object="response",
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
        output=[
            NeMoGymResponseReasoningItem(id="rs_1", summary=[NeMoGymSummary(type="summary_text", text=reasoning)]),
            NeMoGymResponseOutputMessage(id="msg_1", content=[NeMoGymResponseOutputText(annotations=[], text=text)]),
        ],
    )


SUM = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
PRODUCT = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"
TESTS = {"inputs": ["1 2\n", "2 2\n", "10 -3\n"], "outputs": ["3\n", "4\n", "7\n"]}
PACKED = {"packed": base64.b64encode(zlib.compress(json.dumps(TESTS).encode())).decode()}
# LeetCode's form (LiveCodeBench's call tests): `Solution().add(*args)` on each input's JSON lines.
CALLS = {"inputs": ["1\n2", "5\n5"], "outputs": ["3", "10"], "fn_name": "add"}
ADD = "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n```"
SUBTRACT = ADD.replace("a + b", "a - b")


def verify(url: str, request, response_model, expected: float, what: str) -> None:
    body = request.model_dump(mode="json", exclude_none=True)
    status, answer = post(url, body)
    if status != 200:
        check(False, what, f"{status} {answer}")
        return
    try:
        validated = response_model.model_validate(answer)
    except Exception as e:  # pydantic's ValidationError, reported as a failure
        check(False, what + ": the answer is NeMo Gym's response", e)
        return
    check(validated.reward == expected, f"{what}: reward {expected}", validated.reward)
    check(
        answer["response"] == body["response"] and answer["responses_create_params"] == body["responses_create_params"],
        what + ": response and responses_create_params echoed unchanged",
    )


def main() -> int:
    process, base = grpo_server.serve(grpo_server.binary())
    try:
        question = "What is 6 * 7?"
        for prefix in ("", "/ng-rollout/rollout-7"):
            url = base + prefix + "/verify"
            where = prefix or "root"
            for text, expected in (("6 * 7 = \\boxed{42}", 1.0), ("\\boxed{41}", 0.0)):
                request = LibraryJudgeMathVerifyRequest(
                    responses_create_params=params(question),
                    # The reasoning says the other answer: only the output text counts.
                    response=response(text, "\\boxed{41}" if expected else "\\boxed{42}"),
                    question=question,
                    expected_answer="42",
                )
                verify(url, request, LibraryJudgeMathVerifyResponse, expected, f"{where} math {text!r}")
            for tests, shape, right, wrong in (
                (TESTS, "plain", SUM, PRODUCT),
                (PACKED, "packed", SUM, PRODUCT),
                (CALLS, "call", ADD, SUBTRACT),
            ):
                for code, expected in ((right, 1.0), (wrong, 0.0)):
                    request = CompCodingVerifyRequest(
                        responses_create_params=params("Print the sum of two integers."),
                        response=response(code, "think"),
                        verifier_metadata={"unit_tests": tests},
                    )
                    name = "right" if expected else "wrong"
                    verify(url, request, CompCodingVerifyResponse, expected, f"{where} code ({shape}) {name}")

        episode = EpisodeId(rollout_id="rollout-7")
        seed = ResourcesSeedSessionRequest(
            resources_session_id="s-1",
            episode_id=episode,
            task_id=TaskId(taskset="check:math", task_id="t-1"),
            task_data={"question": question},
        )
        status, answer = post(base + "/seed_session", seed.model_dump(mode="json"))
        check(
            status == 200 and ResourcesSeedSessionResponse.model_validate(answer).resources_session_id == "s-1",
            "seed_session (environment server form)",
            answer,
        )
        status, answer = post(base + "/seed_session", {})
        check(status == 200 and BaseSeedSessionResponse.model_validate(answer) is not None, "seed_session (legacy form)")
        close = ResourcesCloseSessionRequest(resources_session_id="s-1", episode_id=episode)
        status, answer = post(base + "/ng-rollout/rollout-7/close_session", close.model_dump(mode="json"))
        check(
            status == 200 and ResourcesCloseSessionResponse.model_validate(answer).resources_session_id == "s-1",
            "close_session",
            answer,
        )

        metrics = AggregateMetricsRequest(
            verify_responses=[
                {"_ng_task_index": 0, "reward": 1.0},
                {"_ng_task_index": 0, "reward": 0.0},
                {"_ng_task_index": 1, "reward": 1.0},
            ]
        )
        status, answer = post(base + "/aggregate_metrics", metrics.model_dump(mode="json"))
        aggregated = AggregateMetrics.model_validate(answer) if status == 200 else None
        check(
            aggregated is not None and abs(aggregated.key_metrics["mean/reward"] - 2 / 3) < 1e-9,
            "aggregate_metrics",
            answer,
        )

        malformed = LibraryJudgeMathVerifyRequest(
            responses_create_params=params(question),
            response=response("\\boxed{42}", ""),
            question=question,
            expected_answer="42",
        ).model_dump(mode="json", exclude_none=True)
        del malformed["response"]
        status, answer = post(base + "/verify", malformed)
        check(
            status == 422 and "`response`" in str(answer.get("detail")) and "reward" not in answer,
            "no response: a 422 naming it",
            f"{status} {answer}",
        )
    finally:
        process.terminate()
        process.wait(timeout=30)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all NeMo Gym checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

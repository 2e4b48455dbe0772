"""The environment-protocol requests the service scripts send to `grpo serve`, in the shapes the
trainers' own libraries send them (checked against those libraries by
scripts/openenv_client_check.py and scripts/nemo_gym_check.py): NeMo Gym `/verify` bodies as
`nemo-gym`'s models dump them, and OpenEnv's stateless `/reset` and `/step` bodies."""

from __future__ import annotations

import json
import pathlib


def nemo_verify(question: str, expected_answer: str, text: str) -> dict:
    """A NeMo Gym `/verify` request for a math row (`math_with_judge`'s shape): the Responses
    `response` holds a reasoning item (never scored) and the message `text`."""
    return {
        "responses_create_params": {
            "input": [{"content": question, "role": "user", "type": "message"}],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        },
        "response": {
            "id": "resp_1", "created_at": 0.0, "model": "policy", "object": "response",
            "output": [
                {"id": "rs_1", "summary": [{"text": "thinking", "type": "summary_text"}], "type": "reasoning"},
                {"id": "msg_1", "content": [{"annotations": [], "text": text, "type": "output_text"}],
                 "role": "assistant", "status": "completed", "type": "message"},
            ],
            "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
        },
        "question": question,
        "expected_answer": expected_answer,
    }


def nemo_seed_session(session_id: str, rollout_id: str, question: str) -> dict:
    """NeMo Gym's `/seed_session` body in its environment-server form (`ResourcesSeedSessionRequest`)."""
    return {"resources_session_id": session_id, "episode_id": {"rollout_id": rollout_id, "attempt": 0},
            "task_id": {"taskset": "soak:math", "task_id": rollout_id}, "task_data": {"question": question}}


def nemo_close_session(session_id: str, rollout_id: str) -> dict:
    """NeMo Gym's `/close_session` body (`ResourcesCloseSessionRequest`)."""
    return {"resources_session_id": session_id, "episode_id": {"rollout_id": rollout_id, "attempt": 0}}


def openenv_task_step(task_id: str, completion: str) -> dict:
    """OpenEnv's stateless `POST /step` body for `/openenv/tasks` (the task named, since a
    stateless step builds a fresh environment)."""
    return {"action": {"completion": completion, "task_id": task_id}}


def pack_answers(pack: pathlib.Path) -> dict[str, str]:
    """Each math task's answer in a pack directory, by task id (to know the right completion
    for whatever task `/openenv/tasks` hands out)."""
    answers = {}
    for path in sorted(pack.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                task = json.loads(line)
                answers[task["id"]] = task["answer"]
    return answers

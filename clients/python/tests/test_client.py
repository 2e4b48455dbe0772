"""The Python client against a running `grpo serve`."""

import asyncio
import threading
import time

import pytest

import grpo_client
from grpo_client import AsyncGrpoClient, GrpoClient, GrpoServiceError


def test_ping(url):
    with GrpoClient(url) as client:
        assert client.ping()


def test_math_group_scores_in_order(url):
    with GrpoClient(url) as client:
        results = client.score(["\\boxed{0.5}", "\\boxed{2}", "<answer>1/2</answer>"], ground_truth="\\frac{1}{2}")
    assert [r["correct"] for r in results] == [True, False, True]
    assert [r["reward"] for r in results] == [1.0, 0.0, 1.0]
    assert results[1]["verdict"]["kind"] == "wrong_answer"
    assert results[1]["verdict"]["reason"]


def test_task_schema_and_format_weight(url):
    task = {"id": "t1", "kind": "math", "prompt": "3*4?", "answer": "12"}
    with GrpoClient(url) as client:
        results = client.score(["<think>3*4</think><answer>12</answer>", "12"], task=task, format_weight=0.5)
    # 1 + 0.5·1 for the formatted answer; 1 + 0.5·0 for the bare one.
    assert [r["reward"] for r in results] == [1.5, 1.0]
    assert all(r["task_id"] == "t1" for r in results)


def test_verl_ground_truth_code(url):
    gt = {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "25\n"]}
    completions = ["```python\nn = int(input())\nprint(n * n)\n```", "```python\nprint(4)\n```"]
    with GrpoClient(url) as client:
        results = client.score(completions, ground_truth=gt, task_id="sq")
    assert [r["correct"] for r in results] == [True, False]
    assert results[0]["task_id"] == "sq"
    assert [t["passed"] for t in results[1]["verdict"]["tests"]] == [True, False]


def test_run_code(url):
    with GrpoClient(url) as client:
        ok = client.run_code("print(input()[::-1])", stdin="abc")
        failed = client.run_code("raise SystemExit(3)")
        loop = client.run_code("while True: pass", run_timeout=0.5)
    assert (ok["status"], ok["run_result"]["stdout"]) == ("Success", "cba\n")
    assert (failed["status"], failed["run_result"]["return_code"]) == ("Failed", 3)
    assert loop["run_result"]["status"] == "TimeLimitExceeded"


def test_bad_input_raises_at_once_with_the_reason(url):
    with GrpoClient(url, retries=5, backoff=10) as client:
        with pytest.raises(GrpoServiceError) as info:
            client.score(["x"], ground_truth={"inputs": ["1"], "outputs": []})
    assert info.value.status == 422
    assert "1 inputs but 0 outputs" in str(info.value)
    with pytest.raises(ValueError):
        grpo_client._score_body(["x"])


def test_async_client_scores_groups_concurrently(url):
    async def run():
        async with AsyncGrpoClient(url) as client:
            return await asyncio.gather(*(client.score([f"\\boxed{{{k}}}", "0"], ground_truth=str(k)) for k in range(1, 9)))

    groups = asyncio.run(run())
    assert [[r["correct"] for r in g] for g in groups] == [[True, False]] * 8


def test_trl_adapter_on_a_small_batch(url):
    reward = grpo_client.trl_reward_function(url)
    assert asyncio.iscoroutinefunction(reward)
    assert reward.__name__ == "grpo_accuracy"
    # Two prompts × two generations; TRL passes each dataset column repeated per generation.
    completions = [[{"role": "assistant", "content": c}] for c in ["\\boxed{4}", "5", "\\boxed{9}", "\\boxed{9.0}"]]
    rewards = asyncio.run(reward(prompts=["2+2", "2+2", "3*3", "3*3"], completions=completions,
                                 answer=["4", "4", "9", "9"]))
    assert rewards == [1.0, 0.0, 1.0, 1.0]


def test_trl_adapter_survives_a_new_event_loop_per_call(url):
    reward = grpo_client.trl_reward_function(url)
    for _ in range(3):
        assert asyncio.run(reward(prompts=["p"], completions=["\\boxed{2}"], ground_truth=["2"])) == [1.0]


def test_trl_adapter_refuses_a_batch_without_tasks(url):
    reward = grpo_client.trl_reward_function(url)
    with pytest.raises(GrpoServiceError, match="no task column"):
        asyncio.run(reward(prompts=["p"], completions=["c"]))


def test_verl_compute_score_hook(url):
    out = grpo_client.compute_score("openai/gsm8k", "so the answer is \\boxed{72}", "72", url=url)
    assert out == {"score": 1.0, "acc": True, "verdict": "correct"}
    out = grpo_client.compute_score("codecontests", "```python\nprint(int(input()) + 1)\n```",
                                    {"inputs": ["1\n"], "outputs": ["2\n"]}, url=url)
    assert out["acc"] is True


def test_unreachable_server_raises_after_retries():
    with GrpoClient("http://127.0.0.1:9", retries=2, backoff=0.01) as client:
        with pytest.raises(GrpoServiceError, match="after 3 attempts"):
            client.score(["1"], ground_truth="1")


def test_overload_504_is_retried_until_served(tight_url):
    """With one slot and no queue, a second request gets 504 while a slow one runs; a client
    without retries raises, a client with retries is served once the slot frees."""
    holder = GrpoClient(tight_url, retries=0)
    started = threading.Event()

    def hold():
        started.set()
        holder.run_code("import time\ntime.sleep(1.5)\nprint('done')", run_timeout=5)

    thread = threading.Thread(target=hold)
    thread.start()
    started.wait()
    # Wait until the slow request holds the slot (the next plain request is refused).
    impatient = GrpoClient(tight_url, retries=0)
    for _ in range(100):
        try:
            impatient.score(["1"], ground_truth="1")
        except GrpoServiceError as e:
            assert "504" in str(e)
            break
        time.sleep(0.02)
    else:
        pytest.fail("the server never reported overload")
    patient = GrpoClient(tight_url, retries=6, backoff=0.1)
    results = patient.score(["\\boxed{1}"], ground_truth="1")
    assert results[0]["correct"]
    thread.join()


def _served(url: str, route: str) -> float:
    """How many requests `url` answered on `route`, from its Prometheus metrics."""
    import re

    import httpx

    text = httpx.get(url + "/metrics").text
    return sum(float(m.group(1)) for m in re.finditer(
        r'^grpo_http_requests_total\{[^}]*route="' + re.escape(route) + r'"[^}]*\} (\S+)$', text, re.M))


def test_several_servers_share_a_batch_and_survive_one_going_away(two_urls):
    urls, processes = two_urls
    groups = [([f"\\boxed{{{k}}}", "\\boxed{0}"], {"ground_truth": str(k)}) for k in range(1, 41)]
    expected = [[True, False]] * 40

    async def batch(client):
        return [[r["correct"] for r in g] for g in await client.score_batch(groups)]

    async def run():
        async with AsyncGrpoClient(urls, backoff=0.05, cooldown=30) as client:
            first = await batch(client)
            # Both servers took part in the first batch.
            shares = [_served(u, "/v1/score") for u in urls]
            # One server goes away in the middle of the second batch.
            async def stop_one():
                await asyncio.sleep(0.05)
                processes[1].kill()
            second, _ = await asyncio.gather(batch(client), stop_one())
            third = await batch(client)
            return first, shares, second, third

    first, shares, second, third = asyncio.run(run())
    assert first == expected and second == expected and third == expected
    assert all(share >= 10 for share in shares), shares
    assert processes[1].wait(timeout=10) != 0
    # The blocking client takes a list too, and skips the server that is gone.
    with GrpoClient(urls, backoff=0.01) as client:
        for k in range(4):
            assert client.score([f"\\boxed{{{k}}}"], ground_truth=str(k))[0]["correct"]


def test_a_protected_server_wants_the_token(token_url):
    from conftest import TOKEN

    with GrpoClient(token_url, retries=0) as client:
        with pytest.raises(GrpoServiceError) as info:
            client.score(["1"], ground_truth="1")
    assert info.value.status == 401
    with GrpoClient(token_url, token=TOKEN) as client:
        assert client.score(["\\boxed{1}"], ground_truth="1")[0]["correct"]
        assert client.ping()
    import httpx

    assert httpx.get(token_url + "/healthz").status_code == 200
    assert httpx.get(token_url + "/v1/languages").status_code == 401

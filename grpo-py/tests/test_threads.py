"""The thread-count rule, the pools it sizes, and what the package leaves alone (signals, the
main thread). Each case runs in a fresh interpreter: the count is fixed once per process."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

# Prints the package's thread count before and after scoring a math batch and a code task,
# the most `grpo-math` threads seen during a batch, and the process's threads by name.
PROBE = textwrap.dedent(
    """
    import json, os, sys, threading, time
    import grpo_rewards

    def names():
        out = []
        for t in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{t}/comm") as f:
                    out.append(f.read().strip())
            except OSError:
                pass
        return out

    before = grpo_rewards.threads()
    if len(sys.argv) > 1:
        grpo_rewards.set_threads(int(sys.argv[1]))
    seen, stop = [0], threading.Event()

    def sample():
        while not stop.is_set():
            seen[0] = max(seen[0], sum(n.startswith("grpo-math") for n in names()))
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    pairs = [(f"{i}/7", f"\\\\boxed{{\\\\frac{{{2 * i}}}{{14}}}}") for i in range(1, 40_000)]
    assert all(r.correct for r in grpo_rewards.check_math_batch(pairs))
    stop.set()
    sampler.join()
    task = {"id": "sum", "kind": "code", "prompt": "p", "language": "python", "mode": "full",
            "tests": {"type": "stdio", "cases": [{"stdin": "1 2\\n", "stdout": "3\\n"}]}}
    good = "```python\\na, b = map(int, input().split())\\nprint(a + b)\\n```"
    assert [s.correct for s in grpo_rewards.score(task, [good] * 4 + ["print(0)"])] == [True] * 4 + [False]
    after = grpo_rewards.threads()
    print(json.dumps({"before": before, "after": after, "math_workers": seen[0], "names": names()}))
    """
)


def probe(*args, env=None, affinity=None):
    environment = {k: v for k, v in os.environ.items() if k != "GRPO_REWARDS_THREADS"}
    environment.update(env or {})
    pre = (lambda: os.sched_setaffinity(0, affinity)) if affinity is not None else None
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        env=environment, preexec_fn=pre, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def pool_threads(names, prefix):
    return sum(n.startswith(prefix) for n in names)


def test_environment_variable_sizes_every_pool():
    got = probe(env={"GRPO_REWARDS_THREADS": "3"})
    assert got["before"] == [3, "env", False, None, None]
    assert got["after"] == [3, "env", True, 3, 3]
    assert got["math_workers"] == 3
    assert pool_threads(got["names"], "grpo-compile") == 3
    # The runtime's 3 workers, and at most 3 blocking threads beside them.
    assert 3 <= pool_threads(got["names"], "grpo-rewards") <= 6


def test_set_threads_wins_over_the_environment():
    got = probe(2, env={"GRPO_REWARDS_THREADS": "3"})
    assert got["before"][:2] == [3, "env"]
    assert got["after"] == [2, "explicit", True, 2, 2]
    assert got["math_workers"] == 2


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_default_follows_the_affinity_mask_not_the_host():
    got = probe(affinity={min(os.sched_getaffinity(0))})
    assert got["after"] == [1, "available_parallelism", True, 1, 1]
    assert got["math_workers"] == 1
    assert pool_threads(got["names"], "grpo-compile") == 1


def test_bad_environment_value_is_an_error_naming_the_variable():
    done = subprocess.run(
        [sys.executable, "-c", "import grpo_rewards; grpo_rewards.check_math_batch([('1', '1')])"],
        env={**os.environ, "GRPO_REWARDS_THREADS": "zero"}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0 and "GRPO_REWARDS_THREADS" in done.stderr and "ValueError" in done.stderr


def test_the_count_is_fixed_once_a_pool_runs():
    script = textwrap.dedent(
        """
        import grpo_rewards
        grpo_rewards.set_threads(2)
        grpo_rewards.check_math_batch([("1", "1")] * 4)
        grpo_rewards.set_threads(2)  # the same count: fine
        try:
            grpo_rewards.set_threads(3)
        except RuntimeError as e:
            print("refused:", e)
        try:
            grpo_rewards.set_threads(0)
        except ValueError as e:
            print("refused:", e)
        print(tuple(grpo_rewards.threads())[:3])
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: set_threads(3): the pools already run on 2 threads")
    assert lines[1] == "refused: threads: must be at least 1"
    assert lines[2] == "(2, 'explicit', True)"


def test_outside_ray_the_ray_rule_does_not_apply():
    from grpo_rewards import _ray

    # This process is no Ray worker (and the check imports nothing).
    assert _ray.assigned_cpus() is None
    assert "ray" not in sys.modules


SIGNALS = textwrap.dedent(
    """
    import json, signal, threading

    def caught():
        with open("/proc/self/status") as f:
            mask = next(int(l.split()[1], 16) for l in f if l.startswith("SigCgt:"))
        # The standard signals; glibc keeps 32 and 33 for itself, the rest are real-time.
        return {n for n in range(1, 32) if mask >> (n - 1) & 1}

    def handlers():
        return {s.name: repr(signal.getsignal(s)) for s in signal.valid_signals() if isinstance(s, signal.Signals)}

    before, py_before = caught(), handlers()
    import grpo_rewards
    task = {"id": "sum", "kind": "code", "prompt": "p", "language": "python", "mode": "full",
            "tests": {"type": "stdio", "cases": [{"stdin": "1 2\\n", "stdout": "3\\n"}]}}
    loop = "```python\\nwhile True:\\n    pass\\n```"
    got = []
    # Off the main thread, as in a threaded Ray actor: the time limit still holds.
    worker = threading.Thread(target=lambda: got.extend(grpo_rewards.score(task, [loop, "print(3)"])))
    worker.start()
    worker.join()
    assert [s.kind for s in got] == ["timeout", "correct"], got
    assert grpo_rewards.check_math_batch([("1/2", "0.5")])[0].correct
    new = sorted(signal.Signals(n).name for n in caught() - before)
    print(json.dumps({"new": new, "python_handlers_unchanged": handlers() == py_before}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_no_signal_handlers_and_no_main_thread_needed():
    done = subprocess.run([sys.executable, "-c", SIGNALS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["python_handlers_unchanged"]
    # Only wasmtime's trap handlers (a fault in guest code becomes a trap); no SIGALRM timers,
    # no SIGINT or SIGTERM handling of our own.
    assert set(got["new"]) <= {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"}, got["new"]

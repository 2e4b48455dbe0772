"""Threads calling at once, and Ctrl-C in the middle of a batch."""
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from grpo_rewards import check_math, check_math_batch, score


def math_workers():
    """Native threads of this process running check_math_batch work (named grpo-math-N)."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            continue
    return sum(1 for n in names if n.startswith("grpo-math"))


def test_threads_call_concurrently_with_the_same_answers():
    pairs = [(f"{i}/7", f"\\boxed{{\\frac{{{2 * i}}}{{14}}}}") for i in range(1, 300)]
    task = {"id": "t", "kind": "math", "prompt": "p", "answer": "3/4"}

    def work(k):
        if k % 3 == 0:
            return [r.correct for r in check_math_batch(pairs, threads=2)]
        if k % 3 == 1:
            return [check_math(g, p).correct for g, p in pairs[:50]]
        return [s.correct for s in score(task, ["\\boxed{0.75}", "\\boxed{0.7}"])]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(24)))
    for k, got in enumerate(results):
        expected = [True] * len(pairs) if k % 3 == 0 else [True] * 50 if k % 3 == 1 else [True, False]
        assert got == expected


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_keyboard_interrupt_stops_a_batch_quickly_and_leaves_no_worker():
    # Big enough to run for many seconds on any machine.
    pairs = [("\\frac{1}{3} + x^2", f"\\boxed{{x^2 + 0.{'3' * (i % 40 + 3)}}}") for i in range(400_000)]
    # A process started in the background by a shell inherits SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler: put Python's own back for this test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    main = threading.main_thread().ident
    seen, interrupted = [], []

    def interrupt():
        # Ctrl-C once the batch runs on its workers: on a loaded machine, taking 400,000
        # pairs from Python can last longer than any fixed delay.
        deadline = time.perf_counter() + 30
        while math_workers() < 4 and time.perf_counter() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        seen.append(math_workers())
        interrupted.append(time.perf_counter())
        signal.pthread_kill(main, signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    sender.start()
    with pytest.raises(KeyboardInterrupt):
        check_math_batch(pairs, threads=4)
        pytest.fail("the batch finished before the interrupt: make it bigger")
    raised = time.perf_counter()
    sender.join()
    signal.signal(signal.SIGINT, previous)
    assert raised - interrupted[0] < 1.0, f"raised {raised - interrupted[0]:.2f}s after Ctrl-C"
    assert seen == [4], "the batch must have been running on its 4 workers"
    assert math_workers() == 0, "a worker outlived the interrupt"

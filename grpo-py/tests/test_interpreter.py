"""grpo_rewards.Interpreter: a sandboxed Python interpreter whose state lasts across calls."""
import pickle
import signal
import threading
import time

import pytest

import grpo_rewards
from grpo_rewards import Interpreter, InterpreterClosed, RunResult


def test_state_is_kept_across_calls():
    with Interpreter(time_limit_ms=2_000, memory_mb=128) as it:
        r = it.run("x = 6 * 7\ndef f(n):\n    return n + x")
        assert (r.status, r.stdout, r.stderr, r.exit_code, r.truncated) == ("ok", "", "", 0, False)
        assert r.ok and r.duration_ms > 0
        # CPU time, what the time limit is charged with, is reported beside the wall clock.
        assert 0 < r.cpu_ms <= r.duration_ms * 1.5
        assert it.run("print(x)").stdout == "42\n"
        # The last expression's value is shown, as in the interactive interpreter.
        assert it.run("f(1)").stdout == "43\n"
        # An exception is the call's outcome; the namespace survives it.
        r = it.run("1 / 0")
        assert r.status == "error" and not r.ok
        assert "ZeroDivisionError" in r.stderr
        assert it.run("import math\nprint(math.isqrt(x * x))").stdout == "42\n"
        assert it.stats()["calls"] == 5
        assert it.limits["time_limit_ms"] == 2_000 and it.limits["memory_mb"] == 128


def test_interpreters_share_nothing():
    with Interpreter() as a, Interpreter() as b:
        a.run("secret = 1")
        r = b.run("print(secret)")
        assert r.status == "error" and "NameError" in r.stderr


def test_a_closed_interpreter_raises_a_clear_exception():
    it = Interpreter()
    assert not it.closed
    it.close()
    it.close()  # twice is harmless
    assert it.closed
    with pytest.raises(InterpreterClosed, match="closed"):
        it.run("1")
    assert issubclass(InterpreterClosed, RuntimeError)
    with Interpreter() as it:
        pass
    with pytest.raises(InterpreterClosed):
        it.run("1")


def test_a_spent_cpu_budget_closes_the_interpreter():
    with Interpreter(time_limit_ms=200, session_cpu_ms=300) as it:
        it.run("while True: pass")
        it.run("while True: pass")
        with pytest.raises(InterpreterClosed, match="CPU budget"):
            it.run("print(1)")


def test_a_hostile_loop_times_out_and_the_next_call_works():
    with Interpreter(time_limit_ms=300) as it:
        it.run("kept = 1")
        started = time.monotonic()
        r = it.run("while True:\n    pass")
        assert r.status == "timeout", r
        assert time.monotonic() - started < 10
        assert "fresh" in r.stderr
        r = it.run("print('alive')")
        assert (r.status, r.stdout) == ("ok", "alive\n")
        # The interpreter was replaced: earlier state is gone, and that is said.
        assert "NameError" in it.run("kept").stderr


def test_output_floods_and_memory_growth_are_contained():
    with Interpreter(memory_mb=64, output_bytes=4096) as it:
        r = it.run("print('y' * 1_000_000)")
        assert (r.status, r.truncated) == ("output_limit", True)
        assert len(r.stdout) <= 4096
        it.run("hoard = []")
        for _ in range(4):
            r = it.run("hoard.append(bytearray(24 << 20))")
        assert r.status == "memory_limit", r
        assert it.run("print(2 + 2)").stdout == "4\n"


def test_two_threads_on_one_interpreter_take_turns():
    with Interpreter() as it:
        it.run("n = 0")
        errors = []

        def work():
            try:
                for _ in range(25):
                    assert it.run("n += 1").status == "ok"
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert it.run("n").stdout == "50\n"


def test_the_gil_is_released_while_a_call_runs():
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    with Interpreter(time_limit_ms=2_000) as it:
        counter = threading.Thread(target=count)
        counter.start()
        r = it.run("import time\nend = time.monotonic() + 0.5\nwhile time.monotonic() < end: pass")
        stop.set()
        counter.join()
        assert r.status == "ok", r
    # A held GIL would leave the counter at a handful of ticks.
    assert len(ticks) > 50, len(ticks)


def test_no_signal_handlers_are_installed_and_any_thread_works():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGALRM, signal.SIGTERM)}
    out = []

    def off_main():
        with Interpreter(time_limit_ms=200) as it:
            out.append(it.run("while True: pass").status)
            out.append(it.run("print(7)").stdout)

    t = threading.Thread(target=off_main)
    t.start()
    t.join()
    assert out == ["timeout", "7\n"]
    assert {s: signal.getsignal(s) for s in before} == before


def test_results_pickle_and_bad_limits_are_value_errors():
    with Interpreter() as it:
        r = it.run("print('p')")
    assert pickle.loads(pickle.dumps(r)) == r
    assert isinstance(r, RunResult) and r.stdout == "p\n"
    with pytest.raises(ValueError, match="memory_mb"):
        Interpreter(memory_mb=1)
    with pytest.raises(ValueError, match="time_limit_ms"):
        Interpreter(time_limit_ms=0)
    with pytest.raises(TypeError):
        Interpreter(5_000)  # keywords only
    assert grpo_rewards.Interpreter is Interpreter

"""Interpreter sessions side by side: grpo_rewards.Interpreter, pyeryx's Session, and the same
sessions over HTTP (`grpo serve`), measured in one run on one machine.

Two figures per path:
- per-call overhead on a warm session: the wall time of `x += 1` (after warm-up calls), median
  and mean over many calls;
- sessions opened and closed per second: open then close with no call, and open, one trivial
  call, close (pyeryx starts its interpreter lazily, on the first call; ours at the opening).

Setup (pyeryx needs Python 3.12 or newer; grpo_rewards' wheel is abi3):

    python3.12 -m venv target/interp-bench-venv
    target/interp-bench-venv/bin/pip install pyeryx target/wheels-dev/grpo_rewards-*.whl
    target/interp-bench-venv/bin/python benches/interpreter.py --grpo-bin target/debug/grpo

Without --grpo-bin the HTTP path is skipped; a missing pyeryx skips its rows. Prints a table on
stderr and one JSON object on stdout.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def per_call(run, calls: int, warmup: int = 50) -> dict:
    for _ in range(warmup):
        run("x += 1")
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        run("x += 1")
        times.append((time.perf_counter() - t) * 1e3)
    return {"median_ms": statistics.median(times), "mean_ms": statistics.fmean(times),
            "p90_ms": sorted(times)[int(0.9 * len(times))], "calls": calls}


def sessions_per_second(open_close, budget_s: float, most: int) -> dict:
    open_close()  # first use builds whatever is built once
    n, started = 0, time.perf_counter()
    while n < most and time.perf_counter() - started < budget_s:
        open_close()
        n += 1
    elapsed = time.perf_counter() - started
    return {"per_s": n / elapsed, "sessions": n}


def grpo_rows(calls: int, budget_s: float) -> dict:
    import grpo_rewards

    it = grpo_rewards.Interpreter()
    assert it.run("x = 0").status == "ok"

    def run(code):
        r = it.run(code)
        assert r.status == "ok", r

    call = per_call(run, calls)
    assert it.run("x").stdout.strip() == str(calls + 50)
    it.close()

    def open_close():
        grpo_rewards.Interpreter().close()

    def open_call_close():
        with grpo_rewards.Interpreter() as fresh:
            fresh.run("1")

    return {"per_call": call, "sessions": sessions_per_second(open_close, budget_s, 2000),
            "sessions_with_a_call": sessions_per_second(open_call_close, budget_s, 2000)}


def eryx_rows(calls: int, budget_s: float) -> dict | None:
    try:
        import eryx
    except ImportError:
        return None
    session = eryx.Session()
    session.execute("x = 0")

    def run(code):
        session.execute(code)

    call = per_call(run, calls)
    assert session.execute("print(x)").stdout_text.strip() == str(calls + 50)

    def open_close():
        s = eryx.Session()
        del s

    def open_call_close():
        s = eryx.Session()
        s.execute("1")
        del s

    return {"per_call": call, "sessions": sessions_per_second(open_close, budget_s, 2000),
            "sessions_with_a_call": sessions_per_second(open_call_close, budget_s, 2000)}


class Served:
    """`grpo serve` on a free loopback port, stopped on exit."""

    def __init__(self, binary: str):
        self.proc = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        host, port = json.loads(line)["listening"].rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port))

    def call(self, method: str, path: str, body=None) -> dict:
        payload = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        data = r.read()
        assert r.status < 300, (r.status, data)
        return json.loads(data)

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def http_rows(binary: str, calls: int, budget_s: float) -> dict:
    served = Served(binary)
    try:
        sid = served.call("POST", "/v1/sessions", {"language": "python"})["id"]
        served.call("POST", f"/v1/sessions/{sid}/run", {"code": "x = 0"})

        def run(code):
            r = served.call("POST", f"/v1/sessions/{sid}/run", {"code": code})
            assert r["status"] == "ok", r

        call = per_call(run, calls)
        served.call("DELETE", f"/v1/sessions/{sid}")

        def open_close():
            opened = served.call("POST", "/v1/sessions", {"language": "python"})["id"]
            served.call("DELETE", f"/v1/sessions/{opened}")

        def open_call_close():
            opened = served.call("POST", "/v1/sessions", {"language": "python"})["id"]
            served.call("POST", f"/v1/sessions/{opened}/run", {"code": "1"})
            served.call("DELETE", f"/v1/sessions/{opened}")

        return {"per_call": call, "sessions": sessions_per_second(open_close, budget_s, 2000),
                "sessions_with_a_call": sessions_per_second(open_call_close, budget_s, 2000)}
    finally:
        served.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per warm session")
    parser.add_argument("--session-seconds", type=float, default=5.0, help="time spent opening sessions, per path")
    parser.add_argument("--grpo-bin", help="a grpo binary, for the HTTP path")
    args = parser.parse_args()

    rows = {"grpo_rewards.Interpreter": grpo_rows(args.calls, args.session_seconds)}
    eryx = eryx_rows(args.calls, args.session_seconds)
    if eryx is not None:
        rows["eryx.Session"] = eryx
    if args.grpo_bin:
        rows["grpo serve /v1/sessions"] = http_rows(args.grpo_bin, args.calls, args.session_seconds)

    ours = rows["grpo_rewards.Interpreter"]
    ratios = {}
    if eryx is not None:
        ratios["eryx_call_over_grpo_call"] = eryx["per_call"]["median_ms"] / ours["per_call"]["median_ms"]
        ratios["grpo_sessions_over_eryx_sessions"] = ours["sessions"]["per_s"] / eryx["sessions"]["per_s"]
        ratios["grpo_over_eryx_sessions_with_a_call"] = (ours["sessions_with_a_call"]["per_s"]
                                                         / eryx["sessions_with_a_call"]["per_s"])
    if "grpo serve /v1/sessions" in rows:
        served = rows["grpo serve /v1/sessions"]
        ratios["http_call_over_inprocess_call"] = served["per_call"]["median_ms"] / ours["per_call"]["median_ms"]
    print(f"{'path':28} {'call median':>12} {'call mean':>10} {'call p90':>9} {'sessions/s':>11} "
          f"{'with a call':>12}", file=sys.stderr)
    for name, row in rows.items():
        c = row["per_call"]
        print(f"{name:28} {c['median_ms']:>9.3f} ms {c['mean_ms']:>7.3f} ms {c['p90_ms']:>6.3f} ms "
              f"{row['sessions']['per_s']:>11.1f} {row['sessions_with_a_call']['per_s']:>12.1f}", file=sys.stderr)
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}", file=sys.stderr)
    print(json.dumps({"rows": rows, "ratios": ratios, "python": platform.python_version(),
                      "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()

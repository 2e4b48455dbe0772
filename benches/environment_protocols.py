#!/usr/bin/env python3
"""What the environment protocols cost next to the service's own routes, in one run of one
`grpo serve` on one machine:

1. an OpenEnv python step over WebSocket (`/openenv/python/ws`, message `step`) against a
   `/v1/sessions/{id}/run` call over a keep-alive HTTP connection: the same code, one call at
   a time, the two alternating in blocks so that drift hits both;
2. NeMo Gym `/verify` on math rows against `/v1/score` on the same rows (one completion per
   request on both, the same text; `--threads` keep-alive connections), and `/v1/score` with 8
   completions per request for reference.

    python3 benches/environment_protocols.py [--steps 2000] [--rows 4000] [--threads 4]
                                             [--grpo target/release/grpo] [--json out.json]

Python 3 standard library only. Prints a table: latency per call (median, p90, mean) for
part 1; requests per second and the server's CPU milliseconds per request (from
/proc/PID/stat) for part 2; and the two ratios the service promises: the WebSocket step's
median over the session call's, and /verify's throughput over /v1/score's. Exits non-zero
when an answer is wrong (the step's stdout, a reward), not on the ratios: they are measured,
and reported.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time

from environment_requests import nemo_verify, pack_answers
from grpo_server import ROOT, binary, serve
from websocket import WebSocket

CODE = "x += 1\nprint(x)"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process `pid`, in seconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post(conn: http.client.HTTPConnection, path: str, payload: str) -> tuple[int, dict]:
    conn.request("POST", path, payload, {"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"null")


def summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"n": len(ordered), "median_ms": statistics.median(ordered) * 1e3,
            "p90_ms": ordered[int(len(ordered) * 0.9)] * 1e3, "mean_ms": statistics.fmean(ordered) * 1e3}


def steps(host: str, port: int, total: int, block: int = 100) -> tuple[dict, dict]:
    """Per-call latency of the WebSocket step and of the session call, in alternating blocks."""
    ws = WebSocket(host, port, "/openenv/python/ws")
    ws.call({"type": "reset", "data": {}})
    ws.call({"type": "step", "data": {"code": "x = 0"}})
    conn = http.client.HTTPConnection(host, port, timeout=60)
    status, opened = post(conn, "/v1/sessions", "{}")
    if status != 201:
        sys.exit(f"POST /v1/sessions: {status} {opened}")
    run_path = f"/v1/sessions/{opened['id']}/run"
    post(conn, run_path, json.dumps({"code": "x = 0"}))
    step_message = json.dumps({"type": "step", "data": {"code": CODE}})
    run_payload = json.dumps({"code": CODE})
    ws_times, run_times = [], []
    ws_x = run_x = 0
    # Warm-up, left out of the figures.
    for _ in range(50):
        ws.send_text(step_message)
        ws.recv_text()
        post(conn, run_path, run_payload)
        ws_x, run_x = ws_x + 1, run_x + 1
    while len(ws_times) < total:
        for _ in range(block):
            started = time.perf_counter()
            ws.send_text(step_message)
            frame = json.loads(ws.recv_text())
            ws_times.append(time.perf_counter() - started)
            ws_x += 1
            if frame["data"]["observation"]["stdout"] != f"{ws_x}\n":
                sys.exit(f"WebSocket step: wrong answer {frame}")
        for _ in range(block):
            started = time.perf_counter()
            status, result = post(conn, run_path, run_payload)
            run_times.append(time.perf_counter() - started)
            run_x += 1
            if status != 200 or result.get("stdout") != f"{run_x}\n":
                sys.exit(f"session call: {status} {result}")
    ws.close()
    conn.request("DELETE", f"/v1/sessions/{opened['id']}")
    conn.getresponse().read()
    conn.close()
    return summary(ws_times), summary(run_times)


def throughput(host: str, port: int, pid: int, requests: list[tuple[str, str, object]], threads: int) -> dict:
    """Sends every (path, payload, check) over `threads` keep-alive connections; requests per
    second and the server's CPU milliseconds per request."""
    lock = threading.Lock()
    state = {"next": 0, "wrong": []}

    def worker():
        conn = http.client.HTTPConnection(host, port, timeout=120)
        while True:
            with lock:
                i = state["next"]
                state["next"] += 1
            if i >= len(requests):
                break
            path, payload, check = requests[i]
            status, answer = post(conn, path, payload)
            if not check(status, answer):
                with lock:
                    state["wrong"].append(f"{path} request {i}: {status} {json.dumps(answer)[:200]}")
        conn.close()

    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(pid) - cpu_before
    if state["wrong"]:
        sys.exit("wrong answers:\n  " + "\n  ".join(state["wrong"][:10]))
    return {"requests": len(requests), "seconds": seconds, "per_second": len(requests) / seconds,
            "server_cpu_ms_per_request": cpu * 1e3 / len(requests)}


def math_rows(count: int) -> list[tuple[str, str, str, bool]]:
    """(question, expected answer, completion text, right) for `count` rows of the arith pack,
    right and wrong answers alternating."""
    pack = ROOT / "tasks" / "packs" / "arith"
    prompts = {}
    for path in sorted(pack.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                task = json.loads(line)
                prompts[task["id"]] = task["prompt"]
    answers = pack_answers(pack)
    ids = sorted(answers)
    rows = []
    for i in range(count):
        task = ids[i % len(ids)]
        right = i % 2 == 0
        given = answers[task] if right else str(int(answers[task]) + 1)
        rows.append((prompts[task], answers[task], f"Adding up, the answer is \\boxed{{{given}}}.", right))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=2000, help="calls of each kind in part 1")
    ap.add_argument("--rows", type=int, default=4000, help="math rows in part 2")
    ap.add_argument("--threads", type=int, default=4, help="client connections in part 2")
    ap.add_argument("--grpo")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    server, url = serve(binary(args.grpo))
    host, port = url.removeprefix("http://").rsplit(":", 1)
    port = int(port)
    try:
        ws_step, session_run = steps(host, port, args.steps)
        rows = math_rows(args.rows)

        def verify_check(right):
            return lambda status, a: status == 200 and a.get("reward") == (1.0 if right else 0.0)

        def score_check(right):
            return lambda status, a: status == 200 and a["results"][0]["correct"] is right

        verify = [("/verify", json.dumps(nemo_verify(q, e, text)), verify_check(right)) for q, e, text, right in rows]
        score = [("/v1/score", json.dumps({"ground_truth": e, "completions": [text]}), score_check(right))
                 for q, e, text, right in rows]
        batched = [("/v1/score", json.dumps({"ground_truth": rows[i][1], "completions": [r[2] for r in rows[i:i + 8]]}),
                    lambda status, a: status == 200) for i in range(0, len(rows), 8)]
        # Warm-up, then the two alternating halves so that drift hits both.
        throughput(host, port, server.pid, verify[:200] + score[:200], args.threads)
        half = len(rows) // 2
        parts = {"verify": [], "score": []}
        for start, stop in ((0, half), (half, len(rows))):
            parts["verify"].append(throughput(host, port, server.pid, verify[start:stop], args.threads))
            parts["score"].append(throughput(host, port, server.pid, score[start:stop], args.threads))

        def merged(runs):
            n, s = sum(r["requests"] for r in runs), sum(r["seconds"] for r in runs)
            cpu = sum(r["server_cpu_ms_per_request"] * r["requests"] for r in runs) / n
            return {"requests": n, "seconds": s, "per_second": n / s, "server_cpu_ms_per_request": cpu}

        verify_tp, score_tp = merged(parts["verify"]), merged(parts["score"])
        batched_tp = throughput(host, port, server.pid, batched, args.threads)
    finally:
        server.terminate()
        server.wait(timeout=30)

    report = {
        "ws_step": ws_step, "session_run": session_run,
        "ws_over_session_median": ws_step["median_ms"] / session_run["median_ms"],
        "verify": verify_tp, "score": score_tp, "score_8_per_request": batched_tp,
        "verify_over_score_throughput": verify_tp["per_second"] / score_tp["per_second"],
        "threads": args.threads, "cpus": os.cpu_count(),
    }
    print("| call | n | median ms | p90 ms | mean ms |")
    print("|---|---:|---:|---:|---:|")
    for name, s in (("OpenEnv step over WebSocket", ws_step), ("POST /v1/sessions/{id}/run", session_run)):
        print(f"| {name} | {s['n']} | {s['median_ms']:.2f} | {s['p90_ms']:.2f} | {s['mean_ms']:.2f} |")
    print(f"\nWebSocket step / session call (median): {report['ws_over_session_median']:.2f}\n")
    print(f"| route ({args.threads} connections) | requests | completions/s | server CPU ms per request |")
    print("|---|---:|---:|---:|")
    for name, t, per in (("POST /verify (NeMo Gym, math row)", verify_tp, 1),
                         ("POST /v1/score (1 completion)", score_tp, 1),
                         ("POST /v1/score (8 completions)", batched_tp, 8)):
        print(f"| {name} | {t['requests']} | {t['per_second'] * per:,.0f} | {t['server_cpu_ms_per_request']:.3f} |")
    print(f"\n/verify / /v1/score throughput (1 completion each): {report['verify_over_score_throughput']:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

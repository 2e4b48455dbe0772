#!/usr/bin/env python3
"""Stdio checks per second in every sandbox language, against the native way peers run them,
both sides at the same concurrency, in one run.

    python3 benches/languages.py [--grpo target/release/grpo] [--checks 60] [--workers 2]
                                 [--languages python,c,cpp,javascript,typescript]

Ours: `grpo serve` on a free port, one `POST /run_code` per check (SandboxFusion's request, as
verl sends it). Native, per check, in a fresh temporary directory:
  python      /usr/bin/python3 -I main.py < input
  c           gcc -O2 main.c && ./a.out < input          (compile + run, a process each)
  cpp         g++ -O2 main.cpp && ./a.out < input
  javascript  node main.js < input
  typescript  (no native side: Node.js 20 cannot run TypeScript without a package)

Every check of a compiled language is a distinct program (a numbered comment), so neither
side's compile cache helps: that is a group of G different completions. The `repeat` rows
send one program G times (C/C++ compile once on our side, from the cache after; the native
side compiles every time, as a subprocess reward does).

Every check's stdout is compared with the expected answer on both sides; a wrong answer
aborts the run. Prints checks/s per side and the ratio; report ratios, not absolute rates
(machines differ).
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One competitive-style task: read n and n numbers; print their sum and the largest prime
# factor count below 5000 (a little real work, the same in every language).
INPUT = "8\n5 3 9 1 7 2 8 6\n"
EXPECTED = "41 669\n"
PROGRAMS = {
    "python": (
        "import sys\n"
        "data = sys.stdin.read().split()\n"
        "n = int(data[0]); xs = list(map(int, data[1:1 + n]))\n"
        "sieve = [True] * 5000\n"
        "count = 0\n"
        "for i in range(2, 5000):\n"
        "    if sieve[i]:\n"
        "        count += 1\n"
        "        for j in range(i * i, 5000, i):\n"
        "            sieve[j] = False\n"
        "print(sum(xs), count)\n"
    ),
    "c": (
        "#include <stdio.h>\n#include <string.h>\n"
        "int main(void) { int n; long s = 0; if (scanf(\"%d\", &n) != 1) return 1;\n"
        "  for (int i = 0; i < n; i++) { long x; scanf(\"%ld\", &x); s += x; }\n"
        "  static char sieve[5000]; memset(sieve, 1, sizeof sieve); int count = 0;\n"
        "  for (int i = 2; i < 5000; i++) if (sieve[i]) { count++; for (int j = i * i; j < 5000; j += i) sieve[j] = 0; }\n"
        "  printf(\"%ld %d\\n\", s, count); return 0; }\n"
    ),
    "cpp": (
        "#include <bits/stdc++.h>\nusing namespace std;\n"
        "int main() { ios::sync_with_stdio(false); int n; cin >> n; vector<long long> v(n);\n"
        "  for (auto &x : v) cin >> x; vector<bool> sieve(5000, true); int count = 0;\n"
        "  for (int i = 2; i < 5000; i++) if (sieve[i]) { count++; for (int j = i * i; j < 5000; j += i) sieve[j] = false; }\n"
        "  cout << accumulate(v.begin(), v.end(), 0LL) << ' ' << count << '\\n'; }\n"
    ),
    "javascript": (
        "const data = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "const n = data[0]; const xs = data.slice(1, 1 + n);\n"
        "const sieve = new Array(5000).fill(true); let count = 0;\n"
        "for (let i = 2; i < 5000; i++) if (sieve[i]) { count++; for (let j = i * i; j < 5000; j += i) sieve[j] = false; }\n"
        "console.log(xs.reduce((a, b) => a + b, 0), count);\n"
    ),
    "typescript": (
        "const data: number[] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "const n: number = data[0]; const xs: number[] = data.slice(1, 1 + n);\n"
        "const sieve: boolean[] = new Array<boolean>(5000).fill(true); let count: number = 0;\n"
        "for (let i = 2; i < 5000; i++) if (sieve[i]) { count++; for (let j = i * i; j < 5000; j += i) sieve[j] = false; }\n"
        "console.log(xs.reduce((a: number, b: number) => a + b, 0), count);\n"
    ),
}
COMMENT = {"python": "# {}\n", "c": "// {}\n", "cpp": "// {}\n", "javascript": "// {}\n", "typescript": "// {}\n"}
NATIVE = {
    "python": ("main.py", None, ["/usr/bin/python3", "-I", "main.py"]),
    "c": ("main.c", ["gcc", "-O2", "main.c", "-o", "a.out"], ["./a.out"]),
    "cpp": ("main.cpp", ["g++", "-O2", "main.cpp", "-o", "a.out"], ["./a.out"]),
    "javascript": ("main.js", None, ["node", "main.js"]),
}
WIRE = {"javascript": "nodejs"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(grpo, port, workers):
    proc = subprocess.Popen([grpo, "serve", "--addr", f"127.0.0.1:{port}", "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("grpo serve did not start")


def ours(port, language, code):
    body = json.dumps({"code": code, "language": WIRE.get(language, language), "stdin": INPUT,
                       "compile_timeout": 60, "run_timeout": 10, "memory_limit_MB": 256})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/run_code", body, {"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    stdout = (answer.get("run_result") or {}).get("stdout")
    if answer.get("status") != "Success" or stdout != EXPECTED:
        sys.exit(f"{language}: wrong answer from grpo: {json.dumps(answer)[:600]}")


def native(language, code):
    name, compile_cmd, run_cmd = NATIVE[language]
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, name), "w") as f:
            f.write(code)
        if compile_cmd:
            subprocess.run(compile_cmd, cwd=d, check=True, capture_output=True)
        out = subprocess.run(run_cmd, cwd=d, input=INPUT.encode(), capture_output=True, timeout=20)
        if out.stdout.decode() != EXPECTED:
            sys.exit(f"{language}: wrong answer natively: {out.stdout!r} {out.stderr[:300]!r}")


def rate(fn, programs, workers):
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(fn, programs))
    return len(programs) / (time.perf_counter() - started)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grpo", default=os.path.join(ROOT, "target", "release", "grpo"))
    ap.add_argument("--checks", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--languages", default="python,c,cpp,javascript,typescript")
    args = ap.parse_args()
    port = free_port()
    server = start_server(args.grpo, port, args.workers)
    try:
        print(f"{args.checks} checks per row, {args.workers} at a time on each side, {os.cpu_count()} cores")
        print(f"{'language':<12}{'programs':<10}{'grpo-rs/s':>11}{'native/s':>10}{'ratio':>8}")
        for language in args.languages.split(","):
            base = PROGRAMS[language]
            distinct = [COMMENT[language].format(f"check {i} {time.time_ns()}") + base for i in range(args.checks)]
            ours(port, language, distinct[0])  # warm: runtime compiled, toolchain started
            for label, programs in [("distinct", distinct), ("repeat", [base] * args.checks)]:
                if label == "repeat" and language not in ("c", "cpp"):
                    continue
                mine = rate(lambda code: ours(port, language, code), programs, args.workers)
                if language in NATIVE:
                    theirs = rate(lambda code: native(language, code), programs, args.workers)
                    print(f"{language:<12}{label:<10}{mine:>11.1f}{theirs:>10.1f}{mine / theirs:>7.2f}x", flush=True)
                else:
                    print(f"{language:<12}{label:<10}{mine:>11.1f}{'-':>10}{'-':>8}", flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()

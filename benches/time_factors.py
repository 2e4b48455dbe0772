#!/usr/bin/env python3
"""Measures how much more CPU time a program needs in the sandbox than natively, per language.

Data sets set their time limits for native interpreters and compilers (CPython, g++, Node.js)
on a judge's machine. The sandbox runs CPython and QuickJS compiled to wasm, and C/C++ compiled
to wasm, so the same program needs more CPU time there. This script runs one fixed set of
programs both ways, on this machine, and prints each program's ratio of CPU times and the
median per language: the factor `grpo-sandbox` applies to native time limits
(`grpo-sandbox/src/judge/native_time.rs`).

    python3 benches/time_factors.py --grpo target/release/grpo [--rounds 3] [--json out.json]

Native: `python3` (the machine's CPython), `gcc -O2` / `g++ -O2`, `node`. Sandbox: `grpo
run-code`, whose result reports the guest's own CPU time (`cpu_ms`; compile time excluded).
Native CPU time is the child's user + system time (`getrusage`). Each program is sized to need
about half a second natively, so interpreter start-up does not matter; each pair is measured
`--rounds` times, alternating, and the minimum of each side is kept.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

PROGRAMS = {
    # name: {language: source}; every version computes the same thing and prints it.
    "arith_loop": {
        "python": """
s = 0
for i in range(6_000_000):
    s = (s + i * i) % 1_000_000_007
print(s)
""",
        "c": """
#include <stdio.h>
int main(void) {
    long long s = 0;
    for (long long r = 0; r < 40; r++)
        for (long long i = 0; i < 6000000; i++) s = (s + i * i + r) % 1000000007LL;
    printf("%lld\\n", s);
    return 0;
}
""",
        "javascript": """
let s = 0;
for (let i = 0; i < 6000000; i++) s = (s + (i * i) % 1000000007) % 1000000007;
console.log(s);
""",
    },
    "dict_count": {
        "python": """
counts = {}
x = 1
for _ in range(1_500_000):
    x = (x * 1103515245 + 12345) % 2147483648
    k = x % 100_003
    counts[k] = counts.get(k, 0) + 1
print(len(counts), max(counts.values()))
""",
        "cpp": """
#include <cstdio>
#include <unordered_map>
#include <algorithm>
int main() {
    long long total = 0; int best = 0; size_t size = 0;
    for (int r = 0; r < 6; r++) {
        std::unordered_map<long long, int> counts;
        long long x = 1 + r;
        for (int i = 0; i < 1500000; i++) {
            x = (x * 1103515245LL + 12345) % 2147483648LL;
            counts[x % 100003]++;
        }
        for (auto &kv : counts) best = std::max(best, kv.second);
        size = counts.size(); total += size;
    }
    std::printf("%zu %d %lld\\n", size, best, total);
    return 0;
}
""",
        "javascript": """
const counts = new Map();
let x = 1;
for (let i = 0; i < 1500000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const k = x % 100003;
    counts.set(k, (counts.get(k) || 0) + 1);
}
let best = 0;
for (const v of counts.values()) best = Math.max(best, v);
console.log(counts.size, best);
""",
    },
    "sort": {
        "python": """
x = 7
a = []
for _ in range(600_000):
    x = (x * 48271) % 2147483647
    a.append(x)
a.sort()
print(a[0], a[len(a) // 2], a[-1])
""",
        "cpp": """
#include <cstdio>
#include <vector>
#include <algorithm>
int main() {
    long long acc = 0;
    for (int r = 0; r < 12; r++) {
        std::vector<long long> a; a.reserve(600000);
        long long x = 7 + r;
        for (int i = 0; i < 600000; i++) { x = (x * 48271) % 2147483647; a.push_back(x); }
        std::sort(a.begin(), a.end());
        acc += a[a.size() / 2];
    }
    std::printf("%lld\\n", acc);
    return 0;
}
""",
        "javascript": """
let x = 7;
const a = [];
for (let i = 0; i < 600000; i++) { x = (x * 48271) % 2147483647; a.push(x); }
a.sort((p, q) => p - q);
console.log(a[0], a[a.length >> 1], a[a.length - 1]);
""",
    },
    "recursion": {
        "python": """
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(30))
""",
        "c": """
#include <stdio.h>
static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(void) { long s = 0; for (int r = 0; r < 3; r++) s += fib(35 + r % 2); printf("%ld\\n", s); return 0; }
""",
        "javascript": """
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
console.log(fib(32));
""",
    },
    "bfs_grid": {
        "python": """
from collections import deque
n = 700
dist = [[-1] * n for _ in range(n)]
dist[0][0] = 0
q = deque([(0, 0)])
while q:
    r, c = q.popleft()
    d = dist[r][c] + 1
    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
        if 0 <= nr < n and 0 <= nc < n and dist[nr][nc] < 0 and (nr * 7 + nc * 13) % 11:
            dist[nr][nc] = d
            q.append((nr, nc))
print(dist[n - 1][n - 1])
""",
        "cpp": """
#include <cstdio>
#include <deque>
#include <vector>
int main() {
    const int n = 700; long long acc = 0;
    for (int round = 0; round < 15; round++) {
        std::vector<std::vector<int>> dist(n, std::vector<int>(n, -1));
        dist[0][0] = 0;
        std::deque<std::pair<int,int>> q; q.push_back({0, 0});
        int dr[4] = {1, -1, 0, 0}, dc[4] = {0, 0, 1, -1};
        while (!q.empty()) {
            auto [r, c] = q.front(); q.pop_front();
            int d = dist[r][c] + 1;
            for (int k = 0; k < 4; k++) {
                int nr = r + dr[k], nc = c + dc[k];
                if (nr >= 0 && nr < n && nc >= 0 && nc < n && dist[nr][nc] < 0 && (nr * 7 + nc * 13) % 11) {
                    dist[nr][nc] = d; q.push_back({nr, nc});
                }
            }
        }
        acc += dist[n - 1][n - 1];
    }
    std::printf("%lld\\n", acc);
    return 0;
}
""",
        "javascript": """
const n = 700;
const dist = new Int32Array(n * n).fill(-1);
dist[0] = 0;
const q = [0];
let head = 0;
while (head < q.length) {
    const cell = q[head++];
    const r = Math.floor(cell / n), c = cell % n;
    const d = dist[cell] + 1;
    for (const [nr, nc] of [[r + 1, c], [r - 1, c], [r, c + 1], [r, c - 1]]) {
        if (nr >= 0 && nr < n && nc >= 0 && nc < n && dist[nr * n + nc] < 0 && (nr * 7 + nc * 13) % 11) {
            dist[nr * n + nc] = d;
            q.push(nr * n + nc);
        }
    }
}
console.log(dist[n * n - 1]);
""",
    },
}

NATIVE = {"python": ["python3"], "javascript": ["node"]}
# C and C++ share one factor (the same compiler, libc and code generator in the sandbox).
FAMILY = {"python": "python", "c": "c/cpp", "cpp": "c/cpp", "javascript": "javascript"}
SUFFIX = {"python": ".py", "c": ".c", "cpp": ".cpp", "javascript": ".js"}


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_native(language, path, work):
    if language in ("c", "cpp"):
        compiler = "gcc" if language == "c" else "g++"
        binary = os.path.join(work, "native-" + os.path.basename(path) + ".bin")
        if not os.path.exists(binary):
            subprocess.run([compiler, "-O2", "-o", binary, path], check=True)
        command = [binary]
    else:
        command = NATIVE[language] + [path]
    before = children_cpu()
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return (children_cpu() - before) * 1e3, out.strip()


def run_sandbox(grpo, language, path):
    out = subprocess.run(
        [grpo, "run-code", path, "--timeout-ms", "60000", "--memory-mb", "1024"],
        check=True, capture_output=True, text=True,
    ).stdout
    result = json.loads(out)
    if result.get("status") != "ok":
        raise SystemExit(f"{path}: the sandbox run failed: {result}")
    return result["cpu_ms"], result["stdout"].strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grpo", default="target/release/grpo")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    for tool in ("python3", "gcc", "g++", "node"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed for the native side")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, versions in PROGRAMS.items():
            for language, source in versions.items():
                path = os.path.join(work, name + SUFFIX[language])
                with open(path, "w") as f:
                    f.write(source)
                native, sandbox = [], []
                for _ in range(args.rounds):
                    n_ms, n_out = run_native(language, path, work)
                    s_ms, s_out = run_sandbox(args.grpo, language, path)
                    if n_out != s_out:
                        raise SystemExit(f"{name} ({language}): native printed {n_out!r}, the sandbox {s_out!r}")
                    native.append(n_ms)
                    sandbox.append(s_ms)
                row = {
                    "program": name,
                    "language": language,
                    "native_cpu_ms": min(native),
                    "sandbox_cpu_ms": min(sandbox),
                }
                row["ratio"] = row["sandbox_cpu_ms"] / row["native_cpu_ms"]
                rows.append(row)
                print(f"{name:12} {language:10} native {row['native_cpu_ms']:8.1f} ms  "
                      f"sandbox {row['sandbox_cpu_ms']:8.1f} ms  ratio {row['ratio']:5.2f}", flush=True)
    factors = {}
    for family in sorted(set(FAMILY.values())):
        ratios = [r["ratio"] for r in rows if FAMILY[r["language"]] == family]
        factors[family] = {
            "median": statistics.median(ratios),
            "min": min(ratios),
            "max": max(ratios),
            "programs": len(ratios),
        }
        f = factors[family]
        print(f"{family:10} median {f['median']:.2f}  (min {f['min']:.2f}, max {f['max']:.2f}, {f['programs']} programs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "factors": factors}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

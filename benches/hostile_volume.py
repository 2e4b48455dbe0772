#!/usr/bin/env python3
"""Escape attempts at volume: thousands of generated hostile Python programs through one
`grpo serve`, each with a 2 s limit, then a check that none of them touched the host.

    python3 benches/hostile_volume.py [--programs 10000] [--seed 1] [--threads 4]
                                      [--grpo target/release/grpo]

Python 3 standard library only. The programs are mutations of the hostile suite (reading host
files and a canary whose path they are given, writing marker files into the host's /tmp, the
working directory, $HOME and /, processes, sockets to a listening host port, memory, stack and
output bombs, infinite loops), nested in try/except, exec and eval, combined two or three at
a time, with randomised sizes. After the run:

- no marker file exists anywhere the programs aimed at, and the canary is unchanged;
- neither the canary's secret nor the server's environment secret appears in any output;
- the host port the programs tried to reach received no connection;
- the server has no child process and answers a well-formed request normally.

Prints the verdicts by kind of attack and exits non-zero on any host effect.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from grpo_server import binary, children


def attacks(ctx: dict, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, statement) pairs; each statement is one attack, sized by `rng`."""
    marker = ctx["marker"]
    n = rng.choice([10, 1000, 10**6, 10**9])
    depth = rng.choice([100, 10_000, 10**6])
    return [
        ("read host file", f"print(open({rng.choice(['/etc/passwd', '/etc/shadow', '/proc/self/environ', '/proc/1/cmdline', '../../../etc/hostname'])!r}).read())"),
        ("read canary", f"print(open({ctx['canary']!r}).read())"),
        ("list host dirs", f"import os; print(os.listdir({rng.choice(['/', '/etc', '/home', '/proc', '..', ctx['canary_dir']])!r}))"),
        ("write marker", f"open({rng.choice(['/tmp/', '', '/', os.path.expanduser('~') + '/', '../'])!r} + {marker!r}, 'w').write('x')"),
        ("overwrite canary", f"open({ctx['canary']!r}, 'w').write('pwned')"),
        ("environment", "import os; print(dict(os.environ))"),
        ("process", rng.choice([
            "import os; os.system('touch /tmp/" + marker + "')",
            "import subprocess; subprocess.run(['touch', '/tmp/" + marker + "'])",
            "import os; os.fork()",
            "import os; os.execv('/bin/sh', ['sh', '-c', 'touch /tmp/" + marker + "'])",
            "import pty; pty.spawn('/bin/sh')",
        ])),
        ("socket", rng.choice([
            f"import socket; s = socket.socket(); s.connect(('127.0.0.1', {ctx['port']})); s.send(b'escaped')",
            f"import socket; socket.create_connection(('localhost', {ctx['port']}), timeout=1).send(b'x')",
            f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{ctx['port']}/', timeout=1)",
        ])),
        ("memory bomb", rng.choice([f"x = 'a' * {n}; print(len(x))", f"x = [0] * {n}; print(len(x))",
                                    f"x = bytearray({n}); print(len(x))", "x = []\nwhile True: x.append(' ' * 10**6)"])),
        ("stack bomb", rng.choice([f"import sys; sys.setrecursionlimit({depth * 10})\ndef f(n): return f(n + 1)\nf(0)",
                                   "def f(): return f()\nf()", f"eval('(' * {depth} + ')' * {depth})"])),
        ("output flood", rng.choice([f"print('x' * {n})", "while True: print('y' * 4096)",
                                     f"import sys; sys.stdout.write('z' * {n}); sys.stderr.write('e' * {n})"])),
        ("cpu loop", rng.choice(["while True: pass", "import time; time.sleep(100)", "sum(range(10**12))"])),
        ("native code", rng.choice(["import ctypes; ctypes.CDLL(None).system(b'touch /tmp/" + marker + "')",
                                    "import _posixsubprocess", "import mmap; mmap.mmap(-1, 1 << 40)"])),
        ("threads and signals", rng.choice(["import threading; threading.Thread(target=lambda: None).start()",
                                            "import signal, os; os.kill(1, signal.SIGKILL)",
                                            "import os; os.kill(os.getppid(), 9)"])),
    ]


def wrap(statement: str, rng: random.Random) -> str:
    """Nests an attack: plain, in try/except, through exec or eval, or in a function."""
    style = rng.randrange(5)
    if style == 0:
        return statement
    if style == 1:
        body = "\n".join("    " + line for line in statement.splitlines())
        return f"try:\n{body}\nexcept BaseException as e:\n    print(type(e).__name__)"
    if style == 2:
        return f"exec({statement!r})"
    if style == 3:
        return f"exec(compile({statement!r}, '<x>', 'exec'), {{}})"
    body = "\n".join("    " + line for line in statement.splitlines())
    return f"def attack():\n{body}\nattack()"


def generate(count: int, seed: int, ctx: dict) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    programs = []
    for i in range(count):
        ctx = {**ctx, "marker": f"{ctx['marker_prefix']}-{i}"}
        pool = attacks(ctx, rng)
        # Mostly quick attacks; an endless loop (2 s) in about one program in twenty.
        quick = [a for a in pool if a[0] != "cpu loop"]
        chosen = rng.sample(quick, rng.choice([1, 1, 2, 3]))
        if rng.random() < 0.05:
            chosen.append(pool[[k for k, _ in pool].index("cpu loop")])
        kind = " + ".join(k for k, _ in chosen)
        source = "\n".join(wrap(s, rng) for _, s in chosen)
        programs.append((kind, source))
    return programs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--grpo")
    args = ap.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="grpo-hostile-"))
    canary_dir = work / "canary"
    canary_dir.mkdir()
    canary = canary_dir / "secret.txt"
    canary_secret = "canary-" + secrets.token_hex(16)
    canary.write_text(canary_secret)
    env_secret = "envsecret-" + secrets.token_hex(16)
    marker_prefix = "grpo-escape-" + secrets.token_hex(6)

    # A host port the programs try to reach; any connection is an escape.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    connections = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                connections.append(conn)
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    ctx = {"canary": str(canary), "canary_dir": str(canary_dir), "port": listener.getsockname()[1],
           "marker_prefix": marker_prefix}
    programs = generate(args.programs, args.seed, ctx)

    env = {**os.environ, "TMPDIR": str(work / "tmp"), "GRPO_TEST_SECRET": env_secret}
    (work / "tmp").mkdir()
    server = subprocess.Popen([binary(args.grpo), "serve", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              text=True, env=env, cwd=str(work))
    line = server.stdout.readline()
    if not line:
        sys.exit("grpo serve did not start")
    host, port = json.loads(line)["listening"].rsplit(":", 1)
    problems: list[str] = []
    verdicts: dict[str, dict[str, int]] = {}
    lock = threading.Lock()
    index = [0]
    slowest = [0.0]

    def worker():
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        while True:
            with lock:
                i = index[0]
                index[0] += 1
            if i >= len(programs):
                break
            kind, source = programs[i]
            body = json.dumps({"code": source, "language": "python", "run_timeout": 2, "memory_limit_MB": 256})
            started = time.perf_counter()
            conn.request("POST", "/run_code", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            took = time.perf_counter() - started
            text = data.decode("utf-8", "replace")
            with lock:
                slowest[0] = max(slowest[0], took)
                if response.status != 200:
                    problems.append(f"program {i} ({kind}): HTTP {response.status} {text[:200]}")
                    continue
                result = json.loads(data)
                outcome = result.get("status", "?")
                run = result.get("run_result") or {}
                outcome += "/" + str(run.get("status", "-"))
                for k in kind.split(" + "):
                    verdicts.setdefault(k, {}).setdefault(outcome, 0)
                    verdicts[k][outcome] += 1
                if canary_secret in text or env_secret in text:
                    problems.append(f"program {i} ({kind}) printed a host secret")
        conn.close()

    started = time.perf_counter()
    try:
        pool = [threading.Thread(target=worker) for _ in range(args.threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        seconds = time.perf_counter() - started
        # The server still answers a well-formed request.
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", "/run_code", json.dumps({"code": "print(6 * 7)", "language": "python"}),
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        final = json.loads(response.read())
        if response.status != 200 or (final.get("run_result") or {}).get("stdout") != "42\n":
            problems.append(f"the server no longer answers normally: {final}")
        children_left = children(server.pid)
        if children_left:
            problems.append(f"{children_left} child processes of the server")
    finally:
        server.terminate()
        server.wait(timeout=30)
        stop.set()

    # Host effects.
    places = [pathlib.Path("/tmp"), work, pathlib.Path.home(), pathlib.Path("/"), work.parent]
    for place in places:
        try:
            found = [p.name for p in place.iterdir() if p.name.startswith(marker_prefix)]
        except OSError:
            continue
        if found:
            problems.append(f"marker files in {place}: {found[:5]}")
    if canary.read_text() != canary_secret:
        problems.append("the canary file was changed")
    if connections:
        problems.append(f"{len(connections)} connections reached the host port")

    print(f"{len(programs):,} hostile programs in {seconds:.0f} s ({len(programs) / seconds:,.0f}/s), "
          f"slowest answer {slowest[0]:.2f} s (limit 2 s of CPU per program)\n")
    print("| attack | programs | outcomes (status/run status: count) |")
    print("|---|---:|---|")
    for kind in sorted(verdicts):
        outcomes = verdicts[kind]
        print(f"| {kind} | {sum(outcomes.values()):,} | "
              + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1])) + " |")
    shutil.rmtree(work, ignore_errors=True)
    if problems:
        print("\nFAILED:\n  " + "\n  ".join(problems[:30]))
        return 1
    print("\nOK: no host file read or changed, no marker written, no connection, no process left, "
          "the server still answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())

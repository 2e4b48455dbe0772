#!/usr/bin/env python3
"""Proof with real clients: verl's unmodified SandboxFusion client, and the TRL adapter,
against a running `grpo serve`.

1. Starts `grpo serve --addr 127.0.0.1:0` (the binary from $GRPO_BIN, else target/release or
   target/debug) and reads the address it prints.
2. Downloads the verl wheel from PyPI (`pip download verl --no-deps`), takes its
   `verl/utils/reward_score/sandbox_fusion/{__init__,utils}.py` out of the wheel unchanged and
   loads them by path as a package of their own (importing `verl` itself would pull torch
   and ray). Those files need only `requests`.
3. Runs verl's `check_correctness` and `compute_score` on stdin/stdout cases, `fn_name` cases
   (verl's wrapper star-imports stdlib modules and runs as `__main__`) and `assert_case`
   cases, with correct, wrong, crashing and looping programs, and checks verl's verdicts.
4. Calls `/run_code` through SandboxFusion's own Python SDK (PyPI `sandbox-fusion` 0.3.7,
   installed by the shell script): its `run_code` parses every answer into its pydantic
   `RunCodeResponse` (so a field of the wrong shape fails here), in C++, JavaScript,
   TypeScript and Python (its language list has no `c`), with `files` and `fetch_files`, a
   compile error, a failed assert and a time limit, and its `summary_run_code_result` reads
   each verdict.
5. Calls the TRL reward-function adapter of `clients/python/grpo_client.py` the way TRL's
   `GRPOTrainer` calls an async reward function, on a small batch of two groups.

Run: `scripts/verl_client_check.sh` (makes a venv with requests, httpx and SandboxFusion's SDK,
then runs this).
Exit status 0 when every check passes.
"""

from __future__ import annotations

import asyncio
import glob
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))

import grpo_client  # noqa: E402


sys.path.insert(0, str(ROOT / "benches"))
import grpo_server  # noqa: E402  (finding the binary, starting a server)


def find_binary() -> str:
    return grpo_server.binary()


def start_server(binary: str, token: str | None = None) -> tuple[subprocess.Popen, str]:
    """`grpo serve` on a free loopback port, requiring `token` when given (verl's client
    sends no header, so its server has none)."""
    return grpo_server.serve(binary, token=token)


def load_verl_sandbox_fusion(workdir: str):
    """verl's sandbox_fusion package, from the PyPI wheel, byte for byte."""
    version = os.environ.get("VERL_VERSION")
    spec = f"verl=={version}" if version else "verl"
    subprocess.run([sys.executable, "-m", "pip", "download", spec, "--no-deps", "-q", "-d", workdir], check=True)
    wheel = sorted(glob.glob(os.path.join(workdir, "verl-*.whl")))[-1]
    package_dir = pathlib.Path(workdir) / "verl_sandbox_fusion"
    package_dir.mkdir()
    with zipfile.ZipFile(wheel) as z:
        for name in ("__init__.py", "utils.py"):
            data = z.read(f"verl/utils/reward_score/sandbox_fusion/{name}")
            (package_dir / name).write_bytes(data)
    spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["verl_sandbox_fusion"] = module
    spec.loader.exec_module(module)
    return module, os.path.basename(wheel)


FAILURES: list[str] = []


def expect(name: str, got, want) -> None:
    ok = got == want
    print(f"{'ok  ' if ok else 'FAIL'} {name}: got {got!r}" + ("" if ok else f", want {want!r}"))
    if not ok:
        FAILURES.append(name)


def verl_checks(verl, url: str) -> None:
    run_code = url + "/run_code"
    verl_utils = sys.modules["verl_sandbox_fusion.utils"]
    check = verl_utils.check_correctness

    # stdin/stdout: A + B.
    io_cases = {"inputs": ["1 2\n", "10 -4\n", "0 0\n"], "outputs": ["3\n", "6\n", "0\n"]}
    programs = {
        "correct": ("a, b = map(int, input().split())\nprint(a + b)", [True, True, True]),
        "wrong": ("a, b = map(int, input().split())\nprint(a - b)", [False, False, True]),
        "runtime error": ("a, b = map(int, input().split())\nprint(a / 0)", [-2, -2, -2]),
        "syntax error": ("print(", [-2, -2, -2]),
        "infinite loop": ("while True:\n    pass", [-3, -3, -3]),
    }
    for name, (code, want) in programs.items():
        results, metadata = check(run_code, io_cases, code, timeout=2)
        expect(f"verl stdin/stdout, {name}", results, want)

    # Other languages, as verl sends them (`language=`): C++ compiled to wasm, a compile error,
    # JavaScript and TypeScript.
    others = {
        "cpp correct": ("cpp", "#include <bits/stdc++.h>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }", [True, True, True]),
        "cpp compile error": ("cpp", "int main() { return missing; }", [-4, -4, -4]),
        "cpp wrong": ("cpp", "#include <cstdio>\nint main() { int a, b; std::scanf(\"%d %d\", &a, &b); std::printf(\"%d\\n\", a * b); }", [False, False, True]),
        "nodejs correct": ("nodejs", "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(' ').map(Number);\nconsole.log(a + b);", [True, True, True]),
        "typescript correct": ("typescript", "const [a, b]: number[] = require('fs').readFileSync(0, 'utf8').trim().split(' ').map(Number);\nconsole.log(a + b);", [True, True, True]),
    }
    for name, (language, code, want) in others.items():
        results, metadata = check(run_code, io_cases, code, timeout=30, language=language)
        expect(f"verl stdin/stdout, {name}", results, want)

    # fn_name: verl wraps the code, star-imports the stdlib and runs as __main__.
    fn_cases = {"inputs": ["[2, 7, 11, 15]\n9", "[3, 2, 4]\n6"], "outputs": ["[0, 1]", "[1, 2]"], "fn_name": "twoSum"}
    solution = (
        "class Solution:\n"
        "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
        "        seen = {}\n"
        "        for i, n in enumerate(nums):\n"
        "            if target - n in seen:\n"
        "                return [seen[target - n], i]\n"
        "            seen[n] = i\n"
    )
    results, _ = check(run_code, fn_cases, solution, timeout=5)
    expect("verl fn_name, correct (Solution class, typing names from star import)", results, [True, True])
    results, _ = check(run_code, fn_cases, solution.replace("[seen[target - n], i]", "[i, seen[target - n]]"), timeout=5)
    expect("verl fn_name, wrong", results, [False, False])
    plain = "def twoSum(nums, target):\n    return [0, 1]\n"
    results, _ = check(run_code, fn_cases, plain, timeout=5)
    expect("verl fn_name, plain function right on one case", results, [True, False])

    # assert_case: the asserts are appended to the program.
    assert_cases = {"inputs": ["", ""], "outputs": [None, None],
                    "assert_case": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]}
    results, _ = check(run_code, assert_cases, "def add(a, b):\n    return a + b\n", timeout=5)
    expect("verl assert_case, correct", results, [True, True])
    results, _ = check(run_code, assert_cases, "def add(a, b):\n    return a * b\n", timeout=5)
    expect("verl assert_case, wrong", results, [-2, -2])

    # verl's compute_score on completions with fenced code.
    correct = "Here you go:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    wrong = "```python\nprint(3)\n```"
    score, _ = verl.compute_score(run_code, None, 1024, correct, json.dumps(io_cases), timeout=5)
    expect("verl compute_score, correct", score, 1.0)
    score, _ = verl.compute_score(run_code, None, 1024, wrong, io_cases, timeout=5)
    expect("verl compute_score, right on one case of three", round(score, 4), round(1 / 3, 4))

    # Load with waiting programs, as verl's high-concurrency check has it: 100 cases at
    # once, four of which sleep past their 15 s limit. A sleeping program holds no sandbox
    # worker, so the other 96 are answered while the four sleep, within verl's 30 s HTTP
    # timeout, with the server's default workers.
    sleepers = {5, 30, 60, 90}
    load_cases = {"inputs": [f"sleep {i}\n" if i in sleepers else f"{i} {i}\n" for i in range(100)],
                  "outputs": ["\n" if i in sleepers else f"{2 * i}\n" for i in range(100)]}
    sleepy = ("import sys, time\nline = sys.stdin.readline()\nif line.startswith('sleep'):\n"
              "    time.sleep(20)\na, b = map(int, line.split())\nprint(a + b)\n")
    started = time.monotonic()
    results, _ = check(run_code, load_cases, sleepy, timeout=15)
    expect("verl, 100 concurrent cases, 4 sleeping past the limit",
           results, [-3 if i in sleepers else True for i in range(100)])
    print(f"     (answered in {time.monotonic() - started:.1f} s)")

    # verl's call_sandbox_api directly: the response shape it reads.
    response, error = verl_utils.call_sandbox_api(run_code, "import sys\nprint(sys.stdin.read().upper())", "abc", 5, 5, 1024)
    expect("verl call_sandbox_api, no error", error, None)
    expect("verl call_sandbox_api, status", response["status"], "Success")
    expect("verl call_sandbox_api, stdout", response["run_result"]["stdout"], "ABC\n")
    response, error = verl_utils.call_sandbox_api(run_code, "print(1)", None, 5, 5, 1024, language="go")
    expect("verl call_sandbox_api, a language this server does not run refused (HTTP 422)",
           response is None and "422" in error, True)


def trl_checks(url: str) -> None:
    """The adapter as TRL's GRPOTrainer calls an async reward function: keyword arguments
    `prompts`, `completions` (conversational here) and one list per dataset column, each
    row repeated num_generations times."""
    reward = grpo_client.trl_reward_function(url, column="verification_info")
    square = {"language": "python", "test_cases": [
        {"input": "3\n", "output": "9\n", "type": "stdin_stdout"},
        {"input": "0\n", "output": "0\n", "type": "stdin_stdout"}]}
    double = {"language": "python", "test_cases": [
        {"input": "3\n", "output": "6\n", "type": "stdin_stdout"},
        {"input": "0\n", "output": "0\n", "type": "stdin_stdout"}]}
    answers = ["n = int(input())\nprint(n * n)", "n = int(input())\nprint(n + n)", "print(", "print(0)"]
    completions = [[{"role": "assistant", "content": f"```python\n{a}\n```"}] for a in answers * 2]
    infos = [square] * 4 + [double] * 4
    prompts = [[{"role": "user", "content": "square"}]] * 4 + [[{"role": "user", "content": "double"}]] * 4
    rewards = asyncio.run(reward(prompts=prompts, completions=completions, verification_info=infos))
    # Partial credit (open-r1 shape): square group 1, 1/2 (0 → 0), 0, 1/2; double group 1/2, 1, 0, 1/2.
    expect("TRL adapter, two groups in order", rewards, [1.0, 0.5, 0.0, 0.5, 0.5, 1.0, 0.0, 0.5])
    expect("TRL adapter is a coroutine function", asyncio.iscoroutinefunction(reward), True)

    math_reward = grpo_client.trl_reward_function(url)
    rewards = asyncio.run(math_reward(prompts=["2+2?"] * 2, completions=["\\boxed{4}", "\\boxed{5}"], answer=["4", "4"]))
    expect("TRL adapter, math answers from an `answer` column", rewards, [1.0, 0.0])

    # A server that is gone: the adapter retries, then raises (never a silent 0).
    dead = grpo_client.trl_reward_function(
        "http://127.0.0.1:9", client=grpo_client.AsyncGrpoClient("http://127.0.0.1:9", retries=1, backoff=0.01))
    try:
        asyncio.run(dead(prompts=["p"], completions=["\\boxed{1}"], answer=["1"]))
        expect("TRL adapter raises when the service is unreachable", "returned", "raised")
    except grpo_client.GrpoServiceError as e:
        expect("TRL adapter raises when the service is unreachable", "after 2 attempts" in str(e), True)


def sandbox_fusion_checks(url: str) -> None:
    """SandboxFusion's own SDK against `/run_code`, in every language the server runs."""
    import base64

    import sandbox_fusion as sf

    def run(language: str, code: str, **kw) -> "sf.RunCodeResponse":
        request = sf.RunCodeRequest(code=code, language=language, compile_timeout=30, run_timeout=5, **kw)
        return sf.run_code(request, endpoint=url, max_attempts=1)

    mapping = sf.SummaryMapping(Success="ok", Failed="failed", CompileFailed="compile error",
                                RunTimeout="timeout", RunFailed="run failed")
    # C stdio for the files: zig's libc++ for wasm32-wasi has no <fstream>.
    cpp = (
        "#include <bits/stdc++.h>\n"
        "int main() { long long a, b; FILE *in = std::fopen(\"in.txt\", \"r\");\n"
        "  if (std::fscanf(in, \"%lld %lld\", &a, &b) != 2) return 1;\n"
        "  FILE *out = std::fopen(\"out.txt\", \"w\"); std::fprintf(out, \"%lld\", a * b); std::fclose(out);\n"
        "  std::cout << a + b << \"\\n\"; }"
    )
    files = {"in.txt": base64.b64encode(b"6 7").decode(), "unused.txt": None}
    r = run("cpp", cpp, files=files, fetch_files=["out.txt"])
    expect("SandboxFusion SDK, cpp with files: status", r.status, sf.RunStatus.Success)
    expect("SandboxFusion SDK, cpp: compile_result finished with 0",
           (r.compile_result.status, r.compile_result.return_code), (sf.CommandRunStatus.Finished, 0))
    expect("SandboxFusion SDK, cpp: raw stdout", r.run_result.stdout, "13\n")
    expect("SandboxFusion SDK, cpp: fetched file", base64.b64decode(r.files.get("out.txt", "")), b"42")
    expect("SandboxFusion SDK, cpp: summary", sf.summary_run_code_result(r, mapping), "ok")

    r = run("cpp", "int main() { return missing; }")
    expect("SandboxFusion SDK, cpp compile error: status, run_result",
           (r.status, r.run_result), (sf.RunStatus.Failed, None))
    expect("SandboxFusion SDK, cpp compile error: non-zero return code with the compiler's stderr",
           (r.compile_result.return_code != 0, "missing" in (r.compile_result.stderr or "")), (True, True))
    expect("SandboxFusion SDK, cpp compile error: summary", sf.summary_run_code_result(r, mapping), "compile error")

    r = run("cpp", "#include <cassert>\nint main() { assert(1 + 1 == 3); }")
    expect("SandboxFusion SDK, cpp failed assert: return code -6", r.run_result.return_code, -6)
    expect("SandboxFusion SDK, cpp failed assert: summary", sf.summary_run_code_result(r, mapping), "run failed")

    r = run("nodejs", "const s = require('fs').readFileSync(0, 'utf8'); console.log(s.trim().split(' ').length);",
            stdin="a b c")
    expect("SandboxFusion SDK, nodejs: no compile_result, raw stdout",
           (r.status, r.compile_result, r.run_result.stdout), (sf.RunStatus.Success, None, "3\n"))

    r = run("typescript", "const n: number = 21;\nconsole.log(n * 2);")
    expect("SandboxFusion SDK, typescript", (r.status, r.run_result.stdout), (sf.RunStatus.Success, "42\n"))

    r = sf.run_code(sf.RunCodeRequest(code="while True: pass", language="python", run_timeout=0.5),
                    endpoint=url, max_attempts=1)
    expect("SandboxFusion SDK, python endless loop: TimeLimitExceeded",
           (r.status, r.run_result.status), (sf.RunStatus.Failed, sf.CommandRunStatus.TimeLimitExceeded))
    expect("SandboxFusion SDK, python endless loop: summary", sf.summary_run_code_result(r, mapping), "timeout")


def main() -> int:
    binary = find_binary()
    server, url = start_server(binary)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            verl, wheel = load_verl_sandbox_fusion(workdir)
            print(f"server {url}; verl client from {wheel}")
            verl_checks(verl, url)
        sandbox_fusion_checks(url)
        trl_checks(url)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"server exit status {server.returncode}")
    if server.returncode != 0:
        FAILURES.append("server exit status")
    return summary()


def summary() -> int:
    """Prints the failed checks; the exit status."""
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed: {FAILURES}")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""grpo_rewards inside Ray: a real local cluster, actors scoring a mixed math and code batch.

    scripts/ray_check.sh                  # target/ray-venv: ray from PyPI and the wheel; runs this
    python scripts/ray_check.py [--repeat N]   # where ray and grpo_rewards are installed

Starts a head node with `ray start --head --num-cpus 2 --block` (in a session of its own, so
that stopping it ends exactly the processes it started, on success or failure), connects with
`ray.init(address=...)`, and checks:

1. two actors of one CPU each (`max_concurrency=2`: methods run off the main thread) score
   the same batch at once: math (651 benchmark pairs, repeated `--repeat` times, through
   `check_math_batch`, TRL's `math_reward` and verl's `compute_score` loaded by file path as
   verl loads it) and code (`Pack("builtin:python")`, pickled to the actor, scoring reference,
   wrong and crashing programs in the sandbox). Each actor's results equal (`==`, every field)
   the same batch scored in this process;
2. each one-CPU actor chose 1 thread by the `ray` rule although its affinity mask shows every
   core, and ran on 1: runtime workers, sandbox concurrency, the compile pool, the most
   `grpo-math` threads seen during its batch; its CPU time over the scoring stayed within its
   CPU (printed, asserted with a margin for Ray's own threads);
3. a two-CPU actor, started once the first two are gone, chose 2 and ran on 2;
4. reward callables pickled into a Ray task (`task_reward`, `math_reward`, `compute_score`)
   give the in-process rewards;
5. no actor's scoring installed a Python signal handler;
6. with a grpo binary (`--grpo`, or `$GRPO_BIN`), the book's recipe for a pool of `grpo serve`
   replicas, one per node (`GrpoServe` below: an actor that runs the server with `--workers`
   set to its CPUs), answers `/v1/score` with the in-process rewards for the code tasks.

Prints one line per actor with its thread counts, and the wall time.
"""
import argparse
import importlib.util
import json
import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
MATH_PAIRS = ROOT / "benches" / "data" / "math_pairs.jsonl"
CODE_TASKS = 12  # of builtin:python, each with three completions

# Ray's token authentication, with a token of this run's own (the head, this driver and the
# workers, which inherit it, all read it from the environment).
os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
# The check is of the rule's Ray step: an explicit count would win over it in every worker.
os.environ.pop("GRPO_REWARDS_THREADS", None)

import ray  # noqa: E402  (after its environment)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_members(pgid):
    """The processes still in process group `pgid`."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ')'.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid:
            out.append(int(entry))
    return out


class Cluster:
    """`ray start --head --block` in a session of its own; `stop` ends that session's processes."""

    def __init__(self, cpus, temp_dir):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        ray_cli = pathlib.Path(sys.executable).with_name("ray")
        cmd = [str(ray_cli), "start", "--head", "--block", f"--num-cpus={cpus}", "--num-gpus=0",
               f"--port={self.port}", "--node-ip-address=127.0.0.1", "--include-dashboard=false",
               "--disable-usage-stats", f"--temp-dir={temp_dir}"]
        self.log = open(pathlib.Path(temp_dir).parent / "ray-start.log", "w+")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.log.seek(0)
            if "Ray runtime started" in self.log.read():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        self.log.seek(0)
        raise RuntimeError(f"ray start did not come up:\n{self.log.read()[-3000:]}")

    def stop(self):
        """SIGTERM to the head's process group, then SIGKILL to what is left after 20 s."""
        pgid = self.proc.pid
        for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
            if not group_members(pgid):
                break
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + grace
            while group_members(pgid) and time.monotonic() < deadline:
                self.proc.poll()  # reap the head itself
                time.sleep(0.2)
        self.proc.poll()
        left = group_members(pgid)
        self.log.close()
        if left:
            raise RuntimeError(f"processes of the Ray head still running: {left}")


def load_batch(repeat):
    pairs = [json.loads(line) for line in MATH_PAIRS.read_text().splitlines() if line.strip()]
    math = [(p["gold"], p["pred"]) for p in pairs] * repeat
    from grpo_rewards import Pack

    pack = Pack("builtin:python")
    code = []
    for task_id in pack.ids()[:CODE_TASKS]:
        reference = pack.task(task_id)["reference"]
        code.append((task_id, [f"```python\n{reference}```", "```python\nprint(0)\n```",
                               "```python\nraise ValueError('no')\n```"]))
    return math, pack, code


def thread_names():
    names = []
    for t in os.listdir("/proc/self/task"):
        try:
            names.append(pathlib.Path(f"/proc/self/task/{t}/comm").read_text().strip())
        except OSError:
            pass
    return names


def score_batch(grpo_rewards, verl, math, pack, code):
    """The batch through every entry point; the same function runs in the actors and here."""
    from grpo_rewards.trl import math_reward

    golds, preds = [g for g, _ in math], [p for _, p in math]
    return {
        "check_math_batch": grpo_rewards.check_math_batch(math),
        "trl_math_reward": math_reward(completions=preds, solution=golds),
        "verl_compute_score": [verl.compute_score("math", p, g) for g, p in math[: len(math) // 4]],
        "code": [pack.score(task_id, completions) for task_id, completions in code],
    }


def load_verl():
    """grpo_rewards/verl.py as verl's `custom_reward_function.path` loads it: by file path."""
    import grpo_rewards.verl as installed

    spec = importlib.util.spec_from_file_location("custom_module", installed.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Scorer:
    """One Ray actor: imports grpo_rewards on its own, scores the batch, reports its threads."""

    def __init__(self):
        self.handlers_before = {s.name: repr(signal.getsignal(s)) for s in signal.Signals}
        import grpo_rewards

        self.grpo_rewards = grpo_rewards
        self.verl = load_verl()

    def score(self, math, pack, code):
        stop, seen = threading.Event(), [0]

        def sample():
            while not stop.is_set():
                seen[0] = max(seen[0], sum(n.startswith("grpo-math") for n in thread_names()))
                time.sleep(0.001)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        cpu, wall = time.process_time(), time.perf_counter()
        results = score_batch(self.grpo_rewards, self.verl, math, pack, code)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        stop.set()
        sampler.join()
        names = thread_names()
        context = ray.get_runtime_context()
        report = {
            "pid": os.getpid(),
            "ray_cpus": context.get_assigned_resources().get("CPU"),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "affinity": len(os.sched_getaffinity(0)),
            "threads": tuple(self.grpo_rewards.threads()),
            "math_threads_seen": seen[0],
            "compile_pool": sum(n.startswith("grpo-compile") for n in names),
            "runtime_threads": sum(n == "grpo-rewards" for n in names),
            "cpu_seconds": cpu,
            "wall_seconds": wall,
            "off_main_thread": threading.current_thread() is not threading.main_thread(),
            "signal_handlers_unchanged": self.handlers_before
            == {s.name: repr(signal.getsignal(s)) for s in signal.Signals},
        }
        return results, report


def reward_task(funcs, math, code_task, code_completions):
    """A Ray task given pickled reward callables."""
    task_reward, math_reward, compute_score = funcs
    golds, preds = [g for g, _ in math], [p for _, p in math]
    return {
        "task_reward": task_reward(completions=code_completions, task=[code_task] * len(code_completions)),
        "math_reward": math_reward(completions=preds, solution=golds),
        "compute_score": [compute_score("math", p, g) for g, p in math],
    }


class GrpoServe:
    """One `grpo serve` replica on this actor's node (the book's recipe, docs/src/python.md):
    `--workers` is the actor's CPUs, the address is the node's, the bearer token is the
    actor's `GRPO_AUTH_TOKEN` (from its runtime_env); `stop()` ends the server."""

    def __init__(self, grpo, host="0.0.0.0", port=0):
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
        self.workers = max(1, int(cpus))
        self.server = subprocess.Popen([grpo, "serve", "--addr", f"{host}:{port}", "--workers", str(self.workers)],
                                       stdout=subprocess.PIPE, text=True)
        listening = json.loads(self.server.stdout.readline())["listening"]  # {"listening": "0.0.0.0:PORT"}
        node = ray.util.get_node_ip_address() if host == "0.0.0.0" else host
        self.address = f"http://{node}:{listening.rsplit(':', 1)[1]}"

    def url(self):
        return self.address, self.workers

    def stop(self):
        self.server.terminate()
        return self.server.wait(timeout=30)


def serve_one_per_node(grpo, token):
    """A `GrpoServe` actor pinned to each alive node, serving with `token`; their URLs."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    replica = ray.remote(num_cpus=1)(GrpoServe)
    env = {"env_vars": {"GRPO_AUTH_TOKEN": token}}
    actors = [replica.options(runtime_env=env,
                              scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
              .remote(grpo) for node in ray.nodes() if node["Alive"]]
    return actors, ray.get([a.url.remote() for a in actors], timeout=120)


def post_score(url, token, task, completions):
    import urllib.request

    body = json.dumps({"task": task, "completions": completions}).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    request = urllib.request.Request(f"{url}/v1/score", data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer)["results"]


def check_actor(label, expected, results, report, cpus):
    # The rule caps Ray's count at what the process may run on (on a host with fewer cores
    # than the actor asked for).
    cpus = min(cpus, report["affinity"])
    t = report["threads"]
    ratio = report["cpu_seconds"] / max(report["wall_seconds"], 1e-9)
    print(f"{label}: pid {report['pid']}, Ray CPUs {report['ray_cpus']}, OMP_NUM_THREADS "
          f"{report['omp_num_threads']}, affinity {report['affinity']} cores -> threads {t[0]} ({t[1]}); "
          f"runtime workers {t[3]}, sandbox concurrency {t[4]}, compile pool {report['compile_pool']}, "
          f"grpo-math threads seen {report['math_threads_seen']}, runtime threads {report['runtime_threads']}; "
          f"CPU {report['cpu_seconds']:.2f} s over {report['wall_seconds']:.2f} s wall = {ratio:.2f} cores")
    for key, value in expected.items():
        assert results[key] == value, f"{label}: {key} differs from the in-process results"
    assert t[:5] == (cpus, "ray", True, cpus, cpus), f"{label}: threads() = {t}"
    assert report["compile_pool"] == cpus and report["math_threads_seen"] == cpus, report
    # The runtime's workers, and at most as many blocking threads beside them.
    assert cpus <= report["runtime_threads"] <= 2 * cpus, report
    assert report["off_main_thread"] and report["signal_handlers_unchanged"], report
    # Python's own threads and Ray's (heartbeats, gRPC) take a little beside the pools.
    assert ratio <= cpus + 0.35, f"{label} used {ratio:.2f} cores with {cpus} CPU(s)"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20, help="copies of the 651 math pairs in the batch")
    p.add_argument("--grpo", default=os.environ.get("GRPO_BIN"), help="a grpo binary, for the serve replica check")
    args = p.parse_args()
    started = time.perf_counter()
    import grpo_rewards
    from grpo_rewards.trl import math_reward, task_reward

    math, pack, code = load_batch(args.repeat)
    expected = score_batch(grpo_rewards, load_verl(), math, pack, code)
    in_process = time.perf_counter() - started
    n_code = sum(len(c) for _, c in code)
    print(f"batch: {len(math)} math pairs, {n_code} programs over {len(code)} code tasks; "
          f"in-process {in_process:.1f} s on {grpo_rewards.threads().count} threads")

    with tempfile.TemporaryDirectory(prefix="grpo-ray-") as tmp:
        cluster = Cluster(cpus=2, temp_dir=os.path.join(tmp, "ray"))
        try:
            cluster.wait_ready()
            print(f"cluster up at {cluster.address} in {time.perf_counter() - started - in_process:.1f} s")
            ray.init(address=cluster.address, log_to_driver=False)
            one_cpu = ray.remote(num_cpus=1, max_concurrency=2)(Scorer)
            actors = [one_cpu.remote() for _ in range(2)]
            outs = ray.get([a.score.remote(math, pack, code) for a in actors], timeout=900)
            for k, (results, report) in enumerate(outs):
                check_actor(f"actor {k} (num_cpus=1)", expected, results, report, cpus=1)
            assert outs[0][1]["pid"] != outs[1][1]["pid"]
            for a in actors:
                ray.kill(a)

            two_cpu = ray.remote(num_cpus=2, max_concurrency=2)(Scorer).remote()
            results, report = ray.get(two_cpu.score.remote(math, pack, code), timeout=900)
            check_actor("actor 2 (num_cpus=2)", expected, results, report, cpus=2)
            ray.kill(two_cpu)

            code_task = pack.task(code[0][0])
            code_completions = code[0][1]
            small = math[:200]
            shipped = ray.get(ray.remote(num_cpus=1)(reward_task).remote(
                (task_reward, math_reward, load_verl().compute_score), small, code_task, code_completions),
                timeout=300)
            assert shipped == reward_task((task_reward, math_reward, load_verl().compute_score), small, code_task,
                                          code_completions), shipped
            print(f"pickled reward callables in a Ray task: task_reward {shipped['task_reward']}, "
                  f"{len(small)} math rewards equal")

            if args.grpo:
                token = secrets.token_hex(16)
                actors, urls = serve_one_per_node(str(pathlib.Path(args.grpo).resolve()), token)
                for url, workers in urls:
                    for task_id, completions in code:
                        task = pack.task(task_id)
                        served = post_score(url, token, task, completions)
                        local = grpo_rewards.score(task, completions)
                        assert [(r["reward"], r["correct"]) for r in served] == [(s.reward, s.correct) for s in local], \
                            (task_id, served, local)
                    print(f"grpo serve replica at {url} (--workers {workers}): /v1/score equals in-process on "
                          f"{n_code} programs")
                # SIGTERM is the server's graceful shutdown: it exits 0.
                codes = ray.get([a.stop.remote() for a in actors], timeout=60)
                assert codes == [0] * len(actors), f"grpo serve exit codes {codes}"
            else:
                print("grpo serve replicas: not checked (no grpo binary: --grpo or GRPO_BIN)")
        finally:
            if ray.is_initialized():
                ray.shutdown()
            cluster.stop()
    print(f"ray check: ok in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

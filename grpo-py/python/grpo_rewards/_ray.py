"""What Ray assigned to this process, for the thread-count rule (rule 3 of ``threads()``).

Ray does not pin its workers to CPUs, so the affinity mask of a one-CPU actor still shows
every core of the host: the count comes from Ray's own bookkeeping instead. Ray is never
imported here: outside a process that Ray started (where ``ray`` is already loaded), this
answers ``None`` at once.
"""
from __future__ import annotations

import math
import os
import sys
from typing import Optional


def assigned_cpus() -> Optional[int]:
    """The CPUs of the Ray task or actor running in this process, rounded up; ``None`` when
    this process is not a Ray worker (a driver included).

    An actor that reserved no CPU (Ray's default for actors) gets ``OMP_NUM_THREADS``, which
    Ray sets to the task's CPUs, or to 1 when none were asked for (unless the user set it).
    """
    ray = sys.modules.get("ray")
    if ray is None or not getattr(ray, "is_initialized", lambda: False)():
        return None
    try:
        resources = ray.get_runtime_context().get_assigned_resources()
    except AssertionError:
        # Ray's way of saying "this process is a driver, not a worker".
        return None
    cpus = resources.get("CPU", 0.0)
    if cpus > 0:
        return max(1, math.ceil(cpus))
    omp = os.environ.get("OMP_NUM_THREADS", "")
    return int(omp) if omp.isdigit() and int(omp) > 0 else None

"""Guest bootstrap of the grpo-rs Python sandbox.

componentize-py imports this module at build time and snapshots the interpreter afterwards,
so everything imported here is ready (and importable by programs) at run time, and nothing
else from the standard library is. The test harness (`src/harness.py`, copied next to this
file by `build.sh` as `grpo_harness.py`, with its SHA-256 in `grpo_harness_sha.py`) is
imported here too, after the standard library, so its set-up is part of the snapshot.

Protocol (all on stdin, read once): an ASCII decimal length, a newline, that many bytes of
JSON job `{"seed": int, "harness": str | null, "harness_sha256": str, ...}`, then the
program's own stdin. The bootstrap reseeds `random` and calls the harness's `main(job)`: the
snapshot's when `harness` is null (after checking that the host expects this harness), else
the one the host sent (source, or a loader for its compiled form), compiled per run.
"""

# The standard library that programs may import. Modules missing here cannot be imported at
# run time (the snapshot has no file system to load them from).
import abc
import argparse
import array
import ast
import base64
import binascii
import bisect
import builtins
import calendar
import cmath
import codecs
import collections
import collections.abc
import colorsys
import contextlib
import copy
import copyreg
import csv
import dataclasses
import datetime
import decimal
import difflib
import dis
import enum
import errno
import fnmatch
import fractions
import functools
import gc
import getopt
import glob
import graphlib
import hashlib
import heapq
import hmac
import html
import inspect
import io
import ipaddress
import itertools
import json
import keyword
import linecache
import locale
import logging
import math
import numbers
import operator
import os
import pathlib
import pickle
import pprint
import queue
import random
import re
import reprlib
import secrets
import shlex
import shutil
import statistics
import string
import struct
import sys
import tempfile
import textwrap
import time
import timeit
import token
import tokenize
import traceback
import types
import typing
import unicodedata
import unittest
import uuid
import warnings
import weakref
import zlib

from wit_world import exports

# typing replaces this placeholder in its own namespace with `annotationlib` on first use (which
# the bindings' glue triggers at every call): resolve it now, so that the harness's copy of
# the guarded modules below is what each run starts from.
if hasattr(typing, "_lazy_annotationlib"):
    getattr(typing._lazy_annotationlib, "Format", None)

# The harness, loaded once into the snapshot, then taken out of `sys.modules` so that programs
# cannot import it by name.
import grpo_harness
import grpo_harness_sha

_HARNESS_MAIN = grpo_harness.main
_HARNESS_SHA256 = grpo_harness_sha.SHA256
del sys.modules["grpo_harness"], sys.modules["grpo_harness_sha"]


def _read_job():
    raw = sys.stdin.buffer
    header = raw.readline(32)
    length = int(header)
    return json.loads(raw.read(length))


# Everything allocated so far lives as long as the snapshot: move it out of the collector's
# reach, so collections during a run walk (and copy on write) only the run's own objects.
gc.collect()
gc.freeze()


class Run(exports.Run):
    """The `wasi:cli/run` export: one call per instance, one program per call."""

    def run(self) -> None:
        job = _read_job()
        random.seed(job.pop("seed"))
        source = job.pop("harness")
        expected = job.pop("harness_sha256", None)
        if source is None:
            if expected != _HARNESS_SHA256:
                # The host expects another harness than this snapshot's: refuse, loudly.
                os.write(2, b"grpo runtime: the snapshot's harness is not the host's\n")
                os._exit(70)
            _HARNESS_MAIN(job)
            return
        namespace = {"__name__": "__grpo_harness__", "__builtins__": builtins}
        exec(compile(source, "<harness>", "exec"), namespace)
        namespace["main"](job)

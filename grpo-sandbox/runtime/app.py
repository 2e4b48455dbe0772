"""Guest bootstrap of the grpo-rs Python sandbox.

componentize-py imports this module at build time and snapshots the interpreter afterwards,
so everything imported here is ready (and importable by programs) at run time, and nothing
else from the standard library is. The bootstrap is deliberately small and stable: the test
harness, which changes more often, is sent by the host with every run.

Protocol (all on stdin, read once): an ASCII decimal length, a newline, that many bytes of
JSON job `{"seed": int, "harness": str, ...}`, then the program's own stdin. The bootstrap
reseeds `random`, compiles the harness, and calls its `main(job)`; the harness does the rest.
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
        namespace = {"__name__": "__grpo_harness__", "__builtins__": builtins}
        exec(compile(source, "<harness>", "exec"), namespace)
        namespace["main"](job)

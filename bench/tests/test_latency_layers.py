"""Tests of bench/latency_layers.py's plumbing (no timed assertions): each layer of the small row
runs the call it names and returns what it should, and the report lists every variant."""
from __future__ import annotations

import os
import sys

import numpy as np

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)

import latency_layers  # noqa: E402


def test_small_layers_call_the_jitted_function_and_fetch_its_value():
    seen = []

    def jit(fun):
        def wrapped(a, b):
            seen.append((a.shape, b.shape))
            return _Ready(fun(a, b))
        return wrapped

    variants = latency_layers.small_variants(jit, np.asarray, pool_size=4)
    assert sorted(variants) == ["block", "call", "fetch"]
    for name, run in variants.items():
        del seen[:]
        run(6)
        assert seen == [((8,), (8,))] * 6, name


def test_time_alternating_reports_cpu_and_wall_per_call_for_each_variant():
    calls = {"a": 0, "b": 0}

    def make(k):
        def run(n):
            calls[k] += n
        return run

    results = latency_layers.time_alternating({"a": make("a"), "b": make("b")}, rounds=3, inner=20)
    assert calls == {"a": 62, "b": 62}  # 2 warm-up calls, then 3 rounds of 20
    for cpu, wall in results.values():
        assert len(cpu) == len(wall) == 3 and min(cpu) >= 0 and min(wall) > 0
    text = latency_layers.report("purenn", results)
    assert text.count("\n") == 1 and "purenn  a " in text and "purenn  b " in text


class _Ready(np.ndarray):
    """An ndarray with the `block_until_ready` the `block` layer calls."""

    def __new__(cls, value):
        return np.asarray(value).view(cls)

    def block_until_ready(self):
        return self

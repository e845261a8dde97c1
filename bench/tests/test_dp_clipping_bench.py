"""Tests of bench/dp_clipping.py's plumbing (no timed assertions): the memory measure of a step,
which variants run at which batch, the per-round ratios of the report, and the purenn worker's
parameters matching the model it builds. Nothing here needs jax, torch or opacus."""

from __future__ import annotations

import os
import sys

import numpy as np

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)
sys.path.insert(0, os.path.join(BENCH_DIR, "peers"))

import _dp_common as common  # noqa: E402
import dp_clipping  # noqa: E402


def test_the_peak_of_a_step_counts_what_it_allocates_not_what_is_held_between_steps():
    held = np.ones(20 * 2**20 // 8)   # 20 MiB resident before and after: not part of the peak

    def step():
        a = np.ones(40 * 2**20 // 8)   # 40 MiB touched during the step, then freed
        return float(a[::4096].sum())
    times, peak = common.measure(step, 2)
    assert len(times) == 2 and held.size
    assert 38 * 2**20 <= peak < 60 * 2**20


def test_materializing_variants_leave_the_large_convnet_batch_for_the_small_one():
    jobs = dp_clipping.jobs_for("convnet", 256, 64, ["purenn", "jax", "torch"])
    at = {(b, peer): keys for b, peer, keys in jobs}
    assert at[(256, "purenn")] == ["a", "c_bk", "c_2nd"] and at[(64, "purenn")] == ["a", "b", "c_bk", "c_2nd"]
    assert at[(256, "torch")] == ["ref", "e_ghost"] and "d" not in at[(256, "jax")]
    assert {b for b, _, _ in dp_clipping.jobs_for("mlp", 256, 64, ["jax"])} == {256}


def test_the_report_divides_each_round_by_the_same_rounds_baseline():
    def rec(*ms, **extra):
        return dict(ok=True, times=[m / 1e3 for m in ms], rss_peak=2**20, xla=None, checksum=1.5, **extra)
    results = {("purenn", "a"): [rec(10, 10, 12), rec(20, 20, 20)],
               ("torch", "e_ghost"): [rec(30, 30, 30), rec(40, 40, 40)],
               ("jax", "d"): [{"ok": False, "error": "exit 1: boom"}, {"ok": False}]}
    text = dp_clipping.report("mlp", 256, results, 2)
    ghost = next(line for line in text.splitlines() if "Opacus ghost" in line)
    assert "| 3.00 2.00 | 2.50 |" in ghost        # 30/10 and 40/20, then their median
    assert "failed: exit 1: boom" in text


def test_the_purenn_workers_parameters_have_the_models_shapes():
    import nn
    import dp_purenn
    for model, in_shape in (("mlp", (-1, 784)), ("convnet", (-1, 28, 28, 1))):
        stax, _, _ = dp_purenn.model_and_loss(model)
        _, shapes = nn.abstract_init(stax, in_shape)
        flat = [np.zeros(s, np.float32) for _, s in common.param_shapes(model)]
        mine = dp_purenn.to_stax(model, flat)
        import core
        assert [tuple(s.shape) for s in core.tree_leaves(shapes)] == [x.shape for x in core.tree_leaves(mine)]

"""Tests of the benchmark runner's plumbing. No timed assertions: only that
results are parsed, aggregated, failures are recorded and the report renders.

These use small fake peer scripts run with the current interpreter, so they
need neither jax nor torch nor a working purenn.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)

import run  # noqa: E402
import workloads as W  # noqa: E402


def _fake_peer(tmp_path, name, body):
    script = tmp_path / f"{name}_fake.py"
    script.write_text(textwrap.dedent(body))
    return run.Peer(name, sys.executable, str(script))


def test_parse_peer_output_takes_last_json_line():
    out = 'noise\n{"a": 1}\nmore noise\n{"ok": true, "value": 2}\n'
    assert run.parse_peer_output(out) == {"ok": True, "value": 2}
    assert run.parse_peer_output("no json here") is None
    assert run.parse_peer_output('{"broken": \n') is None


def test_summarize_is_median_of_round_medians():
    runs = [{"ok": True, "value": v, "checksum": 1.0} for v in (3.0, 1.0, 2.0, 10.0, 4.0)]
    s = run.summarize("jax", runs)
    assert s.status == "ok"
    assert s.median == 3.0
    assert (s.lo, s.hi) == (1.0, 10.0)
    assert s.rounds_ok == 5


def test_summarize_all_failed_keeps_error():
    s = run.summarize("purenn", [{"ok": False, "error": "import/setup: ImportError: x"}])
    assert s.status == "failed"
    assert "ImportError" in s.note
    assert s.median is None


def test_summarize_partial_failure_noted():
    s = run.summarize("torch", [{"ok": True, "value": 1.0},
                                {"ok": False, "error": "timed out"}])
    assert s.status == "ok" and s.median == 1.0
    assert "1 round(s) failed" in s.note


def test_ratio_and_checksum_note():
    a = run.PeerSummary("purenn", "ok", median=2.0, checksum=100.0)
    b = run.PeerSummary("jax", "ok", median=4.0, checksum=100.00001)
    c = run.PeerSummary("torch", "ok", median=1.0, checksum=150.0)
    assert run.ratio(a, b) == 0.5
    assert run.ratio(a, run.PeerSummary("x", "failed")) is None
    assert "agree" in run.checksum_note({"purenn": a, "jax": b})
    assert "mismatch" in run.checksum_note({"purenn": a, "jax": b, "torch": c})


def test_run_peer_success_and_failures(tmp_path):
    good = _fake_peer(tmp_path, "good", """
        import json, sys
        print("library chatter on stdout")
        print(json.dumps({"peer": "good", "workload": sys.argv[1], "ok": True,
                          "value": 1.5, "versions": {"lib": "1"}}))
    """)
    reported = _fake_peer(tmp_path, "reported", """
        import json, sys
        print(json.dumps({"ok": False, "error": "import/setup: ImportError: no core"}))
        sys.exit(1)
    """)
    crashing = _fake_peer(tmp_path, "crashing", """
        import sys
        sys.stderr.write("Fatal Python error: Segmentation fault\\n")
        sys.exit(139)
    """)
    hanging = _fake_peer(tmp_path, "hanging", """
        import time
        time.sleep(30)
    """)
    r = run.run_peer(good, "eager_add_small", timeout=60)
    assert r["ok"] and r["value"] == 1.5 and r["workload"] == "eager_add_small"
    r = run.run_peer(reported, "eager_add_small", timeout=60)
    assert not r["ok"] and "ImportError: no core" in r["error"]
    r = run.run_peer(crashing, "eager_add_small", timeout=60)
    assert not r["ok"] and "Segmentation fault" in r["error"]
    r = run.run_peer(hanging, "eager_add_small", timeout=0.5)
    assert not r["ok"] and "timed out" in r["error"]
    missing = run.Peer("ghost", str(tmp_path / "no-python"), "x.py")
    assert not missing.available()


def test_render_report_contains_failures_skips_and_ratios():
    meta = {
        "command": "python bench/run.py --rounds 1", "cwd": "/repo",
        "date": "2000-01-01 00:00:00 UTC", "duration_s": 1.0,
        "machine": {"nproc": 2, "cpu": "Test CPU", "os": "Linux", "python": "3.11"},
        "load_before": "0", "load_after": "0", "git": "abc", "rounds": 1,
        "interpreters": {"purenn": ".venv/bin/python", "jax": "j", "torch": "t"},
    }
    results = {
        "eager_add_small": {
            "purenn": run.PeerSummary("purenn", "failed", note="import/setup: boom"),
            "jax": run.PeerSummary("jax", "ok", median=6.0, lo=5.0, hi=7.0,
                                   rounds=1, rounds_ok=1, versions={"jax": "0.10.2"}),
            "torch": run.PeerSummary("torch", "skipped", note="not installed"),
        },
        "matmul_2048": {
            "purenn": run.PeerSummary("purenn", "ok", median=100.0, lo=90.0, hi=110.0),
            "jax": run.PeerSummary("jax", "ok", median=200.0, lo=190.0, hi=210.0),
            "torch": run.PeerSummary("torch", "ok", median=50.0, lo=40.0, hi=60.0),
        },
    }
    text = run.render(results, ["purenn", "jax", "torch"], meta)
    assert "failed: import/setup: boom" in text
    assert "skipped: not installed" in text
    assert "0.50×" in text and "2.00×" in text
    assert "Test CPU" in text and "python bench/run.py --rounds 1" in text
    assert "jax 0.10.2" in text
    assert "Warning" not in text
    meta["max_load1"] = 9.0
    assert "Warning" in run.render(results, ["purenn", "jax", "torch"], meta)


def test_main_end_to_end_with_fake_peers(tmp_path, monkeypatch):
    fake = tmp_path / "fake_peer.py"
    fake.write_text(textwrap.dedent("""
        import json, sys
        print(json.dumps({"ok": True, "value": 2.0, "checksum": 8.0,
                          "versions": {"fake": "0"}}))
    """))
    peers = {p: run.Peer(p, sys.executable, str(fake)) for p in run.PEER_ORDER}
    peers["torch"] = run.Peer("torch", str(tmp_path / "absent"), str(fake),
                              install_hint="hint")
    monkeypatch.setattr(run, "default_peers", lambda: peers)
    out = tmp_path / "R.md"
    raw = tmp_path / "raw.json"
    rc = run.main(["--rounds", "2", "--only", "eager_add_small", "axpy_5000",
                   "--out", str(out), "--json", str(raw)])
    assert rc == 0
    text = out.read_text()
    assert "`eager_add_small`" in text and "`axpy_5000`" in text
    assert "`matmul_2048`" not in text
    assert "skipped: not installed" in text
    assert "1.00×" in text
    data = json.loads(raw.read_text())
    assert len(data["runs"]["axpy_5000"]["jax"]) == 2
    assert data["runs"]["axpy_5000"]["torch"] == []


def test_unknown_workload_rejected():
    with pytest.raises(SystemExit):
        run.main(["--only", "nope", "--out", os.devnull])


def test_workload_units():
    assert W.get("eager_add_small").from_seconds(2e-6) == pytest.approx(2.0)
    assert W.get("axpy_5000").from_seconds(0.05) == pytest.approx(50.0)
    mm = W.get("matmul_2048")
    assert mm.from_seconds(1.0) == pytest.approx(2 * 2048 ** 3 / 1e9)
    with pytest.raises(KeyError):
        W.get("nope")


# ---- jit workloads: peers that do not apply, self-timed bodies, jit vs eager

def test_jit_workloads_registered():
    for name in ("jit_dispatch_3op", "jit_dispatch_3op_sync"):
        wl = W.get(name)
        assert wl.unit == "us" and not wl.higher_is_better
        assert wl.peers == ("purenn", "jax", "torch")
    tc = W.get("trace_compile_mlp20")
    assert tc.unit == "ms" and tc.self_timed and tc.inner == 1
    assert tc.peers == ("purenn", "jax") and tc.na_note
    ax = W.get("axpy_5000_jit")
    assert ax.peers == ("purenn", "jax") and ax.eager_counterpart == "axpy_5000"
    assert ax.from_seconds(0.05) == pytest.approx(50.0)


def test_jit_workload_inputs():
    np = pytest.importorskip("numpy")
    x, y = W.make_inputs_np("jit_dispatch_3op")
    assert x.shape == y.shape == (W.SMALL_N,) and x.dtype == np.float32
    mlp = W.make_inputs_np("trace_compile_mlp20")
    assert len(mlp) == 1 + 2 * W.MLP_DEPTH
    assert mlp[0].shape == (W.MLP_BATCH, W.MLP_WIDTH)
    assert mlp[1].shape == (W.MLP_WIDTH, W.MLP_WIDTH) and mlp[2].shape == (W.MLP_WIDTH,)
    assert all(a.dtype == np.float32 for a in mlp)
    a = W.make_inputs_np("axpy_5000_jit")[0]
    assert a.shape == (W.AXPY_N, W.AXPY_N)


def test_grad_workloads_registered():
    for name in ("grad_mlp_eager", "grad_mlp_jit", "grad_mlp_trace_compile",
                 "newton_step_jit"):
        wl = W.get(name)
        assert wl.peers == ("purenn", "jax") and wl.na_note
        assert not wl.higher_is_better
    assert W.get("grad_mlp_jit").eager_counterpart == "grad_mlp_eager"
    tc = W.get("grad_mlp_trace_compile")
    assert tc.self_timed and tc.inner == 1 and tc.unit == "ms"
    assert W.get("newton_step_jit").from_seconds(5e-5) == pytest.approx(50.0)


def test_grad_workload_inputs():
    np = pytest.importorskip("numpy")
    same = [W.make_inputs_np(n) for n in ("grad_mlp_eager", "grad_mlp_jit",
                                           "grad_mlp_trace_compile")]
    x, y, w1, b1, w2, b2 = same[0]
    for other in same[1:]:  # one loss, one signature for all three
        assert all(np.array_equal(a, b) for a, b in zip(same[0], other))
    assert x.shape == (W.GRAD_BATCH, W.GRAD_IN) and x.dtype == np.float32
    assert y.shape == (W.GRAD_BATCH,) and y.dtype == np.int32
    assert y.min() >= 0 and y.max() < W.GRAD_CLASSES
    assert len(np.unique(y)) > 1  # labels that differ, so the one-hot matters
    assert w1.shape == (W.GRAD_IN, W.GRAD_HIDDEN) and b1.shape == (W.GRAD_HIDDEN,)
    assert w2.shape == (W.GRAD_HIDDEN, W.GRAD_CLASSES) and b2.shape == (W.GRAD_CLASSES,)
    assert all(a.dtype == np.float32 for a in (w1, b1, w2, b2))
    a, x0 = W.make_inputs_np("newton_step_jit")
    assert a.shape == (W.NEWTON_M, W.NEWTON_N) and x0.shape == (W.NEWTON_N,)
    assert np.abs(a @ x0).max() < 20  # exp(A @ x) stays far from float32 overflow
    # deterministic: a second call gives the same arrays
    assert np.array_equal(W.make_inputs_np("newton_step_jit")[0], a)


def _harness():
    sys.path.insert(0, os.path.join(BENCH_DIR, "peers"))
    import _harness
    return _harness


def test_harness_self_timed_fixed_inner():
    h = _harness()
    calls = []

    def body(n):
        calls.append(n)
        return 0.25 * n  # the seconds "measured" inside, whatever the wall time

    wl = W.Workload("t", "t", unit="ms", higher_is_better=False, target_s=10.0,
                    samples=3, warmup=2, inner=1, self_timed=True)
    inner, per_iter = h.measure(body, wl)
    assert inner == 1 and per_iter == [0.25, 0.25, 0.25]
    assert calls == [2, 1, 1, 1]  # warm-up, then the samples; no calibration

    with pytest.raises(TypeError):
        h.measure(lambda n: None, wl)


def test_harness_reports_not_applicable_peer(capsys):
    h = _harness()

    def build(name):
        raise AssertionError("build must not be called for a n/a peer")

    rc = h.main("torch", build, lambda: {}, ["trace_compile_mlp20"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 1 and not out["ok"]
    assert "not run for torch" in out["error"]


def test_main_na_peer_not_run_and_jit_vs_eager(tmp_path, monkeypatch):
    log = tmp_path / "calls.log"
    fake = tmp_path / "fake_peer.py"
    fake.write_text(textwrap.dedent(f"""
        import json, sys
        with open({str(log)!r}, "a") as f:
            f.write(sys.argv[0] + " " + sys.argv[1] + "\\n")
        value = 50.0 if sys.argv[1].endswith("_jit") else 100.0
        print(json.dumps({{"ok": True, "value": value, "checksum": 8.0}}))
    """))
    peers = {p: run.Peer(p, sys.executable, str(fake)) for p in run.PEER_ORDER}
    peers["torch"] = run.Peer("torch", sys.executable, str(tmp_path / "torch_fake.py"))
    (tmp_path / "torch_fake.py").write_text(fake.read_text())
    monkeypatch.setattr(run, "default_peers", lambda: peers)
    out = tmp_path / "R.md"
    rc = run.main(["--rounds", "2", "--only", "axpy_5000", "axpy_5000_jit",
                   "trace_compile_mlp20", "--out", str(out)])
    assert rc == 0
    calls = log.read_text().splitlines()
    torch_calls = [c for c in calls if "torch_fake" in c]
    assert sorted(torch_calls) == [f"{tmp_path / 'torch_fake.py'} axpy_5000"] * 2
    assert len(calls) == 2 * 2 + 2 * 2 + 2 * 3  # jit: purenn+jax; eager: all 3
    text = out.read_text()
    assert "n/a: no torch equivalent" in text
    summary = text.split("## Summary")[1].split("\n## ")[0]
    assert "| `trace_compile_mlp20` | ms ↓ | 100.0 | 100.0 | n/a | 1.00× | — |" in summary
    jve = text.split("## jit vs eager")[1].split("\n## ")[0]
    assert "| `axpy_5000_jit` | `axpy_5000` | purenn | 100.0 ms | 50.00 ms | 2.00× |" in jve
    assert "| jax |" in jve and "torch" not in jve


def test_no_jit_vs_eager_section_without_both_rows(tmp_path, monkeypatch):
    fake = tmp_path / "fake_peer.py"
    fake.write_text('import json; print(json.dumps({"ok": True, "value": 1.0}))\n')
    peers = {p: run.Peer(p, sys.executable, str(fake)) for p in run.PEER_ORDER}
    monkeypatch.setattr(run, "default_peers", lambda: peers)
    out = tmp_path / "R.md"
    assert run.main(["--rounds", "1", "--only", "axpy_5000_jit", "--out", str(out)]) == 0
    assert "jit vs eager" not in out.read_text()


def test_render_na_row():
    meta = {
        "command": "c", "cwd": "/repo", "date": "d", "duration_s": 1.0,
        "machine": {"nproc": 2, "cpu": "CPU", "os": "Linux", "python": "3.11"},
        "load_before": "0", "load_after": "0", "git": "abc", "rounds": 1,
        "interpreters": {},
    }
    results = {"trace_compile_mlp20": {
        "purenn": run.PeerSummary("purenn", "ok", median=90.0, lo=90.0, hi=90.0,
                                  rounds=1, rounds_ok=1),
        "jax": run.PeerSummary("jax", "ok", median=100.0, lo=100.0, hi=100.0,
                               rounds=1, rounds_ok=1),
        "torch": run.PeerSummary("torch", "n/a", note="no torch equivalent"),
    }}
    text = run.render(results, ["purenn", "jax", "torch"], meta)
    assert "| torch | — | — | — | — | n/a: no torch equivalent |" in text
    assert "| 90.00 | 100.0 | n/a | 0.90× | — |" in text


# ---- pmap workloads (issue 6): per-workload environment, shared inputs

def test_pmap_workloads_registered_with_their_device_count():
    pm = W.get("pmap_mlp_step_2dev")
    one = W.get("mlp_step_global_1dev")
    for wl in (pm, one):
        assert wl.peers == ("purenn", "jax") and wl.na_note
        assert wl.unit == "ms" and not wl.higher_is_better
    assert pm.env == {"PURENN_NUM_CPU_DEVICES": "2",
                      "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    assert one.env == {"PURENN_NUM_CPU_DEVICES": "1",
                       "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}
    assert W.get("mlp_adam_step").env == {}


def test_pmap_workload_inputs():
    np = pytest.importorskip("numpy")
    pm = W.make_inputs_np("pmap_mlp_step_2dev")
    one = W.make_inputs_np("mlp_step_global_1dev")
    # the same global batch and parameters, so the two checksums agree
    assert all(np.array_equal(a, b) for a, b in zip(pm, one, strict=True))
    x, y = pm[:2]
    assert x.shape == (W.PMAP_GLOBAL_BATCH, W.TRAIN_IN) and x.dtype == np.float32
    assert y.shape == (W.PMAP_GLOBAL_BATCH,) and y.dtype == np.int32
    assert W.PMAP_GLOBAL_BATCH % W.PMAP_DEVICES == 0
    adam = W.make_inputs_np("mlp_adam_step")
    assert adam[0].shape == (W.TRAIN_BATCH, W.TRAIN_IN)
    assert [a.shape for a in adam[2:]] == [a.shape for a in pm[2:]]


def test_run_peer_sets_the_workload_env_over_the_peer_env(tmp_path, monkeypatch):
    script = tmp_path / "env_peer.py"
    script.write_text(textwrap.dedent("""
        import json, os
        print(json.dumps({"ok": True, "value": 1.0,
                          "n": os.environ.get("PURENN_NUM_CPU_DEVICES"),
                          "flags": os.environ.get("XLA_FLAGS"),
                          "mine": os.environ.get("PEER_OWN")}))
    """))
    monkeypatch.setenv("PURENN_NUM_CPU_DEVICES", "5")
    peer = run.Peer("p", sys.executable, str(script),
                    env={"PURENN_NUM_CPU_DEVICES": "7", "PEER_OWN": "kept"})
    r = run.run_peer(peer, "pmap_mlp_step_2dev", timeout=60)
    assert r["ok"] and r["mine"] == "kept"
    assert r["n"] == "2" and r["flags"] == "--xla_force_host_platform_device_count=2"
    r = run.run_peer(peer, "eager_add_small", timeout=60)  # no workload env: the peer's wins
    assert r["n"] == "7"


def test_hand_written_notes_survive_a_rewrite(tmp_path):
    path = tmp_path / "RESULTS.md"
    assert run.kept_notes(str(path)) == ""  # no file yet
    path.write_text("# generated tables\n\n" + run.NOTES_MARKER + "\n\n## Analysis\nkept\n")
    assert run.kept_notes(str(path)) == "\n" + run.NOTES_MARKER + "\n\n## Analysis\nkept\n"
    path.write_text("# generated tables only\n")
    assert run.kept_notes(str(path)) == ""

"""optim/privacy.py: epsilon against published reference values (TF Privacy's test case, the MNIST
DP-SGD settings), against dp-accounting called directly on random settings, and against an
independent NumPy RDP computation at integer orders; the inverse calibration; the state as JSON;
dp-accounting staying optional."""
import configparser
import doctest
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from optim import privacy
from optim.privacy import PrivacyAccountant, epsilon_for, noise_multiplier_for, steps_for_epochs

try:
    import dp_accounting as dpa  # the `test` extra installs it (setup.cfg)
except ImportError:
    dpa = None
# The tests that need the library; those about it being optional run without it.
needs_dp = pytest.mark.skipif(dpa is None, reason="dp-accounting not installed: pip install 'purenn[dp]'")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DELTA = 1e-5


def accountant_for(num_examples, batch_size, sigma, epochs):
    steps = steps_for_epochs(epochs, num_examples, batch_size)
    accountant = PrivacyAccountant()
    accountant.step(batch_size / num_examples, sigma, count=steps)
    return accountant, steps


# ----- golden values ---------------------------------------------------------------------------------

@needs_dp
def test_tf_privacy_reference_case():
    # TF Privacy's compute_dp_sgd_privacy test: 60000 examples, batch 150, sigma 1.3, 15 epochs.
    accountant, steps = accountant_for(60000, 150, 1.3, 15)
    assert steps == 6000
    assert abs(accountant.epsilon(DELTA) - 0.7242234026109595) < 1e-9
    assert abs(accountant.epsilon(DELTA, "pld") - 0.640) < 1e-3


@needs_dp
@pytest.mark.parametrize("sigma, epochs, steps, rdp, pld, classic", [
    (1.1, 60, 14063, 2.597, 2.382, 3.008),   # the MNIST setting; papers print 3.01
    (1.3, 15, 3516, 0.955, 0.865, 1.192),
])
def test_mnist_settings_three_methods(sigma, epochs, steps, rdp, pld, classic):
    accountant, got_steps = accountant_for(60000, 256, sigma, epochs)
    assert got_steps == steps
    assert abs(accountant.epsilon(DELTA, "rdp") - rdp) < 5e-4
    assert abs(accountant.epsilon(DELTA, "pld") - pld) < 5e-4
    assert abs(accountant.epsilon(DELTA, "rdp_classic") - classic) < 5e-4


def _log_a_integer(q, sigma, alpha):
    """log E[(p1/p0)^alpha] of the Poisson-subsampled Gaussian at an integer order (Mironov, Talwar,
    Zhang 2019, Sec. 3.3): sum_k C(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 sigma^2))."""
    terms = [math.lgamma(alpha + 1) - math.lgamma(k + 1) - math.lgamma(alpha - k + 1)
             + (alpha - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * sigma ** 2)
             for k in range(alpha + 1)]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


@needs_dp
def test_classic_conversion_against_independent_integer_order_rdp():
    # Our own RDP (integer orders only) and Mironov's Prop. 3: an upper bound on the accountant's
    # value (which also minimizes over fractional orders), and close to it.
    q, sigma, steps = 256 / 60000, 1.1, 14063
    orders = list(range(2, 64))
    ours = min(steps * _log_a_integer(q, sigma, a) / (a - 1) + math.log(1 / DELTA) / (a - 1)
               for a in orders)
    got = epsilon_for(q, sigma, steps, DELTA, method="rdp_classic")
    assert got <= ours + 1e-9
    assert ours - got < 0.05
    assert got >= epsilon_for(q, sigma, steps, DELTA, method="rdp")  # never tighter than "rdp"


# ----- against dp-accounting called directly ---------------------------------------------------------

@needs_dp
def test_twenty_random_settings_match_dp_accounting():
    rng = np.random.default_rng(20240515)
    for setting in range(20):
        num_events = int(rng.integers(1, 3))
        events = [(float(rng.uniform(1e-3, 0.1)), float(rng.uniform(0.8, 3.0)), int(rng.integers(1, 3000)))
                  for _ in range(num_events)]
        delta = float(10 ** rng.uniform(-7, -3))
        accountant = PrivacyAccountant()
        for q, sigma, steps in events:
            first = int(rng.integers(0, steps))  # record each event in two calls: they merge
            if first:
                accountant.step(q, sigma, count=first)
            accountant.step(q, sigma, count=steps - first)
        assert [(e["sampling_rate"], e["noise_multiplier"], e["steps"]) for e in accountant.events] == events
        direct = dpa.ComposedDpEvent([
            dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
            for q, sigma, steps in events])
        rdp = dpa.rdp.RdpAccountant().compose(direct)
        np.testing.assert_allclose(accountant.epsilon(delta, "rdp"), rdp.get_epsilon(delta), rtol=1e-12,
                                   err_msg=f"setting {setting}: {events}, delta {delta}")
        classic = np.min(rdp.rdp - math.log(delta) / (rdp.orders - 1))
        np.testing.assert_allclose(accountant.epsilon(delta, "rdp_classic"), classic, rtol=1e-12)
        if setting < 3:  # PLD is slower: a few settings, few steps
            small = PrivacyAccountant()
            small_event = dpa.SelfComposedDpEvent(
                dpa.PoissonSampledDpEvent(events[0][0], dpa.GaussianDpEvent(events[0][1])), 50)
            small.step(events[0][0], events[0][1], count=50)
            pld = dpa.pld.PLDAccountant(value_discretization_interval=1e-3).compose(small_event)
            np.testing.assert_allclose(small.epsilon(delta, "pld", value_discretization_interval=1e-3),
                                       pld.get_epsilon(delta), rtol=1e-12)


@needs_dp
def test_epsilon_for_is_a_fresh_accountant():
    q, sigma, steps = 0.01, 0.9, 500
    accountant = PrivacyAccountant()
    accountant.step(q, sigma, count=steps)
    for method in ("rdp", "rdp_classic"):
        assert epsilon_for(q, sigma, steps, DELTA, method) == accountant.epsilon(DELTA, method)
    assert epsilon_for(q, sigma, 0, DELTA) == 0.0


@needs_dp
def test_epsilon_grows_with_steps_and_no_noise_is_infinite():
    accountant = PrivacyAccountant()
    assert accountant.epsilon(DELTA) == 0.0 and accountant.steps == 0
    accountant.step(0.01, 1.0, count=100)
    e100 = accountant.epsilon(DELTA)
    accountant.step(0.01, 1.0, count=100)
    assert accountant.epsilon(DELTA) > e100  # the cache is dropped by step()
    accountant.step(0.01, 0.0)
    assert accountant.epsilon(DELTA) == math.inf
    assert accountant.epsilon(DELTA, "pld") == math.inf


# ----- events as plain data --------------------------------------------------------------------------

def test_consecutive_identical_steps_merge():
    accountant = PrivacyAccountant()
    for q, sigma in [(0.01, 1.0), (0.01, 1.0), (0.02, 1.0), (0.01, 1.0), (0.01, 1.0), (0.01, 1.0)]:
        accountant.step(q, sigma)
    assert [(e["sampling_rate"], e["steps"]) for e in accountant.events] == [(0.01, 2), (0.02, 1), (0.01, 3)]
    assert accountant.steps == 6


@needs_dp
def test_state_round_trips_through_json():
    accountant = PrivacyAccountant(sampling="shuffle")
    accountant.step(0.004, 1.1, count=1000)
    accountant.step(0.008, 1.3, count=17)
    text = json.dumps(accountant.to_dict())
    data = json.loads(text)
    assert data["events"][0] == {"kind": "poisson_gaussian", "sampling_rate": 0.004,
                                 "noise_multiplier": 1.1, "steps": 1000}
    assert data["sampling"] == "shuffle"
    restored = PrivacyAccountant.from_dict(data)
    assert restored == accountant and restored.sampling == "shuffle"
    assert restored.epsilon(DELTA) == accountant.epsilon(DELTA)
    restored.step(0.008, 1.3)  # continues the last event, as the uninterrupted run would
    accountant.step(0.008, 1.3)
    assert restored.to_dict() == accountant.to_dict()
    accountant.events[0]["steps"] = 5  # `events` is a copy
    assert accountant.steps == 1018


@pytest.mark.parametrize("bad, match", [
    ({"format": "something else"}, "format"),
    ({"format": "purenn.privacy_accountant", "version": 99, "sampling": "poisson", "events": []}, "version"),
    ({"format": "purenn.privacy_accountant", "version": 1, "sampling": "fixed", "events": []}, "sampling"),
    ({"format": "purenn.privacy_accountant", "version": 1, "sampling": "poisson",
      "events": [{"kind": "laplace", "sampling_rate": 0.1, "noise_multiplier": 1.0, "steps": 1}]}, "kind"),
    ({"format": "purenn.privacy_accountant", "version": 1, "sampling": "poisson",
      "events": [{"kind": "poisson_gaussian", "sampling_rate": 1.5, "noise_multiplier": 1.0, "steps": 1}]},
     "sampling_rate"),
    ({"format": "purenn.privacy_accountant", "version": 1, "sampling": "poisson",
      "events": [{"kind": "poisson_gaussian", "sampling_rate": 0.1, "noise_multiplier": 1.0, "steps": 0}]},
     "steps"),
])
def test_from_dict_rejects_bad_state(bad, match):
    with pytest.raises(ValueError, match=match):
        PrivacyAccountant.from_dict(bad)


@pytest.mark.parametrize("call, match", [
    (lambda a: a.step(1.2, 1.0), "sampling_rate must be a number in \\[0, 1\\]"),
    (lambda a: a.step(0.1, -1.0), "noise_multiplier must be a finite number >= 0"),
    (lambda a: a.step(0.1, 1.0, count=0), "count must be an integer >= 1"),
    (lambda a: a.epsilon(0.0), "delta must be a number in \\(0, 1\\)"),
    (lambda a: a.epsilon(1e-5, method="gdp"), "method must be one of"),
    (lambda a: PrivacyAccountant(sampling="uniform"), "sampling must be one of"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call(PrivacyAccountant())


def test_steps_for_epochs_is_exact():
    assert steps_for_epochs(15, 60000, 150) == 6000       # 15 / (150 / 60000) is not exact in float
    assert steps_for_epochs(60, 60000, 256) == 14063
    assert steps_for_epochs(15, 60000, 256) == 3516
    assert steps_for_epochs(0.5, 10, 3) == 2


# ----- inverse: the noise for a target epsilon -------------------------------------------------------

@needs_dp
@pytest.mark.parametrize("method, target, q, steps", [
    ("rdp", 3.0, 256 / 60000, 14063),
    ("rdp_classic", 3.0, 256 / 60000, 14063),
    ("rdp", 1.0, 0.01, 1000),
    ("pld", 2.0, 0.02, 100),
])
def test_noise_multiplier_for_meets_the_target_tightly(method, target, q, steps):
    grid = {"value_discretization_interval": 1e-3}  # PLD only; coarser than the default, for speed
    sigma = noise_multiplier_for(target, DELTA, q, steps, method=method, tol=1e-5, **grid)
    assert epsilon_for(q, sigma, steps, DELTA, method, **grid) <= target
    # a little less noise already exceeds the target: the returned sigma is (nearly) the smallest
    assert epsilon_for(q, sigma - 1e-3, steps, DELTA, method, **grid) > target


@needs_dp
def test_noise_multiplier_for_orders_the_methods():
    # The tighter the accounting, the less noise a target needs: pld < rdp < rdp_classic.
    q, steps = 0.01, 300
    sigmas = {m: noise_multiplier_for(2.0, DELTA, q, steps, method=m, tol=1e-4,
                                      value_discretization_interval=1e-3)
              for m in ("pld", "rdp", "rdp_classic")}
    assert sigmas["pld"] < sigmas["rdp"] < sigmas["rdp_classic"]


@needs_dp
def test_noise_multiplier_for_bad_target():
    with pytest.raises(ValueError, match="target_epsilon must be a finite number > 0"):
        noise_multiplier_for(0.0, DELTA, 0.01, 10)
    with pytest.raises(ValueError, match="sampling_rate 0"):
        noise_multiplier_for(1.0, DELTA, 0.0, 10)


# ----- dp-accounting is optional ---------------------------------------------------------------------

def test_import_optim_does_not_import_dp_accounting():
    code = "import sys, optim; assert 'dp_accounting' not in sys.modules, 'imported'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_missing_dp_accounting_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # makes `import dp_accounting` fail
    accountant = PrivacyAccountant()
    accountant.step(0.01, 1.0)  # recording steps needs no library
    with pytest.raises(ImportError, match=r"pip install 'purenn\[dp\]'"):
        accountant.epsilon(DELTA)
    with pytest.raises(ImportError, match=r"purenn\[dp\]"):
        noise_multiplier_for(1.0, DELTA, 0.01, 10)


def test_setup_cfg_declares_the_dp_extra_and_tests_use_it():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    extras = cfg["options.extras_require"]
    assert extras["dp"].split() == ["dp-accounting>=0.6.0"]
    assert "dp-accounting>=0.6.0" in extras["test"].split()
    assert "dp" not in cfg["options"]["install_requires"]


@needs_dp
def test_doctests():
    result = doctest.testmod(privacy, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

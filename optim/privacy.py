"""Privacy accounting for DP-SGD (issue 15): epsilon after T noisy steps, and the noise for a target.

The mathematics is not ours: every number comes from Google's `dp-accounting` library (the field's
audited implementation of the RDP and PLD accountants), an optional dependency installed with
`pip install 'purenn[dp]'`. This module is a small API on top of it whose state is plain data:

    accountant = PrivacyAccountant()                   # Poisson sampling (the default)
    accountant.step(sampling_rate=q, noise_multiplier=sigma)   # once per DP-SGD step
    accountant.epsilon(delta=1e-5)                     # RDP accountant, Balle et al. 2019 conversion
    accountant.epsilon(1e-5, method="pld")             # privacy loss distributions: tighter
    accountant.epsilon(1e-5, method="rdp_classic")     # the older conversion papers print
    json.dumps(accountant.to_dict())                   # a list of events: goes into a checkpoint

Each step of DP-SGD is one Poisson-subsampled Gaussian mechanism: every example enters the batch
independently with probability `q` (the sampling rate, expected batch size / dataset size) and
the clipped gradient sum gets Gaussian noise of standard deviation `sigma * C` (sensitivity C, see
optim/dp.py). The neighbouring relation is add-or-remove one example. T steps compose into
`SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)`.

The three epsilon methods (all for the same composed event):
  * "rdp": Renyi DP of the subsampled Gaussian (Mironov, Talwar, Zhang 2019, arXiv:1908.10530) at
    dp-accounting's grid of orders, converted to (epsilon, delta) with the improved bound
    (Balle et al. 2020, arXiv:1905.09982, Thm 21; dp-accounting's `RdpAccountant.get_epsilon`).
  * "rdp_classic": the same RDP values with the original conversion
    `epsilon = min_a RDP(a) + log(1/delta) / (a - 1)` (Mironov 2017, arXiv:1702.07476, Prop. 3),
    used by TF Privacy before 2020 and by most DP-SGD papers: use it to compare with printed
    numbers (the MNIST setting q = 256/60000, sigma 1.1, 60 epochs gives 3.01 this way, 2.60 with
    "rdp" and 2.38 with "pld", all for delta 1e-5). It is never tighter than "rdp".
  * "pld": privacy loss distributions (Koskela et al. 2020; Doroshenko et al. 2022), numerically
    near-exact for this mechanism; `value_discretization_interval` trades accuracy for time.

Shuffling. `PrivacyAccountant(sampling="shuffle")` is for runs that shuffle the dataset each epoch
and cut it into fixed-size batches. Such runs are accounted here AS IF they were Poisson sampled
with `q = batch_size / dataset_size`, as TF Privacy, Opacus and most papers do. That is a
heuristic, not a theorem: shuffled batches are not Poisson batches and their true epsilon can be
larger (Chua et al. 2024, "How Private are DP-SGD Implementations?", arXiv:2403.17673). We keep
the label in the state (and in `to_dict()`), so reports can say which guarantee they state; use
Poisson sampling (`optim.dp.poisson_batch`) for a proven one. (dp-accounting's
`SampledWithoutReplacementDpEvent` is no substitute: it models a fresh fixed-size sample per
step, not an epoch's shuffle, under the replace-one relation, and the PLD accountant lacks it.)

Example (TF Privacy's reference case: 60000 examples, batch 150, sigma 1.3, 15 epochs):
    >>> accountant = PrivacyAccountant()
    >>> accountant.step(150 / 60000, 1.3, count=steps_for_epochs(15, 60000, 150))
    >>> round(accountant.epsilon(1e-5), 6)
    0.724223
"""
import copy
import math
import numbers
from fractions import Fraction

__all__ = ["PrivacyAccountant", "epsilon_for", "noise_multiplier_for", "steps_for_epochs",
           "ACCOUNTING_METHODS", "SAMPLING_MODES"]

ACCOUNTING_METHODS = ("rdp", "pld", "rdp_classic")
SAMPLING_MODES = ("poisson", "shuffle")
_FORMAT = "purenn.privacy_accountant"
_VERSION = 1
_EVENT_KIND = "poisson_gaussian"
_EVENT_KEYS = ("kind", "sampling_rate", "noise_multiplier", "steps")
_DEFAULT_PLD_INTERVAL = 1e-4


def _dp_accounting():
    """Import dp-accounting on first use, so `import optim` works without it."""
    try:
        import dp_accounting
    except ImportError as e:
        raise ImportError(
            "Privacy accounting (optim.privacy) needs Google's dp-accounting library, which is not "
            "installed. Install it with: pip install 'purenn[dp]' (or pip install "
            f"'dp-accounting>=0.6.0'). The import failed with: {e}") from e
    return dp_accounting


# ----- argument checks -----------------------------------------------------------------------------

def _check_rate(fn, q):
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 <= q <= 1:
        raise ValueError(f"{fn}: sampling_rate must be a number in [0, 1] (the probability that an "
                         f"example is in a batch, expected batch size / dataset size), got {q!r}.")
    return float(q)


def _check_sigma(fn, sigma):
    if (isinstance(sigma, bool) or not isinstance(sigma, numbers.Real) or not math.isfinite(sigma)
            or sigma < 0):
        raise ValueError(f"{fn}: noise_multiplier must be a finite number >= 0 (noise std / "
                         f"l2_norm_clip), got {sigma!r}.")
    return float(sigma)


def _check_count(fn, name, n, allow_zero=False):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < (0 if allow_zero else 1):
        raise ValueError(f"{fn}: {name} must be an integer >= {0 if allow_zero else 1}, got {n!r}.")
    return int(n)


def _check_delta(fn, delta):
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"{fn}: delta must be a number in (0, 1), typically below 1 / dataset size, "
                         f"got {delta!r}.")
    return float(delta)


def _check_method(fn, method):
    if method not in ACCOUNTING_METHODS:
        raise ValueError(f"{fn}: method must be one of {ACCOUNTING_METHODS}, got {method!r}.")
    return method


def _check_sampling(fn, sampling):
    if sampling not in SAMPLING_MODES:
        raise ValueError(f"{fn}: sampling must be one of {SAMPLING_MODES} ('shuffle' is accounted as "
                         f"Poisson sampling at the same rate), got {sampling!r}.")
    return sampling


def _check_interval(fn, interval):
    if (isinstance(interval, bool) or not isinstance(interval, numbers.Real)
            or not math.isfinite(interval) or interval <= 0):
        raise ValueError(f"{fn}: value_discretization_interval must be a finite number > 0 "
                         f"(e.g. 1e-4), got {interval!r}.")
    return float(interval)


# ----- events and accountants ----------------------------------------------------------------------

def _dp_event(events):
    """The dp-accounting event of a list of our event dicts (in order)."""
    dpa = _dp_accounting()
    parts = [dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(e["sampling_rate"], dpa.GaussianDpEvent(e["noise_multiplier"])),
        e["steps"]) for e in events]
    return parts[0] if len(parts) == 1 else dpa.ComposedDpEvent(parts)


def _classic_rdp_epsilon(orders, rdp, delta):
    """Mironov 2017, Prop. 3: an (alpha, r)-RDP mechanism is (r + log(1/delta)/(alpha-1), delta)-DP;
    minimized over the orders. Orders at or below 1 carry no bound."""
    best = math.inf
    for a, r in zip(orders, rdp):
        if a > 1:
            best = min(best, float(r) + math.log(1 / delta) / (float(a) - 1))
    return max(best, 0.0)


def _fresh_accountant(method, value_discretization_interval):
    """A fresh dp-accounting accountant whose `get_epsilon` implements `method`."""
    dpa = _dp_accounting()
    if method == "pld":
        return dpa.pld.PLDAccountant(value_discretization_interval=value_discretization_interval)
    if method == "rdp":
        return dpa.rdp.RdpAccountant()

    class ClassicRdpAccountant(dpa.rdp.RdpAccountant):
        """dp-accounting's RDP accountant with the older RDP-to-DP conversion (Mironov 2017)."""

        def get_epsilon(self, target_delta):
            return _classic_rdp_epsilon(self.orders, self.rdp, target_delta)

    return ClassicRdpAccountant()


# ----- the accountant -------------------------------------------------------------------------------

class PrivacyAccountant:
    """The privacy spent by a DP-SGD run: the list of its noisy steps, and epsilon for a delta.

    `step(sampling_rate, noise_multiplier, count=1)` records `count` steps, each a
    Poisson-subsampled Gaussian mechanism (see the module docstring); consecutive steps with the
    same rate and noise merge into one event `{"kind": "poisson_gaussian", "sampling_rate": q,
    "noise_multiplier": sigma, "steps": n}`. `epsilon(delta, method="rdp"|"pld"|"rdp_classic")`
    asks dp-accounting (installed with `pip install 'purenn[dp]'`). `to_dict()` is JSON-able and
    `from_dict` rebuilds the same accountant, so checkpoints hold it as plain data. `sampling` is
    "poisson" or "shuffle" (accounted as Poisson, a common heuristic; see the module docstring).

    Example:
        >>> accountant = PrivacyAccountant()
        >>> accountant.step(0.01, 1.0, count=100)
        >>> accountant.step(0.01, 1.0)
        >>> accountant.to_dict()["events"]
        [{'kind': 'poisson_gaussian', 'sampling_rate': 0.01, 'noise_multiplier': 1.0, 'steps': 101}]
        >>> accountant.steps
        101
    """

    def __init__(self, sampling="poisson"):
        self.sampling = _check_sampling("PrivacyAccountant", sampling)
        self._events = []
        self._cache = {}

    @property
    def events(self):
        """A copy of the list of events (dicts), oldest first."""
        return copy.deepcopy(self._events)

    @property
    def steps(self):
        """The total number of steps recorded."""
        return sum(e["steps"] for e in self._events)

    def step(self, sampling_rate, noise_multiplier, count=1):
        """Record `count` DP-SGD steps at this sampling rate and noise multiplier."""
        q = _check_rate("PrivacyAccountant.step", sampling_rate)
        sigma = _check_sigma("PrivacyAccountant.step", noise_multiplier)
        count = _check_count("PrivacyAccountant.step", "count", count)
        last = self._events[-1] if self._events else None
        if last is not None and last["sampling_rate"] == q and last["noise_multiplier"] == sigma:
            last["steps"] += count
        else:
            self._events.append({"kind": _EVENT_KIND, "sampling_rate": q, "noise_multiplier": sigma,
                                 "steps": count})
        self._cache.clear()

    def epsilon(self, delta, method="rdp", *, value_discretization_interval=_DEFAULT_PLD_INTERVAL):
        """Epsilon such that the steps so far are (epsilon, delta)-DP, by `method` ("rdp", "pld" or
        "rdp_classic"; see the module docstring). 0.0 before any step; `inf` if a step had no noise.
        `value_discretization_interval` is the PLD accountant's grid (smaller: tighter, slower).
        The composed accountants are cached until the next `step`."""
        delta = _check_delta("PrivacyAccountant.epsilon", delta)
        method = _check_method("PrivacyAccountant.epsilon", method)
        interval = _check_interval("PrivacyAccountant.epsilon", value_discretization_interval)
        if not self._events:
            return 0.0
        # The composed accountant depends only on the events (and the PLD grid): keep it until the
        # next step, so asking several deltas or both RDP conversions composes once.
        key = ("pld", interval) if method == "pld" else ("rdp",)
        if key not in self._cache:
            accountant = _fresh_accountant("pld" if method == "pld" else "rdp", interval)
            accountant.compose(_dp_event(self._events))
            self._cache[key] = accountant
        accountant = self._cache[key]
        if method == "rdp_classic":
            return _classic_rdp_epsilon(accountant.orders, accountant.rdp, delta)
        return float(accountant.get_epsilon(delta))

    def dp_event(self):
        """The steps so far as one dp-accounting `DpEvent` (for use with its other tools)."""
        if not self._events:
            return _dp_accounting().NoOpDpEvent()
        return _dp_event(self._events)

    def to_dict(self):
        """The state as JSON-able data: format, version, sampling mode and the list of events."""
        return {"format": _FORMAT, "version": _VERSION, "sampling": self.sampling,
                "events": copy.deepcopy(self._events)}

    @classmethod
    def from_dict(cls, data):
        """The accountant whose `to_dict()` is `data` (checked field by field)."""
        fn = "PrivacyAccountant.from_dict"
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"{fn}: expected a dict with format {_FORMAT!r} (made by "
                             f"PrivacyAccountant.to_dict), got {data!r:.200}.")
        if data.get("version") != _VERSION:
            raise ValueError(f"{fn}: unknown version {data.get('version')!r}; this code reads "
                             f"version {_VERSION}.")
        accountant = cls(sampling=data.get("sampling"))
        events = data.get("events")
        if not isinstance(events, list):
            raise ValueError(f"{fn}: 'events' must be a list, got {events!r:.200}.")
        for i, e in enumerate(events):
            if not isinstance(e, dict) or sorted(e) != sorted(_EVENT_KEYS) or e["kind"] != _EVENT_KIND:
                raise ValueError(f"{fn}: event {i} must be a dict with keys {list(_EVENT_KEYS)} and "
                                 f"kind {_EVENT_KIND!r}, got {e!r}.")
            accountant._events.append({
                "kind": _EVENT_KIND,
                "sampling_rate": _check_rate(fn, e["sampling_rate"]),
                "noise_multiplier": _check_sigma(fn, e["noise_multiplier"]),
                "steps": _check_count(fn, f"event {i} steps", e["steps"])})
        return accountant

    def __eq__(self, other):
        return (isinstance(other, PrivacyAccountant) and self.sampling == other.sampling
                and self._events == other._events)

    def __repr__(self):
        return f"PrivacyAccountant(sampling={self.sampling!r}, steps={self.steps}, events={self._events})"


# ----- convenience functions ------------------------------------------------------------------------

def steps_for_epochs(epochs, num_examples, expected_batch_size):
    """The number of steps in `epochs` passes at this expected batch size: `ceil(epochs * N / B)`,
    computed exactly (no float rounding: 15 epochs of 60000 at batch 150 is 6000, not 6001).

    Example:
        >>> steps_for_epochs(60, 60000, 256)
        14063
    """
    num_examples = _check_count("steps_for_epochs", "num_examples", num_examples)
    expected_batch_size = _check_count("steps_for_epochs", "expected_batch_size", expected_batch_size)
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Real) or epochs < 0:
        raise ValueError(f"steps_for_epochs: epochs must be a number >= 0, got {epochs!r}.")
    return math.ceil(Fraction(epochs) * num_examples / expected_batch_size)


def epsilon_for(sampling_rate, noise_multiplier, steps, delta, method="rdp", *,
                value_discretization_interval=_DEFAULT_PLD_INTERVAL):
    """Epsilon for `steps` Poisson-subsampled Gaussian steps at rate q and noise sigma.

    The same as a fresh `PrivacyAccountant` after `step(sampling_rate, noise_multiplier, steps)`.

    Example:
        >>> round(epsilon_for(256 / 60000, 1.1, 14063, 1e-5, method="rdp_classic"), 3)
        3.008
    """
    accountant = PrivacyAccountant()
    if _check_count("epsilon_for", "steps", steps, allow_zero=True):
        accountant.step(sampling_rate, noise_multiplier, count=steps)
    return accountant.epsilon(delta, method, value_discretization_interval=value_discretization_interval)


def noise_multiplier_for(target_epsilon, delta, sampling_rate, steps, method="rdp", *,
                         value_discretization_interval=_DEFAULT_PLD_INTERVAL, tol=1e-6):
    """The smallest noise multiplier (within `tol`) whose epsilon after `steps` steps at this
    sampling rate is at most `target_epsilon` for `delta`, by `method`.

    Uses dp-accounting's `calibrate_dp_mechanism` (a bracketing search then Brent's method), which
    guarantees that the epsilon at the returned sigma does not exceed the target.

    Example:
        >>> sigma = noise_multiplier_for(3.0, 1e-5, 256 / 60000, 14063)
        >>> epsilon_for(256 / 60000, sigma, 14063, 1e-5) <= 3.0
        True
    """
    fn = "noise_multiplier_for"
    if (isinstance(target_epsilon, bool) or not isinstance(target_epsilon, numbers.Real)
            or not math.isfinite(target_epsilon) or target_epsilon <= 0):
        raise ValueError(f"{fn}: target_epsilon must be a finite number > 0, got {target_epsilon!r}.")
    delta = _check_delta(fn, delta)
    q = _check_rate(fn, sampling_rate)
    steps = _check_count(fn, "steps", steps)
    method = _check_method(fn, method)
    interval = _check_interval(fn, value_discretization_interval)
    if q == 0:
        raise ValueError(f"{fn}: with sampling_rate 0 no example is ever used and any noise "
                         "multiplier (even 0) meets the target; nothing to calibrate.")
    dpa = _dp_accounting()

    def event(sigma):
        return _dp_event([{"kind": _EVENT_KIND, "sampling_rate": q, "noise_multiplier": sigma,
                           "steps": steps}])

    return float(dpa.calibrate_dp_mechanism(
        lambda: _fresh_accountant(method, interval), event, float(target_epsilon), delta,
        bracket_interval=dpa.LowerEndpointAndGuess(0.0, 1.0), tol=tol))

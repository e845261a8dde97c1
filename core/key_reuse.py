"""Key-reuse checking (`config.update("debug_key_reuse", True)`, or `PURENN_DEBUG_KEY_REUSE=1`).

A PRNG key (uint32[..., 2]) must be consumed once: a sampler, `split`, `fold_in` or `bits` given
the same key twice returns the same bits (only `fold_in`s of different data into one key do not
meet: their consumptions are `shared`). With the option on, a second consumption raises
`errors.KeyReuseError` naming both consumers, the first one's stack chained as the error's cause.
Off, nothing here runs: core.random binds no marker and no program contains one.

How. `core.random` calls `consume(key, "random.normal")` before deriving bits from a key; that
binds `random_consume_p` (core/lax/prng.py), the identity on the key:

* on a concrete Array (eager code, or eager vmap whose batching rule re-binds the marker on the
  stacked keys) the Array is marked at once: each key position of a concrete key array has a slot
  holding its first `Consumption`, and every Array holding that key (a slice, reshape or
  concatenation of keys, a jitted function's output that is its input) holds the same slot, so
  `normal(keys[0])` marks `keys` too.
* under a trace (jit, scan and cond bodies, ...) it is recorded as an equation, and the staged
  program is checked by a static analysis when a primitive holding it runs eagerly (`_checked_apply`
  below, installed in place of `dispatch.apply_primitive` while the option is on). The analysis
  gives every key an integer id per key position, maps ids through the equations (views forward
  them, anything else makes fresh ones), records which ids each marker consumes, and summarizes
  each program as "which inputs it consumes, and which inputs its outputs are"; a primitive holding
  a program replays that summary onto the ids of its operands (jit, remat and custom_jvp/vjp once;
  cond once per branch, each branch from the same state, their consumption merged; scan once per
  iteration, with the carry fed back, so a key consumed from the carry and not replaced conflicts
  with the previous iteration; while as scan with an unknown trip count). The eager operands'
  slots seed the ids (one id per slot); afterwards the consumed slots are marked, and an output
  that is an input's key gets that input's slot.

Ids (and slots) are tracked per *word*: a value derived from keys has one entry per uint32
element, word j (0 or 1) of key k being `2 * k + j` (for slots, the pair `(slot, j)`). Views then
map any axis, the key words' own axis included, the way NumPy maps an index array, so keys stay
tracked through programs that move the word axis, as vmap over a typed key's data does
(`prng_keys.on_key_data`: `jnp.ravel`, `jnp.tile`, ... on a key array transpose the word axis to
the front, work on the key axes and transpose it back). A consumed value's words are a key where
the pair at each position is words 0 and 1 of one key; any other pair is a new key to the checker.

docs/design.md ("Key-reuse checking") states what counts as a consumption and the limits.
"""
import math
import os
import traceback
import weakref

import numpy as np

from . import dtypes, errors
from . import trace as _trace_module
from .array import Array
from .config import config
from .ir import ClosedJaxpr, Jaxpr, Literal

__all__ = ["consume", "consume_concrete", "install_eager_check", "Consumption", "FirstKeyConsumption"]

_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# purenn's packages built on core (layers, optimizers, the trainer): a key they consume is reported
# with the first frame outside them as well
_LIBRARY_DIRS = tuple(os.path.join(os.path.dirname(_CORE_DIR[:-1]), name) + os.sep for name in ("nn", "optim", "train"))
_STACK_FRAMES = 8  # user frames kept of each consumption's stack


# ----- where a consumption happened ------------------------------------------------------------

class Site:
    """The place a key was consumed: 'file:line (function)' of the innermost frame outside core/
    and the formatted user stack. Equal by value, so equal traces still intern to one program."""
    __slots__ = ("where", "stack")

    def __init__(self, where, stack):
        self.where, self.stack = where, stack

    def __eq__(self, other):
        return isinstance(other, Site) and (self.where, self.stack) == (other.where, other.stack)

    def __hash__(self):
        return hash((self.where, self.stack))

    def __repr__(self):  # short in printed jaxprs: `random_consume[name=random.normal site=f.py:3]`
        return os.path.basename(self.where) if self.where else "?"


def _capture_site():
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_CORE_DIR)][-_STACK_FRAMES:]
    if not frames:
        return Site(None, ())
    where = _frame_text(frames[-1])
    if frames[-1].filename.startswith(_LIBRARY_DIRS):  # a layer or optimizer of ours: name its caller too
        caller = next((f for f in reversed(frames) if not f.filename.startswith(_LIBRARY_DIRS)), None)
        if caller is not None:
            where += f", called from {_frame_text(caller)}"
    return Site(where, tuple(traceback.format_list(frames)))


def _frame_text(frame):
    return f"{frame.filename}:{frame.lineno} ({frame.name})"


class Consumption:
    """One consumption of a key: the consuming function's name and its Site. A `shared` one
    (`fold_in`) may meet other shared ones: `fold_in(key, a)` and `fold_in(key, b)` hash different
    counters of the key, but any other use of a folded key (a sampler, split) may meet one of them."""
    __slots__ = ("name", "site", "shared")

    def __init__(self, name, site, shared=False):
        self.name, self.site, self.shared = name, site, shared

    def allows(self, later):
        """Whether `later` may consume a key this one consumed."""
        return self.shared and later.shared

    def same_place(self, other):
        return self.name == other.name and self.site == other.site

    def describe(self):
        return f"{self.name} at {self.site.where}" if self.site is not None and self.site.where else self.name


class FirstKeyConsumption(Exception):
    """The cause chained to a KeyReuseError: where the key was consumed the first time."""


def _reuse_error(new, old, extra=""):
    err = errors.KeyReuseError(
        f"{new.describe()} consumes a PRNG key that {old.describe()} already consumed. {extra}A key must be "
        "consumed once (by a sampler, split, fold_in or bits): the same key gives the same random bits, so "
        "the two results are not independent. Derive fresh keys with `key, sub = random.split(key)` and "
        "consume each one once; `random.clone(key)` marks an intended reuse.")
    stack = "".join(old.site.stack) if old.site is not None else ""
    err.__cause__ = FirstKeyConsumption(f"the first consumption of the key, by {old.describe()}"
                                        + (f"; its stack (innermost last):\n{stack}" if stack else "."))
    return err


# ----- the entry point core.random calls ----------------------------------------------------------

def consume(key, name, shared=False):
    """Mark PRNG key `key` (an Array or a tracer) consumed by `name`, e.g. "random.normal"; returns
    the key (core.random derives the bits from the returned value). Only called while
    `debug_key_reuse` is on. A second consumption of the same key raises `errors.KeyReuseError`,
    unless both are `shared` (`fold_in`'s: each folds in its own data).

    Example:
        >>> core.config.update("debug_key_reuse", True)
        >>> key = consume(random.PRNGKey(0), "random.normal")
        >>> consume(key, "random.uniform")
        Traceback (most recent call last):
        ...
        core.errors.KeyReuseError: random.uniform at ... consumes a PRNG key that random.normal at ...
        >>> core.config.update("debug_key_reuse", False)
    """
    from .lax.prng import random_consume_p
    install_eager_check()
    return random_consume_p.bind(key, name=name, site=_capture_site(), shared=bool(shared))


def consume_concrete(key, name, site, shared=False):
    """`random_consume_p` applied eagerly: mark the Array `key` consumed and return it."""
    if not config.debug_key_reuse or type(key) is not Array or _key_shape(key.aval) is None:
        return key
    slots = _key_slots(key)
    new = Consumption(name, site, shared)
    for index in np.ndindex(slots.shape):
        old = slots[index].use
        if old is not None and not old.allows(new):
            raise _reuse_error(new, old, _position_note(slots.shape, index))
    for slot in slots.flat:  # a slot met twice (a broadcast key) is one key: consumed once
        if slot.use is None:
            slot.use = new
    return key


def _position_note(shape, index):
    return f"(The key at position {index} of the key array of shape {shape}.) " if shape else ""


# ----- marks on concrete Arrays ---------------------------------------------------------------------
# A concrete key array has one `_Slot` per key position, holding that key's first consumption.
# Arrays holding the same key hold the same slot object: a slice, reshape, broadcast or
# concatenation of keys gets its operands' slots, a program's output that is one of its inputs gets
# that input's slots. Marks are per word: an Array's entry is an object array of its own shape
# whose elements are `(slot, j)`, word j of the slot's key, so views that move the word axis keep
# them. `_slots` maps id(Array) -> (weak reference, object array of words); Arrays are unhashable,
# hence ids, and the weak reference's callback drops the entry when the Array goes away (before its
# id can be reused).

class _Slot:
    __slots__ = ("use",)

    def __init__(self, use=None):
        self.use = use


_slots = {}


def _key_shape(aval):
    """The shape of the key positions of a value of type `aval` (shape[:-1]), or None if it is no key."""
    shape = getattr(aval, "shape", None)
    if shape and shape[-1] == 2 and aval.dtype == dtypes.uint32:
        return shape[:-1]
    return None


def _slot_words(slots):
    """The word marks `(slot, j)` of keys whose slots are `slots` (shape S): shape S + (2,)."""
    words = np.empty(slots.shape + (2,), dtype=object)
    for index in np.ndindex(slots.shape):
        words[index + (0,)], words[index + (1,)] = (slots[index], 0), (slots[index], 1)
    return words


def _word_slots(array):
    """The word marks of a concrete Array: its own if it holds tracked words, new keys for a key
    array seen the first time, else None."""
    entry = _slots.get(id(array))
    if entry is not None and entry[0]() is array:
        return entry[1]
    shape = _key_shape(array.aval)
    if shape is None:
        return None
    slots = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        slots[index] = _Slot()
    words = _slot_words(slots)
    _set_slots(array, words)
    return words


def share_marks(source, copy):
    """Give the concrete Array `copy` (an eager copy of `source`, which skips the eager check) the
    key marks of `source`: a copied key is the same key."""
    if type(source) is Array and type(copy) is Array:
        words = _word_slots(source)
        if words is not None:
            _set_slots(copy, words)


def _key_slots(array):
    """The slot of each key position of a concrete key array. A position whose two words are not
    words 0 and 1 of one key is a new key (the Array's marks are updated to say so)."""
    words = _word_slots(array)
    slots = np.empty(words.shape[:-1], dtype=object)
    mixed = False
    for index in np.ndindex(slots.shape):
        (s0, j0), (s1, j1) = words[index + (0,)], words[index + (1,)]
        if s0 is s1 and (j0, j1) == (0, 1):
            slots[index] = s0
        else:
            slots[index], mixed = _Slot(), True
    if mixed:
        _set_slots(array, _slot_words(slots))
    return slots


def _set_slots(array, slots):
    key = id(array)

    def forget(ref, key=key):
        entry = _slots.get(key)
        if entry is not None and entry[0] is ref:
            del _slots[key]

    _slots[key] = (weakref.ref(array, forget), slots)


# ----- the analysis state ----------------------------------------------------------------------------

class _State:
    """Consumed key ids (id -> first Consumption) and the id counter. A child state (a cond branch)
    sees its parent's consumption and records its own apart, sharing the counter."""

    def __init__(self, parent=None):
        self.parent = parent
        self.counter = parent.counter if parent is not None else [0]  # shared with the children
        self.consumed = {}

    def fresh(self, shape):
        n = math.prod(shape)
        start = self.counter[0]
        self.counter[0] += n
        return np.arange(start, start + n, dtype=np.int64).reshape(shape)

    def fresh_words(self, shape):
        """The word ids of fresh keys of key shape `shape`: shape + (2,)."""
        return _words_of(self.fresh(shape))

    def find(self, i):
        state = self
        while state is not None:
            old = state.consumed.get(i)
            if old is not None:
                return old
            state = state.parent
        return None

    def consume(self, i, new, loop=None, recompute=False):
        old = self.find(i)
        if old is not None:
            if old.allows(new):
                return
            if recompute and old.same_place(new):
                return  # checkpoint recomputing the forward pass consumes the same key at the same place
            raise _reuse_error(new, old, loop.note() if loop is not None and i in loop.seen else "")
        self.consumed[i] = new


def _words_of(keys):
    """Word ids (shape S + (2,)) of the keys with ids `keys` (shape S)."""
    return np.stack([2 * keys, 2 * keys + 1], axis=-1)


def _keys_of(state, words):
    """Key ids (shape S) of the word ids `words` (shape S + (2,)): a position whose two words are
    not words 0 and 1 of one key gets a fresh key."""
    first, second = words[..., 0], words[..., 1]
    whole = (first % 2 == 0) & (second == first + 1)
    return np.where(whole, first // 2, state.fresh(first.shape))


class _Loop:
    """The ids consumed by the iterations of one loop so far, to explain a conflict with them."""

    def __init__(self, kind):
        self.kind, self.seen = kind, set()

    def note(self):
        return (f"The key was consumed in an earlier iteration of this {self.kind}: a key carried by a loop (or "
                "closed over by its body) is the same key in every iteration; split it in the body and carry "
                "the new key (`key, sub = random.split(key)`). ")


# ----- structural equations: word ids (or marks) follow the elements -----------------------------------
# Each function maps the word arrays of the operands (ids in the analysis, `(slot, j)` marks for
# concrete Arrays; each of its operand's shape) to the output's, as the equation maps elements, or
# returns None when the output is not made of them (then its keys are fresh). The word axis is an
# axis like the others. `statics(i)` is operand i's value as a Python int when known, else None.

def _fwd_identity(params, ins, in_avals, out_aval, statics):
    return ins[0]


def _fwd_convert(params, ins, in_avals, out_aval, statics):
    return ins[0] if in_avals[0].dtype == out_aval.dtype else None


def _fwd_reshape(params, ins, in_avals, out_aval, statics):
    if params.get("dimensions") is not None:
        return None
    return ins[0].reshape(out_aval.shape)


def _fwd_squeeze(params, ins, in_avals, out_aval, statics):
    ndim = in_avals[0].ndim
    return np.squeeze(ins[0], axis=tuple(d % ndim for d in params["dimensions"]))


def _fwd_transpose(params, ins, in_avals, out_aval, statics):
    return ins[0].transpose(tuple(params["permutation"]))


def _fwd_rev(params, ins, in_avals, out_aval, statics):
    ndim = in_avals[0].ndim
    return np.flip(ins[0], axis=tuple(d % ndim for d in params["dimensions"]))


def _fwd_slice(params, ins, in_avals, out_aval, statics):
    starts, limits = params["start_indices"], params["limit_indices"]
    strides = params.get("strides") or (1,) * len(starts)
    return ins[0][tuple(slice(s, e, st) for s, e, st in zip(starts, limits, strides))]


def _fwd_dynamic_slice(params, ins, in_avals, out_aval, statics):
    shape, sizes = in_avals[0].shape, params["slice_sizes"]
    starts = [statics(1 + i) for i in range(len(shape))]
    if any(s is None for s in starts):
        return None
    starts = [min(max(s, 0), n - k) for s, n, k in zip(starts, shape, sizes)]  # clamped, as XLA does
    return ins[0][tuple(slice(s, s + k) for s, k in zip(starts, sizes))]


def _fwd_broadcast_in_dim(params, ins, in_avals, out_aval, statics):
    dims, in_shape, out_shape = params["broadcast_dimensions"], in_avals[0].shape, out_aval.shape
    placed = [1] * len(out_shape)
    for i, d in enumerate(dims):
        placed[d] = in_shape[i]
    return np.broadcast_to(ins[0].reshape(placed), out_shape)


def _fwd_concatenate(params, ins, in_avals, out_aval, statics):
    if any(x is None for x in ins):
        return None
    return np.concatenate(ins, axis=params["dimension"])


_FORWARD_NAMES = {"convert_element_type": _fwd_convert, "reshape": _fwd_reshape, "squeeze": _fwd_squeeze,
                  "transpose": _fwd_transpose, "rev": _fwd_rev, "slice": _fwd_slice,
                  "dynamic_slice": _fwd_dynamic_slice, "broadcast_in_dim": _fwd_broadcast_in_dim,
                  "concatenate": _fwd_concatenate, "copy": _fwd_identity, "stop_gradient": _fwd_identity,
                  "name": _fwd_identity}


def _forward(fn, params, ins, in_avals, out_aval, statics):
    if out_aval.dtype != dtypes.uint32 or ins[0] is None:
        return None
    out = fn(params, ins, in_avals, out_aval, statics)
    return out if out is not None and out.shape == out_aval.shape else None


# ----- summaries of programs ------------------------------------------------------------------------

class _Summary:
    """What a program does to the keys it is given, in local ids: inputs are 0..n_in-1 (key
    positions of its constvars then invars, in order), fresh keys n_in..n_in+n_fresh-1.
    `consumed`: (local input id, Consumption) pairs; `outs`: local word ids per output (None: no
    key array)."""
    __slots__ = ("in_shapes", "n_consts", "n_in", "n_fresh", "consumed", "outs")


_summaries = weakref.WeakKeyDictionary()


def _summary(closed):
    """The summary of a ClosedJaxpr (cached) or Jaxpr; a key consumed twice inside raises here."""
    cached = _summaries.get(closed) if isinstance(closed, ClosedJaxpr) else None
    if cached is not None:
        return cached
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    state = _State()
    binders = jaxpr.constvars + jaxpr.invars
    shapes = [_key_shape(v.aval) for v in binders]
    ins = [None if s is None else state.fresh_words(s) for s in shapes]
    n_in = sum(math.prod(s) for s in shapes if s is not None)
    outs = [o if o is not None and _key_shape(v.aval) is not None else None
            for o, v in zip(_run(state, jaxpr, ins), jaxpr.outvars, strict=True)]
    s = _Summary()
    s.in_shapes, s.n_consts, s.n_in = shapes, len(jaxpr.constvars), n_in
    s.consumed = [(i, c) for i, c in state.consumed.items() if i < n_in]
    # number the fresh keys the outputs hold compactly after the inputs
    fresh = np.unique(np.concatenate([o.ravel() // 2 for o in outs if o is not None] or [np.zeros(0, np.int64)]))
    fresh = fresh[fresh >= n_in]
    s.n_fresh = len(fresh)

    def local(words):
        keys = words // 2
        return 2 * np.where(keys < n_in, keys, n_in + np.searchsorted(fresh, keys)) + words % 2
    s.outs = [None if o is None else local(o) for o in outs]
    if isinstance(closed, ClosedJaxpr):
        _summaries[closed] = s
    return s


def _replay(state, s, in_ids, loop=None, recompute=False):
    """Apply summary `s` to operands with word ids `in_ids` (one per invar; the program's constvars
    get fresh ids): consume in `state`, return the outputs' word ids."""
    table = np.empty(s.n_in + s.n_fresh, np.int64)
    pos = 0
    for ids, shape in zip([None] * s.n_consts + list(in_ids), s.in_shapes, strict=True):
        if shape is None:
            continue
        keys = state.fresh(shape) if ids is None or ids.shape != shape + (2,) else _keys_of(state, ids)
        n = math.prod(shape)
        table[pos:pos + n] = keys.ravel()
        pos += n
    table[s.n_in:] = state.fresh((s.n_fresh,))
    consumed = []
    for local, use in s.consumed:
        i = int(table[local])
        state.consume(i, use, loop, recompute)
        consumed.append(i)
    if loop is not None:
        loop.seen.update(consumed)
    return [None if o is None else 2 * table[o // 2] + o % 2 for o in s.outs]


def _jaxprs_in(value):
    if isinstance(value, (ClosedJaxpr, Jaxpr)):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _jaxprs_in(v)


# ----- equations ------------------------------------------------------------------------------------

def _run(state, jaxpr, in_ids):
    """Interpret `jaxpr` (constvars then invars bound to `in_ids`) on word ids; return the outputs'."""
    env = {}

    def read(atom):
        return None if type(atom) is Literal else env.get(atom)

    for v, ids in zip(jaxpr.constvars + jaxpr.invars, in_ids, strict=True):
        shape = _key_shape(v.aval)
        env[v] = (None if shape is None else ids if ids is not None and ids.shape == shape + (2,)
                  else state.fresh_words(shape))
    for eqn in jaxpr.eqns:
        atoms = eqn.invars

        def statics(i, atoms=atoms):
            a = atoms[i]
            if type(a) is Literal and np.ndim(a.val) == 0 and np.asarray(a.val).dtype.kind in "iu":
                return int(a.val)
            return None

        outs = _apply(state, eqn.primitive, eqn.params, [read(a) for a in atoms], [a.aval for a in atoms],
                      [v.aval for v in eqn.outvars], statics)
        for v, ids in zip(eqn.outvars, outs, strict=True):
            env[v] = ids
    return [read(a) for a in jaxpr.outvars]


def _apply(state, prim, params, ins, in_avals, out_avals, statics):
    """The output word ids of one equation (fresh keys for key arrays it does not forward)."""
    rule = _rules().get(prim)
    if rule is not None:
        return rule(state, params, ins, out_avals)
    fwd = _forward_rules().get(prim)
    if fwd is not None:
        out = _forward(fwd, params, ins, in_avals, out_avals[0], statics)
        if out is not None:
            return [out]
    else:
        for value in params.values():  # a primitive holding programs that we know nothing about:
            for j in _jaxprs_in(value):  # still check each program on its own
                _summary(j)
    return [None if _key_shape(a) is None else state.fresh_words(_key_shape(a)) for a in out_avals]


def _consume_rule(state, params, ins, out_avals):
    use = Consumption(params["name"], params["site"], params["shared"])
    ids = ins[0]
    if ids is None:
        return [None]
    for i in np.unique(_keys_of(state, ids)).tolist():  # a key broadcast along a vmapped axis is one key
        state.consume(i, use)
    return [ids]


def _call_rule(jaxpr_param, recompute=False):
    def rule(state, params, ins, out_avals):
        return _replay(state, _summary(params[jaxpr_param]), ins, recompute=recompute)
    return rule


def _merge_outs(state, alternatives, out_avals):
    """Output word ids where every alternative holds the same key; fresh keys elsewhere."""
    outs = []
    for k, aval in enumerate(out_avals):
        arrays = [alt[k] for alt in alternatives]
        shape = _key_shape(aval)
        if shape is None:
            outs.append(None)
            continue
        arrays = [a if a is not None and a.shape == shape + (2,) else state.fresh_words(shape) for a in arrays]
        same = np.logical_and.reduce([(a == arrays[0]).all(-1, keepdims=True) for a in arrays])
        outs.append(np.where(same, arrays[0], state.fresh_words(shape)))
    return outs


def _cond_rule(state, params, ins, out_avals):
    # every branch starts from the same state; a key consumed by one branch or by several (each
    # once) counts as consumed once afterwards
    operands, alternatives, merged = ins[1:], [], {}
    for branch in params["branches"]:
        child = _State(state)
        alternatives.append(_replay(child, _summary(branch), operands))
        for i, use in child.consumed.items():
            merged.setdefault(i, use)
    state.consumed.update(merged)
    return _merge_outs(state, alternatives, out_avals)


def _loop_steps(s, first_carry, num_carry):
    """Iterations to simulate so that a key moving around the carry and consumed twice is caught.
    Only carry positions whose new value is an old carry position move old keys around (the others
    get fresh keys, or loop-invariant ones); they form a map of n positions, periodic after at most
    n steps with a period of at most n. Two more iterations catch a key consumed every iteration."""
    start = sum(math.prod(shape) for shape in s.in_shapes[:first_carry] if shape is not None)
    stop = start + sum(math.prod(shape) for shape in s.in_shapes[first_carry:first_carry + num_carry]
                       if shape is not None)
    moved = sum(int(np.count_nonzero((o[..., 0] // 2 >= start) & (o[..., 0] // 2 < stop)))
                for o in s.outs[:num_carry] if o is not None)
    return 2 * moved + 3


def _scan_rule(state, params, ins, out_avals):
    nc, nk, length, reverse = params["num_consts"], params["num_carry"], params["length"], params["reverse"]
    body = params["jaxpr"]
    s = _summary(body)
    consts, carry, xs = list(ins[:nc]), list(ins[nc:nc + nk]), list(ins[nc + nk:])
    x_shapes = [_key_shape(a) for a in body.in_avals[nc + nk:]]
    xs = [x if x is not None and shape is not None and x.shape[1:] == shape + (2,) else None
          for x, shape in zip(xs, x_shapes, strict=True)]
    steps = min(length, _loop_steps(s, s.n_consts + nc, nk))
    loop, rows, previous = _Loop("scan"), {}, carry
    order = [length - 1 - i for i in range(length)] if reverse else list(range(length))
    for t in order[:steps]:
        outs = _replay(state, s, consts + carry + [None if x is None else x[t] for x in xs], loop)
        previous, carry = carry, outs[:nk]
        rows[t] = outs[nk:]
    if length > steps:
        _scan_remaining(state, s, consts, nk, xs, order[steps:], rows, loop)
        carry = _settled(state, carry, previous)
    ys = []
    for j, aval in enumerate(out_avals[nk:]):
        shape = _key_shape(aval)
        per_step = [rows[t][j] for t in range(length)]
        if shape is None:
            ys.append(None)
        elif any(r is None for r in per_step):
            ys.append(state.fresh_words(shape))
        else:
            ys.append(np.stack(per_step).reshape(shape + (2,)))
    return carry + ys


def _scan_remaining(state, s, consts, nk, xs, ts, rows, loop):
    """The iterations after the simulated ones, all at once: the scanned keys they consume, and
    their outputs (carried keys and fresh ones count as fresh there)."""
    n = len(ts)
    SCANNED, INVARIANT, FRESH = 0, 1, 2
    inputs = ([(None, FRESH)] * s.n_consts + [(c, INVARIANT) for c in consts] + [(None, FRESH)] * nk
              + [(x, SCANNED) for x in xs])
    columns, kinds = [], []  # per local input id: its ids in each remaining iteration, and its kind
    for (ids, kind), shape in zip(inputs, s.in_shapes, strict=True):
        if shape is None:
            continue
        size = math.prod(shape)
        if kind == SCANNED and ids is not None:
            column = _keys_of(state, ids).reshape(ids.shape[0], size)[ts]
        elif kind == INVARIANT and ids is not None and ids.shape == shape + (2,):
            column = np.broadcast_to(_keys_of(state, ids).reshape(1, size), (n, size))
        else:
            column, kind = state.fresh((n, size)), FRESH
        columns.append(column)
        kinds.append(np.full(size, kind))
    columns.append(state.fresh((n, s.n_fresh)))
    kinds.append(np.full(s.n_fresh, FRESH))
    table, kind = np.concatenate(columns, axis=1), np.concatenate(kinds)
    for local, use in s.consumed:
        if kind[local] == SCANNED:  # scanned keys differ per iteration; the others were checked already
            for i in table[:, local].tolist():
                state.consume(i, use, loop)
    for row, t in enumerate(ts):
        rows[t] = [None if o is None else 2 * table[row][o // 2] + o % 2 for o in s.outs[nk:]]


def _settled(state, carry, previous):
    """The carry after an unknown or unsimulated number of iterations: the keys that stopped
    changing, fresh keys for the others."""
    out = []
    for c, p in zip(carry, previous, strict=True):
        same = c is not None and p is not None and c.shape == p.shape
        out.append(None if c is None else np.where((c == p).all(-1, keepdims=True) if same else False, c,
                                                   state.fresh_words(c.shape[:-1])))
    return out


def _while_rule(state, params, ins, out_avals):
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    cond_s, body_s = _summary(params["cond_jaxpr"]), _summary(params["body_jaxpr"])
    cconsts, bconsts, carry = list(ins[:ncc]), list(ins[ncc:ncc + nbc]), list(ins[ncc + nbc:])
    loop, states = _Loop("while_loop"), [carry]
    for _ in range(_loop_steps(body_s, body_s.n_consts + nbc, len(carry))):  # any iteration may run
        _replay(state, cond_s, cconsts + carry, loop)
        carry = _replay(state, body_s, bconsts + carry, loop)
        states.append(carry)
    return _merge_outs(state, states, out_avals)


_RULES = None
_FORWARD = None


def _rules():
    global _RULES
    if _RULES is None:
        from .ad_checkpoint import remat_p
        from .api import jit_p
        from .custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
        from .lax.control_flow import cond_p, scan_p, while_p
        from .lax.prng import random_consume_p
        _RULES = {random_consume_p: _consume_rule, jit_p: _call_rule("jaxpr"),
                  remat_p: _call_rule("jaxpr", recompute=True), custom_jvp_call_p: _call_rule("call_jaxpr"),
                  custom_vjp_call_p: _call_rule("call_jaxpr"), cond_p: _cond_rule, scan_p: _scan_rule,
                  while_p: _while_rule}
    return _RULES


def _forward_rules():
    global _FORWARD
    if _FORWARD is None:
        from .ad_checkpoint import name_p
        from .lax import structural
        prims = {p.name: p for p in vars(structural).values() if isinstance(p, _trace_module.Primitive)}
        prims[name_p.name] = name_p
        _FORWARD = {prims[name]: fn for name, fn in _FORWARD_NAMES.items()}
    return _FORWARD


# ----- concrete arrays: the eager check ---------------------------------------------------------------
# While the option is on, `_checked_apply` replaces `dispatch.apply_primitive` as the eager path of
# `Primitive.bind` (core/trace.py): it checks a primitive holding programs before running it and
# carries marks through views. It puts the plain path back as soon as it sees the option off, so
# with the option off the eager path is exactly what it was.

_plain_apply = None


def install_eager_check():
    """Route eager primitive applications through `_checked_apply` until the option is seen off."""
    global _plain_apply
    if _trace_module._apply_primitive is not _checked_apply:
        from .dispatch import apply_primitive
        _plain_apply = apply_primitive
        _trace_module._apply_primitive = _checked_apply


def _checked_apply(prim, args, params):
    if not config.debug_key_reuse:
        _trace_module._apply_primitive = _plain_apply
        return _plain_apply(prim, args, params)
    rule = _rules().get(prim)
    if rule is None and any(True for v in params.values() for _ in _jaxprs_in(v)):
        rule = _apply  # an unknown primitive holding programs: each is checked on its own
    if rule is not None:
        return _apply_program(rule, prim, args, params)
    fwd = _forward_rules().get(prim)
    if fwd is not None and args and type(args[0]) is Array and (
            _key_shape(args[0].aval) is not None or id(args[0]) in _slots):
        return _apply_forward(fwd, prim, args, params)
    return _plain_apply(prim, args, params)


def _concrete_statics(args):
    def statics(i):
        a = args[i]
        aval = getattr(a, "aval", None)
        if aval is not None and aval.shape == () and aval.dtype.kind in "iu":
            return int(a)
        return None
    return statics


def _apply_forward(fwd, prim, args, params):
    slots = [_word_slots(a) if type(a) is Array else None for a in args]
    out = _plain_apply(prim, args, params)
    out_slots = _forward(fwd, params, slots, [a.aval for a in args], out.aval, _concrete_statics(args))
    if out_slots is not None:
        _set_slots(out, out_slots)
    return out


def _apply_program(rule, prim, args, params):
    """Check a primitive holding programs on concrete operands, run it, mark what it consumed."""
    from .lax._base import aval_of
    state, ins, slot_of_id, id_of_slot = _State(), [], {}, {}
    for a in args:
        shape = _key_shape(a.aval) if type(a) is Array else None
        if shape is None:
            ins.append(None)
            continue
        slots, ids = _key_slots(a), np.empty(shape, np.int64)
        for index in np.ndindex(shape):  # one id per slot: a key reached through two operands is one key
            slot = slots[index]
            i = id_of_slot.get(id(slot))
            if i is None:
                i = id_of_slot[id(slot)] = int(state.fresh(()))
                slot_of_id[i] = slot
                if slot.use is not None:
                    state.consumed[i] = slot.use
            ids[index] = i
        ins.append(_words_of(ids))
    in_avals = [aval_of(a) for a in args]
    out = prim.abstract_eval(*in_avals, **params)
    out_avals = list(out) if prim.multiple_results else [out]
    if rule is _apply:
        outs = _apply(state, prim, params, ins, in_avals, out_avals, _concrete_statics(args))
    else:
        outs = rule(state, params, ins, out_avals)  # raises on a reuse, before anything runs
    # Run first, then mark the operands: a run that re-evaluates the program op by op (the
    # debug_nans re-run) consumes the keys itself and must not find them consumed already.
    results = _plain_apply(prim, args, params)
    for i, slot in slot_of_id.items():
        if slot.use is None:
            slot.use = state.consumed.get(i)
    for r, words in zip(results if prim.multiple_results else [results], outs, strict=True):
        if words is None or type(r) is not Array:
            continue
        marks = np.empty(words.shape, dtype=object)
        for index in np.ndindex(words.shape):  # an input's key keeps its slot; a new key gets a new one
            i, j = divmod(int(words[index]), 2)
            slot = slot_of_id.get(i)
            if slot is None:
                slot = slot_of_id[i] = _Slot(state.consumed.get(i))
            marks[index] = (slot, j)
        _set_slots(r, marks)
    return results

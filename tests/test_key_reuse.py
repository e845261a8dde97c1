"""Key-reuse checking (`debug_key_reuse`, core/key_reuse.py; docs/reliability.md F36, E5): a PRNG
key consumed twice raises `errors.KeyReuseError` naming the first consumer, eagerly and under jit,
vmap, scan, cond and while_loop; split, fold_in and clone give keys that may be consumed on their own.

Oracles: whether an error is raised is decided by hand for each program (which key each sampler
receives); where a program runs, its numbers are compared with the same program run with the
checker off (the checker must not change any value).
"""
import doctest
import importlib

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import key_reuse, lax, random
from core.errors import KeyReuseError
from core.lax.prng import random_clone_p, random_consume_p


@pytest.fixture
def checking():
    """The checker on for one test; the global config restored afterwards (tests/conftest.py checks)."""
    core.config.update("debug_key_reuse", True)
    try:
        yield
    finally:
        core.config.update("debug_key_reuse", False)


def first_consumer_line(excinfo):
    """The chained cause of a KeyReuseError: where the key was consumed first."""
    cause = excinfo.value.__cause__
    while cause is not None and not isinstance(cause, key_reuse.FirstKeyConsumption):
        cause = cause.__cause__
    assert cause is not None, "the first consumption is not chained to the error"
    return str(cause)


# ----- off by default ----------------------------------------------------------------------------

def test_off_by_default_and_reuse_is_allowed():
    assert core.config.read("debug_key_reuse") is False
    key = random.PRNGKey(0)
    a, b = random.normal(key, (3,)), random.normal(key, (3,))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))  # reuse gives the same numbers
    f = core.jit(lambda k: random.normal(k) - random.normal(k))
    assert float(f(key)) == 0.0
    text = str(core.make_jaxpr(lambda k: random.normal(k))(key))
    assert "random_consume" not in text  # off, programs carry no markers at all


def test_environment_variable_turns_it_on(monkeypatch):
    config_module = importlib.import_module("core.config")  # `core.config` is the Config instance
    monkeypatch.setenv("PURENN_DEBUG_KEY_REUSE", "1")
    assert config_module.Config().debug_key_reuse is True
    monkeypatch.setenv("PURENN_DEBUG_KEY_REUSE", "0")
    assert config_module.Config().debug_key_reuse is False


def test_the_option_is_part_of_the_trace_key(checking):
    on = core.config.trace_key()
    core.config.update("debug_key_reuse", False)
    try:
        assert core.config.trace_key() != on
    finally:
        core.config.update("debug_key_reuse", True)


def test_a_function_traced_while_off_is_retraced_when_on():
    f = core.jit(lambda k: random.normal(k) + random.normal(k))
    key = random.PRNGKey(1)
    f(key)  # traced without markers
    core.config.update("debug_key_reuse", True)
    try:
        with pytest.raises(KeyReuseError):
            f(key)
    finally:
        core.config.update("debug_key_reuse", False)


def test_off_again_the_eager_path_is_the_plain_one():
    from core import dispatch, trace
    core.config.update("debug_key_reuse", True)
    try:
        random.normal(random.PRNGKey(0))
        assert trace._apply_primitive is not dispatch.apply_primitive  # eager ops are checked now
    finally:
        core.config.update("debug_key_reuse", False)
    jnp.ones(2) + 1.0  # the first eager operation with the option off puts the plain path back
    assert trace._apply_primitive is dispatch.apply_primitive


def test_a_cached_program_is_checked_after_the_option_was_off_and_on_again():
    f = core.jit(lambda k: random.normal(k))
    key = random.PRNGKey(0)
    core.config.update("debug_key_reuse", True)
    try:
        f(key)  # traced (with its marker) and run: consumes key
        core.config.update("debug_key_reuse", False)
        jnp.ones(2) + 1.0
        core.config.update("debug_key_reuse", True)
        with pytest.raises(KeyReuseError):
            f(key)  # no new trace, so no sampler ran: the jit call itself turns the check on
    finally:
        core.config.update("debug_key_reuse", False)


# ----- eager --------------------------------------------------------------------------------------

def test_eager_reuse_names_the_first_consumer(checking):
    key = random.PRNGKey(0)
    random.normal(key, (2,))  # the first consumer: this line
    with pytest.raises(KeyReuseError, match=r"random\.uniform at .*test_key_reuse\.py:\d+ .*consumes a PRNG key "
                                            r"that random\.normal at .*test_key_reuse\.py:\d+") as excinfo:
        random.uniform(key)
    cause = first_consumer_line(excinfo)
    assert "random.normal" in cause and "random.normal(key, (2,))  # the first consumer" in cause


def test_split_then_use_passes_and_matches_unchecked_values(checking):
    def program(key):
        key, sub = random.split(key)
        a = random.normal(sub, (3,))
        keys = random.split(key, 3)
        b = random.uniform(keys[0], (2,))
        c = random.bernoulli(keys[1], 0.5, (4,))
        d = random.fold_in(keys[2], 7)
        return a, b, c, random.randint(d, (2,), 0, 10)

    checked = program(random.PRNGKey(3))
    core.config.update("debug_key_reuse", False)
    unchecked = program(random.PRNGKey(3))
    core.config.update("debug_key_reuse", True)
    for x, y in zip(checked, unchecked):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("first,second", [
    (lambda k: random.split(k), lambda k: random.normal(k)),
    (lambda k: random.fold_in(k, 1), lambda k: random.normal(k)),
    (lambda k: random.uniform(k), lambda k: random.fold_in(k, 1)),
    (lambda k: random.fold_in(k, 1), lambda k: random.split(k)),
    (lambda k: random.bits(k), lambda k: random.split(k, 3)),
    (lambda k: random.choice(k, 5, (2,)), lambda k: random.permutation(k, 4)),
])
def test_split_fold_in_and_bits_consume_their_key(checking, first, second):
    key = random.PRNGKey(2)
    first(key)
    with pytest.raises(KeyReuseError):
        second(key)


def test_fold_in_of_several_data_into_one_key_is_no_reuse(checking):
    # fold_in(key, d) hashes the key's counter pair (0, d): distinct data never meet, but a
    # sampler's counters include (0, d) too (normal(key, (14,)) hashes (0, 7) ... (6, 13))
    key = random.PRNGKey(0)
    a, b = random.fold_in(key, 1), random.fold_in(key, 2)
    random.normal(a), random.normal(b)
    folded_bits = np.asarray(random.fold_in(key, 7))
    core.config.update("debug_key_reuse", False)
    sampled_bits = np.asarray(random.bits(key, (14,)))
    core.config.update("debug_key_reuse", True)
    assert list(folded_bits) == [sampled_bits[0], sampled_bits[7]]  # why sampling a folded key is a reuse
    with pytest.raises(KeyReuseError, match=r"random\.bits .* random\.fold_in"):
        random.bits(key, (14,))
    step = core.jit(lambda k, i: random.normal(random.fold_in(k, i)))
    base = random.PRNGKey(1)
    for i in range(3):
        step(base, i)  # one key per step, folded from one base key
    total = lax.fori_loop(0, 3, lambda i, t: t + random.normal(random.fold_in(base, i)), 0.0)
    assert np.isfinite(float(total))


@pytest.mark.parametrize("sampler", [
    lambda k: random.rademacher(k, (3,)),  # calls bernoulli's code
    lambda k: random.choice(k, 6, (2,)),  # randint's
    lambda k: random.choice(k, 6, (2,), replace=False),  # permutation's
    lambda k: random.normal(k, (2,), jnp.complex64),  # splits its key internally
    lambda k: random.beta(k, 2.0, 3.0, (2,)),
])
def test_one_call_consumes_its_key_once(checking, sampler):
    key = random.PRNGKey(5)
    sampler(key)  # no error: a sampler built on others consumes the key once
    with pytest.raises(KeyReuseError):
        sampler(key)


def test_a_key_taken_from_a_key_array_shares_its_marks(checking):
    keys = random.split(random.PRNGKey(0), 3)
    random.normal(keys[0])
    random.normal(keys[1])
    with pytest.raises(KeyReuseError):
        random.normal(keys[0])  # a new Array each time, but the same key of `keys`
    with pytest.raises(KeyReuseError, match=r"position \(0,\) of the key array of shape \(3,\)"):
        core.vmap(random.normal)(keys)  # keys[0] and keys[1] are spent already
    random.normal(keys[2])


def test_keys_reached_through_two_arrays_are_one_key(checking):
    keys = random.split(random.PRNGKey(0), 2)
    both = jnp.concatenate([keys, keys])
    random.normal(both[3])
    with pytest.raises(KeyReuseError):
        random.normal(keys[1])  # both[3] is keys[1]
    f = core.jit(lambda ks, k: random.normal(ks[0]) + random.normal(k))
    more = random.split(random.PRNGKey(1), 2)
    with pytest.raises(KeyReuseError):
        f(more, more[0])


def test_clone_marks_an_intended_reuse(checking):
    key = random.PRNGKey(4)
    a = random.normal(random.clone(key))
    b = random.normal(key)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    f = core.jit(lambda k: random.normal(random.clone(k)) - random.normal(k))
    assert float(f(random.PRNGKey(5))) == 0.0
    core.config.update("debug_key_reuse", False)
    assert random.clone(key) is key  # off: nothing to mark, nothing done


# ----- jit ------------------------------------------------------------------------------------------

def test_jit_with_reuse_inside_raises(checking):
    def f(k):
        x = random.normal(k, (2,))
        return x + random.uniform(k, (2,))

    with pytest.raises(KeyReuseError, match=r"random\.uniform at .* random\.normal at .*test_key_reuse") as excinfo:
        core.jit(f)(random.PRNGKey(0))
    assert "x = random.normal(k, (2,))" in first_consumer_line(excinfo)


def test_jit_without_reuse_passes_and_matches(checking):
    def f(k):
        k1, k2 = random.split(k)
        return random.normal(k1, (2,)) + random.uniform(k2, (2,))

    checked = core.jit(f)(random.PRNGKey(0))
    core.config.update("debug_key_reuse", False)
    unchecked = core.jit(f)(random.PRNGKey(0))
    core.config.update("debug_key_reuse", True)
    np.testing.assert_array_equal(np.asarray(checked), np.asarray(unchecked))


def test_jit_consumes_its_arguments(checking):
    f = core.jit(lambda k: random.normal(k))
    key = random.PRNGKey(0)
    f(key)
    with pytest.raises(KeyReuseError):
        f(key)  # every call is checked (no fast path while checking)
    with pytest.raises(KeyReuseError):
        random.normal(key)
    other = random.PRNGKey(1)
    random.uniform(other)
    with pytest.raises(KeyReuseError, match=r"random\.normal .* random\.uniform"):
        f(other)


def test_the_same_key_passed_twice_to_jit(checking):
    f = core.jit(lambda a, b: random.normal(a) + random.normal(b))
    f(random.PRNGKey(0), random.PRNGKey(0))  # equal values, but two keys: allowed
    key = random.PRNGKey(1)
    with pytest.raises(KeyReuseError):
        f(key, key)


def test_a_returned_key_keeps_its_marks(checking):
    f = core.jit(lambda k: (random.normal(k), k))
    _, same = f(random.PRNGKey(0))
    with pytest.raises(KeyReuseError):
        random.normal(same)
    g = core.jit(lambda k: random.split(k)[0])
    random.normal(g(random.PRNGKey(0)))  # a fresh key


def test_a_closed_over_key(checking):
    key = random.PRNGKey(0)
    f = core.jit(lambda x: x + random.normal(key))
    f(1.0)
    with pytest.raises(KeyReuseError):
        f(2.0)  # the same closed-over key again


def test_keys_through_nested_jit_are_tracked_by_the_caller(checking):
    inner = core.jit(lambda k: random.normal(k))

    def outer(k):
        return inner(k) + random.uniform(k)  # the inner jit consumed k already

    with pytest.raises(KeyReuseError, match=r"random\.uniform .* random\.normal"):
        core.jit(outer)(random.PRNGKey(0))
    passthrough = core.jit(lambda k: k)
    with pytest.raises(KeyReuseError):
        core.jit(lambda k: random.normal(passthrough(k)) + random.normal(k))(random.PRNGKey(0))
    core.jit(lambda k: inner(random.split(k)[0]) + random.uniform(random.split(k)[1]) * 0)  # not run: traced only


def test_grad_and_checkpoint_consume_once(checking):
    def loss(w, key):
        noise = random.normal(key, (3,))
        return jnp.sum((w * noise) ** 2)

    w = jnp.ones(3)
    core.grad(loss)(w, random.PRNGKey(0))
    core.jit(core.grad(loss))(w, random.PRNGKey(1))
    # checkpoint recomputes its forward pass, random draws included: not a reuse
    core.grad(core.checkpoint(loss))(w, random.PRNGKey(2))
    core.jit(core.grad(core.checkpoint(loss)))(w, random.PRNGKey(3))
    key = random.PRNGKey(4)
    core.grad(loss)(w, key)
    with pytest.raises(KeyReuseError):
        core.grad(loss)(w, key)


# ----- vmap -------------------------------------------------------------------------------------------

def test_vmap_over_keys(checking):
    keys = random.split(random.PRNGKey(0), 4)
    out = core.vmap(lambda k: random.normal(k, (2,)))(keys)
    core.config.update("debug_key_reuse", False)
    expected = np.stack([np.asarray(random.normal(keys[i], (2,))) for i in range(4)])
    core.config.update("debug_key_reuse", True)
    np.testing.assert_array_equal(np.asarray(out), expected)
    with pytest.raises(KeyReuseError):
        core.vmap(random.uniform)(keys)  # every key of the batch is spent


@pytest.mark.parametrize("jitted", [False, True])
def test_vmap_with_reuse_inside(checking, jitted):
    def per_example(k):
        return random.normal(k) + random.normal(k)

    f = core.vmap(per_example)
    f = core.jit(f) if jitted else f
    with pytest.raises(KeyReuseError):
        f(random.split(random.PRNGKey(0), 3))


def test_vmap_splitting_inside_passes(checking):
    def per_example(k):
        a, b = random.split(k)
        return random.normal(a) + random.normal(b)

    keys = random.split(random.PRNGKey(0), 3)
    core.jit(core.vmap(per_example))(keys)
    with pytest.raises(KeyReuseError):
        core.vmap(per_example)(keys)  # the jitted call consumed them


def test_vmap_with_an_unbatched_key(checking):
    key = random.PRNGKey(0)
    f = core.vmap(lambda x, k: x + random.normal(k), in_axes=(0, None))
    f(jnp.arange(3.0), key)
    with pytest.raises(KeyReuseError):
        f(jnp.arange(3.0), key)


# ----- scan ---------------------------------------------------------------------------------------------

def reuse_carry(key, _):
    return key, random.normal(key)  # consumes the carried key and carries it on unchanged


def split_carry(key, _):
    key, sub = random.split(key)
    return key, random.normal(sub)


@pytest.mark.parametrize("jitted", [False, True])
def test_scan_body_reusing_the_carry_key_raises(checking, jitted):
    run = lambda k: lax.scan(reuse_carry, k, None, length=3)  # noqa: E731
    run = core.jit(run) if jitted else run
    with pytest.raises(KeyReuseError, match="earlier iteration of this scan"):
        run(random.PRNGKey(0))


@pytest.mark.parametrize("jitted", [False, True])
def test_scan_that_splits_passes(checking, jitted):
    run = lambda k: lax.scan(split_carry, k, None, length=4)  # noqa: E731
    run = core.jit(run) if jitted else run
    key, ys = run(random.PRNGKey(0))
    core.config.update("debug_key_reuse", False)
    key2, ys2 = run(random.PRNGKey(0))
    core.config.update("debug_key_reuse", True)
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(ys2))
    random.normal(key)  # the final carry is a fresh key


def test_scan_of_length_one_does_not_reuse():
    core.config.update("debug_key_reuse", True)
    try:
        lax.scan(reuse_carry, random.PRNGKey(0), None, length=1)
    finally:
        core.config.update("debug_key_reuse", False)


def test_scan_body_consuming_a_closed_over_key_raises(checking):
    key = random.PRNGKey(0)
    with pytest.raises(KeyReuseError, match="earlier iteration"):
        lax.scan(lambda c, x: (c + random.normal(key), None), 0.0, None, length=2)


def test_scan_over_keys_consumes_each_once(checking):
    keys = random.split(random.PRNGKey(0), 40)  # more iterations than the analysis simulates
    f = core.jit(lambda ks: lax.scan(lambda c, k: (c + random.normal(k), None), 0.0, ks)[0])
    f(keys)
    with pytest.raises(KeyReuseError):
        random.normal(keys[39])  # the last iteration consumed it
    with pytest.raises(KeyReuseError):
        f(keys)


def test_scan_outputs_that_are_its_inputs_share_their_marks(checking):
    keys = random.split(random.PRNGKey(0), 40)
    _, same = core.jit(lambda ks: lax.scan(lambda c, k: (c, k), 0.0, ks, reverse=True))(keys)
    random.normal(same[30])
    with pytest.raises(KeyReuseError):
        random.normal(keys[30])  # same[30] is keys[30]
    key = random.PRNGKey(1)
    carried, _ = lax.scan(lambda k, x: (k, x), key, jnp.arange(40.0))
    random.normal(carried)
    with pytest.raises(KeyReuseError):
        random.normal(key)  # carried through 40 iterations unchanged


def test_scan_returning_fresh_keys(checking):
    def body(c, k):
        a, b = random.split(k)
        return c + random.normal(a), b

    keys = random.split(random.PRNGKey(0), 3)
    _, out = lax.scan(body, 0.0, keys)
    core.vmap(random.normal)(out)  # fresh keys, consumed once each


def test_scan_rotating_two_carried_keys(checking):
    # consumes only the first carried key, but the two keys swap places every iteration: the
    # third iteration consumes the first key again
    def body(carry, _):
        a, b = carry
        return (b, a), random.normal(a)

    keys = random.split(random.PRNGKey(0))
    lax.scan(body, (keys[0], keys[1]), None, length=2)
    with pytest.raises(KeyReuseError, match="earlier iteration"):
        lax.scan(body, (random.PRNGKey(1), random.PRNGKey(2)), None, length=3)


def test_fori_loop(checking):
    def good(i, carry):
        key, total = carry
        key, sub = random.split(key)
        return key, total + random.normal(sub)

    def bad(i, carry):
        key, total = carry
        return key, total + random.normal(key)

    lax.fori_loop(0, 3, good, (random.PRNGKey(0), 0.0))
    with pytest.raises(KeyReuseError):
        lax.fori_loop(0, 3, bad, (random.PRNGKey(0), 0.0))


def test_while_loop(checking):
    def good(carry):
        i, key, total = carry
        key, sub = random.split(key)
        return i + 1, key, total + random.normal(sub)

    def bad(carry):
        i, key, total = carry
        return i + 1, key, total + random.normal(key)

    def cond(carry):
        return carry[0] < 3

    _, key, _ = lax.while_loop(cond, good, (0, random.PRNGKey(0), 0.0))
    random.normal(key)
    with pytest.raises(KeyReuseError, match="while_loop"):
        core.jit(lambda k: lax.while_loop(cond, bad, (0, k, 0.0)))(random.PRNGKey(1))


# ----- cond ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("jitted", [False, True])
def test_cond_branches_each_using_the_key_once_pass(checking, jitted):
    def f(p, k):
        return lax.cond(p, lambda k: random.normal(k), lambda k: random.uniform(k), k)

    g = core.jit(f) if jitted else f
    key = random.PRNGKey(0)
    out = g(True, key)
    core.config.update("debug_key_reuse", False)
    expected = random.normal(key)
    core.config.update("debug_key_reuse", True)
    assert float(out) == float(expected)
    with pytest.raises(KeyReuseError):
        random.normal(key)  # consumed by the cond, whichever branch ran


def test_using_the_key_after_the_cond_raises(checking):
    def f(p, k):
        x = lax.cond(p, lambda k: random.normal(k), lambda k: jnp.float32(0.0), k)
        return x + random.uniform(k)

    with pytest.raises(KeyReuseError, match=r"random\.uniform .* random\.normal"):
        core.jit(f)(True, random.PRNGKey(0))


def test_reuse_inside_one_branch_raises(checking):
    def f(p, k):
        return lax.cond(p, lambda k: random.normal(k) + random.normal(k), lambda k: random.uniform(k), k)

    with pytest.raises(KeyReuseError):
        core.jit(f)(False, random.PRNGKey(0))


def test_cond_returning_the_key_or_a_fresh_one(checking):
    def f(p, k):
        same = lax.cond(p, lambda k: k, lambda k: k, k)
        return random.normal(same) + random.normal(k)

    with pytest.raises(KeyReuseError):
        core.jit(f)(True, random.PRNGKey(0))

    def g(p, k):
        a, b = random.split(k)
        fresh = lax.cond(p, lambda k: random.split(k)[0], lambda k: random.fold_in(k, 1), a)
        return random.normal(fresh) + random.normal(b)

    core.jit(g)(True, random.PRNGKey(0))


# ----- the markers ---------------------------------------------------------------------------------------

def test_markers_are_the_identity(checking):
    key = random.PRNGKey(7)
    jaxpr = core.make_jaxpr(lambda k: random.normal(k))(key)
    consume = [e for e in jaxpr.eqns if e.primitive is random_consume_p]
    assert len(consume) == 1 and consume[0].params["name"] == "random.normal"
    # lowered and batched as the identity: the same bits as without the checker
    out = core.jit(core.vmap(lambda k: random.bits(random.clone(k), (2,))))(random.split(key, 3))
    core.config.update("debug_key_reuse", False)
    expected = np.stack([np.asarray(random.bits(k, (2,))) for k in random.split(key, 3)])
    core.config.update("debug_key_reuse", True)
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert random_clone_p in {e.primitive for e in core.make_jaxpr(random.clone)(key).eqns}


def test_docstring_examples_run():
    globs = {"core": core, "random": random, "jnp": jnp}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for obj in (key_reuse, random.clone):
        for test in doctest.DocTestFinder().find(obj, extraglobs=globs):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 5 and result.failed == 0, result
    assert core.config.read("debug_key_reuse") is False

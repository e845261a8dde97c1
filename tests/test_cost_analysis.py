"""`jit(f).lower(...).cost_analysis()`, `.compile().cost_analysis()` and `.memory_analysis()`.

Oracles: hand-derived counts (a matmul of (m, k) by (k, n) is 2*m*n*k flops; an elementwise add
of N float32s reads 2*4N bytes and writes 4N), and the arguments' and outputs' byte sizes.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp


@pytest.mark.parametrize("m,k,n", [(4, 5, 6), (3, 7, 2)])
def test_matmul_flops_are_2mnk(m, k, n):
    lowered = core.jit(lambda a, b: a @ b).lower(jnp.ones((m, k)), jnp.ones((k, n)))
    before = lowered.cost_analysis()
    after = lowered.compile().cost_analysis()
    assert isinstance(before, dict) and isinstance(after, dict)
    assert before["flops"] == after["flops"] == 2 * m * n * k
    # bytes: both operands read, the result written (float32)
    assert before["bytes accessed"] == 4 * (m * k + k * n + m * n)
    assert before["bytes accessed0{}"] == 4 * m * k
    assert before["bytes accessed1{}"] == 4 * k * n
    assert before["bytes accessedout{}"] == 4 * m * n


def test_elementwise_bytes_and_flops():
    n = 10
    after = core.jit(lambda a, b: a + b).lower(jnp.ones(n), jnp.ones(n)).compile().cost_analysis()
    assert after["flops"] == n
    assert after["bytes accessed"] == 3 * 4 * n


def test_memory_analysis_sizes_are_those_of_the_arguments_and_outputs():
    x = jnp.ones((8, 16), jnp.float32)   # 512 bytes
    i = jnp.zeros((5,), jnp.int32)       # 20 bytes
    compiled = core.jit(lambda x, i: (x.sum(axis=0), i + 1)).lower(x, i).compile()
    stats = compiled.memory_analysis()
    assert stats.argument_size_in_bytes == x.nbytes + i.nbytes == 532
    # two outputs: their bytes plus XLA's tuple of two 8-byte pointers (jax 0.10.2 reports 100 too)
    assert stats.output_size_in_bytes == 16 * 4 + 5 * 4 + 2 * 8
    assert stats.alias_size_in_bytes == 0
    assert stats.temp_size_in_bytes >= 0 and stats.generated_code_size_in_bytes >= 0
    # the older name answers the same
    assert compiled.memory_stats().argument_size_in_bytes == 532


def test_donated_argument_is_counted_as_an_alias():
    compiled = core.jit(lambda x: x * 2.0, donate_argnums=0).lower(jnp.ones(6)).compile()
    assert compiled.memory_analysis().alias_size_in_bytes == 24


def test_lowered_cost_analysis_compiles_nothing():
    x = jnp.ones((3, 3))
    before = core.cache_info()
    core.jit(lambda a: jnp.sin(a) @ a).lower(x).cost_analysis()
    assert core.cache_info() == before


def test_jit_call_runs_a_module_named_after_the_function():
    """Eagerly applied jit programs are named `jit_<function>` as JAX names them (what profiles and
    compiler logs show), not after the primitive."""
    from core import dispatch
    from core.api import jit_p

    def my_layer(x):
        return jnp.tanh(x)

    closed = core.jit(my_layer).trace(jnp.ones(3))
    exe, _ = dispatch.executable_for(jit_p, tuple(closed.in_avals), {"name": "my_layer", "jaxpr": closed})
    assert "module @jit_my_layer" in exe.text


def test_jax_style_program():
    """Written with jax names, only the imports rewritten."""
    import core as jax
    import core.numpy as jnp  # noqa: F811

    @jax.jit
    def f(w, x):
        return jnp.tanh(x @ w)

    w, x = jnp.ones((32, 16)), jnp.ones((8, 32))
    lowered = f.lower(w, x)
    compiled = lowered.compile()
    flops = compiled.cost_analysis()["flops"]
    mem = compiled.memory_analysis()
    assert flops >= 2 * 8 * 16 * 32  # the matmul, plus the tanh
    assert lowered.cost_analysis()["flops"] >= 2 * 8 * 16 * 32
    assert mem.argument_size_in_bytes == (32 * 16 + 8 * 32) * 4
    assert mem.output_size_in_bytes == 8 * 16 * 4
    np.testing.assert_allclose(np.asarray(compiled(w, x)), np.tanh(np.ones((8, 32)) @ np.ones((32, 16))), rtol=1e-6)

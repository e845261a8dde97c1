"""Errors about traced values that a user can act on (issue 17, item 6): each conversion names
itself, a leaked tracer says where it was made and that it leaked, a traced size names the public
function and the argument, and a concretization error says what the value depends on
(docs/reliability.md F1-F5)."""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import errors

HERE = re.escape(__file__.removesuffix("c"))  # this file, for file:line fragments


def _line_of(fragment, fun):
    """The line number of the line of `fun`'s source that contains `fragment`."""
    import inspect
    lines, start = inspect.getsourcelines(fun)
    return start + next(i for i, line in enumerate(lines) if fragment in line)


# ----- each conversion names itself ----------------------------------------------------------------------

@pytest.mark.parametrize("convert, error, name", [
    (float, errors.ConcretizationTypeError, r"float\(\)"),
    (int, errors.ConcretizationTypeError, r"int\(\)"),
    (complex, errors.ConcretizationTypeError, r"complex\(\)"),
    (bool, errors.TracerBoolConversionError, r"Attempted boolean conversion"),
    (lambda x: [0, 1][x], errors.TracerIntegerConversionError, r"__index__\(\)"),
    (np.asarray, errors.TracerArrayConversionError, r"__array__\(\)"),
])
def test_each_conversion_of_a_tracer_names_itself(convert, error, name):
    with pytest.raises(error, match=rf"^{name}|^The {name}|^The numpy.ndarray conversion method {name}") as info:
        core.jit(lambda x: convert(x))(jnp.ones((), jnp.int32))
    message = str(info.value)
    for other in {"float()", "int()", "complex()", "__index__()", "__array__()"} - {name.replace("\\", "")}:
        assert other not in message.split("\n")[0], message


def test_float_conversion_says_float_not_int():  # the reported defect: float() said int()
    with pytest.raises(errors.ConcretizationTypeError, match=r"^float\(\) was called on traced array with shape "
                                                             r"f32\[\]") as info:
        core.jit(lambda x: float(x) * 2)(1.0)
    assert "int()" not in str(info.value).split("\n")[0]


def test_conversions_of_a_batched_value_use_the_specific_error_classes():
    with pytest.raises(errors.TracerBoolConversionError, match=r"bool\(\) was called on a batched value"):
        core.vmap(lambda x: x if x > 0 else -x)(jnp.ones(3))
    with pytest.raises(errors.TracerIntegerConversionError, match=r"__index__\(\) was called on a batched value"):
        core.vmap(lambda i: [1.0, 2.0][i])(jnp.arange(2))
    with pytest.raises(errors.ConcretizationTypeError, match=r"float\(\) was called on a batched value"):
        core.vmap(lambda x: float(x))(jnp.ones(3))


# ----- a leaked tracer says where it was made, by which transformation, and that it leaked ----------------

def _leak_from(transform):
    store = []

    def f(x):
        y = jnp.sin(x) * 2.0  # LEAK-SITE
        store.append(y)
        return jnp.sum(y)

    if transform == "jit":
        core.jit(f)(jnp.ones(3))
    elif transform == "vmap":
        core.vmap(f)(jnp.ones((2, 3)))
    else:
        core.grad(f)(jnp.ones(3))
    return store[0], _line_of("LEAK-SITE", f)


@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
@pytest.mark.parametrize("use", ["add", "jnp.sin", "jnp.dot"])
def test_a_leaked_tracer_used_outside_any_transformation(transform, use):
    leaked, line = _leak_from(transform)
    calls = {"add": lambda: leaked + 1, "jnp.sin": lambda: jnp.sin(leaked), "jnp.dot": lambda: jnp.dot(leaked, leaked)}
    with pytest.raises(errors.UnexpectedTracerError) as info:
        calls[use]()
    message = str(info.value)
    assert "is not a valid" not in message
    assert re.search(rf"escaped the scope of the transformation that created it \(tracing f for {transform}\)",
                     message), message
    assert "leaked" in message
    assert re.search(rf"created at {HERE}:{line} \(f\)", message), message


def test_a_leaked_tracer_converted_to_a_python_value_is_reported_as_leaked():
    leaked, line = _leak_from("jit")
    with pytest.raises(errors.UnexpectedTracerError, match=rf"leaked.*created at {HERE}:{line}"):
        float(leaked)
    with pytest.raises(errors.UnexpectedTracerError, match=r"tracing f for vmap"):
        bool(_leak_from("vmap")[0])


def test_a_leaked_argument_tracer_is_named():
    store = []
    core.jit(lambda x: store.append(x) or x)(jnp.ones(2))
    with pytest.raises(errors.UnexpectedTracerError, match=r"It is the argument x of <lambda>"):
        store[0] * 2.0


# ----- a traced size names the public function and the argument -----------------------------------------

@pytest.mark.parametrize("name, fun, argument", [
    ("ones", lambda n: jnp.ones(n), "shape"),
    ("zeros", lambda n: jnp.zeros((n, 2)), "shape"),
    ("empty", lambda n: jnp.empty(n), "shape"),
    ("full", lambda n: jnp.full((2, n), 1.0), "shape"),
    ("arange", lambda n: jnp.arange(n), "start"),
    ("eye", lambda n: jnp.eye(n), "N"),
    ("reshape", lambda n: jnp.reshape(jnp.ones(4), (n, -1)), "shape"),
])
def test_a_traced_size_names_the_function_and_suggests_static_argnums(name, fun, argument):
    def f(n):
        return fun(n)
    with pytest.raises(errors.ConcretizationTypeError) as info:
        core.jit(f)(3)
    message = str(info.value)
    assert re.search(rf"^core\.numpy\.{name} requires a concrete value for the argument {argument}\b", message), message
    assert "static_argnums" in message
    assert "traced value of type i32[]" in message
    assert re.search(r"depends on the value of the argument n\.", message), message
    assert "int()" not in message and "__index__" not in message
    np.testing.assert_array_equal(np.asarray(core.jit(f, static_argnums=0)(2)), np.asarray(fun(2)))


def test_a_traced_size_under_vmap_names_the_function():
    with pytest.raises(errors.ConcretizationTypeError, match=r"core\.numpy\.ones requires a concrete value for the "
                                                             r"argument shape(?s:.*)while vmapping"):
        core.vmap(lambda n: jnp.ones(n))(jnp.arange(3))


# ----- what a concrete-value error says about the value's origin -----------------------------------------

def test_concretization_error_names_the_function_its_line_and_the_argument():
    def relu_like(x, y):
        if x > 0:
            return x
        return y
    line = _line_of("def relu_like", relu_like)
    with pytest.raises(errors.TracerBoolConversionError) as info:
        core.jit(relu_like)(1.0, 2.0)
    message = str(info.value)
    assert f"tracing the function relu_like for jit (defined at {__file__.removesuffix('c')}:{line})" in message
    assert re.search(r"depends on the value of the argument x\.", message), message
    assert "argument y" not in message


def test_concretization_error_lists_two_arguments():
    def f(x, y):
        return x if (x * y).sum() > 0 else y
    with pytest.raises(errors.TracerBoolConversionError, match=r"depends on the values of the arguments x and y\."):
        core.jit(f)(jnp.ones(2), jnp.ones(2))


def test_concretization_error_names_pytree_leaves_and_arguments_of_an_enclosing_trace():
    def f(params, x):
        return x if params["w"].sum() > 0 else -x
    with pytest.raises(errors.TracerBoolConversionError, match=r"the argument params\['w'\]\."):
        core.jit(f)({"w": jnp.ones(2), "b": jnp.ones(2)}, 1.0)

    def g(y):  # a cond branch closing over an argument of the jitted function
        return core.lax.cond(True, lambda v: v if y > 0 else -v, lambda v: v, 1.0)
    with pytest.raises(errors.TracerBoolConversionError, match=r"the argument y of g\."):
        core.jit(g)(1.0)


def test_concretization_error_of_a_value_made_from_constants_lists_its_operations():
    def f(x):
        c = jnp.cos(jnp.float32(0.5))  # ORIGIN
        if c > 0:
            return x
        return -x
    line = _line_of("# ORIGIN", f)
    with pytest.raises(errors.TracerBoolConversionError) as info:
        core.jit(f)(1.0)
    message = str(info.value)
    assert "depends on" not in message
    assert re.search(rf"operation [a-z]+:f32\[\] = cos [^\n]*\n    from line {HERE}:{line} \(f\)", message), message
    assert "Additional originating lines" not in message


def test_at_most_five_originating_operations_are_listed():
    def f(x):
        total = 0.0
        for k in range(7):
            total = total + jnp.sin(jnp.float32(k))  # ONE-OF-SEVEN
        if total > 0:
            return x
        return -x
    with pytest.raises(errors.TracerBoolConversionError) as info:
        core.jit(f)(1.0)
    message = str(info.value)
    listed = re.findall(r"\n  operation [a-z]+:f32\[\] = sin (\d)\.0:f32\[\]\n    from line ([^\n]*)", message)
    assert [k for k, _ in listed] == ["0", "1", "2", "3", "4"], message
    line = _line_of("# ONE-OF-SEVEN", f)
    assert all(re.fullmatch(rf"{HERE}:{line} \(f\)", where) for _, where in listed), listed
    assert re.search(r"from line [^\n]*\n\nAdditional originating lines are not shown\.\n", message), message

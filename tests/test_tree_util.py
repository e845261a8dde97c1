"""Behaviour tests for core.tree_util (expected values derived by hand)."""

import collections
import dataclasses
import functools
import operator
import pickle
from typing import Any

import pytest

from core import tree_util as tu
from core.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
    all_leaves,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_is_strict_leaf,
    treedef_tuple,
)

Point = collections.namedtuple("Point", ["x", "y"])


# --- custom node types used by the tests (each registered exactly once) -------


class Box:
    """Custom node: one child ``v`` and static ``tag``."""

    def __init__(self, v, tag="t"):
        self.v = v
        self.tag = tag

    def __eq__(self, other):
        return type(other) is Box and self.v == other.v and self.tag == other.tag

    def __repr__(self):
        return f"Box({self.v!r}, {self.tag!r})"


register_pytree_node(Box, lambda b: ((b.v,), b.tag), lambda tag, ch: Box(ch[0], tag))


@register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b) == (other.a, other.b)


class Keyed:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


register_pytree_with_keys(
    Keyed,
    lambda k: ([(GetAttrKey("lo"), k.lo), (GetAttrKey("hi"), k.hi)], None),
    lambda aux, ch: Keyed(*ch),
)


@register_dataclass
@dataclasses.dataclass
class Params:
    w: Any
    b: Any


@dataclasses.dataclass(frozen=True)
class Layer:
    weight: Any
    name: str
    bias: Any = None

    def __post_init__(self):
        # Would reject non-string names; unflatten must not need __init__.
        if not isinstance(self.name, str):
            raise TypeError("name must be str")


register_dataclass(Layer, data_fields=["weight", "bias"], meta_fields=["name"])


@register_dataclass
@dataclasses.dataclass
class WithStatic:
    x: Any
    mode: str = dataclasses.field(default="train", metadata={"static": True})


# --- round trips --------------------------------------------------------------


@pytest.mark.parametrize(
    "tree, expected_leaves",
    [
        (5, [5]),
        ((1, 2, 3), [1, 2, 3]),
        ([1, [2, [3]]], [1, 2, 3]),
        ({"b": 1, "a": 2, "c": 3}, [2, 1, 3]),
        (None, []),
        ((None, 1, [None]), [1]),
        ((), []),
        ([], []),
        ({}, []),
        (Point(1, (2, 3)), [1, 2, 3]),
        (collections.OrderedDict([("z", 1), ("a", 2)]), [1, 2]),
        (collections.defaultdict(list, {"z": 1, "a": 2}), [2, 1]),
        ({"p": [Point(x=1, y=None), {"q": (2,)}], "a": 0}, [0, 1, 2]),
        (Box([1, 2], "tag"), [1, 2]),
        (Pair(1, (2, 3)), [1, 2, 3]),
        (Params(w=[1, 2], b=3), [1, 2, 3]),
    ],
)
def test_round_trip_and_leaf_order(tree, expected_leaves):
    leaves, treedef = tree_flatten(tree)
    assert leaves == expected_leaves
    assert tree_leaves(tree) == expected_leaves
    assert treedef.num_leaves == len(expected_leaves)
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt) is type(tree)
    assert rebuilt == tree
    assert tree_structure(rebuilt) == treedef


def test_unflatten_with_new_leaves_keeps_container_types():
    tree = {"od": collections.OrderedDict([("z", 1), ("a", 2)]),
            "dd": collections.defaultdict(list, {"k": 3}),
            "nt": Point(4, 5), "l": [6], "t": (7,), "n": None}
    treedef = tree_structure(tree)
    out = treedef.unflatten([10, 20, 30, 40, 50, 60, 70])
    # sorted top-level keys: dd, l, n, nt, od, t
    assert out["dd"] == {"k": 10} and type(out["dd"]) is collections.defaultdict
    assert out["dd"].default_factory is list
    assert out["l"] == [20]
    assert out["n"] is None
    assert out["nt"] == Point(30, 40) and type(out["nt"]) is Point
    assert list(out["od"].items()) == [("z", 50), ("a", 60)]
    assert type(out["od"]) is collections.OrderedDict
    assert out["t"] == (70,) and type(out["t"]) is tuple


def test_dict_children_sorted_and_unflatten_restores_dict():
    leaves, treedef = tree_flatten({"b": "B", "a": "A"})
    assert leaves == ["A", "B"]
    out = treedef.unflatten([1, 2])
    assert out == {"a": 1, "b": 2} and type(out) is dict
    # Insertion order does not change the structure.
    assert tree_structure({"a": 0, "b": 0}) == tree_structure({"b": 0, "a": 0})


def test_unsortable_dict_keys_raise():
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        tree_flatten({1: "a", "x": "b"})


def test_ordereddict_keeps_insertion_order_and_differs_by_order():
    a = collections.OrderedDict([("b", 1), ("a", 2)])
    b = collections.OrderedDict([("a", 2), ("b", 1)])
    assert tree_leaves(a) == [1, 2]
    assert tree_leaves(b) == [2, 1]
    assert tree_structure(a) != tree_structure(b)


def test_none_is_empty_subtree():
    leaves, treedef = tree_flatten([None, 1, {"k": None}])
    assert leaves == [1]
    assert repr(treedef) == "PyTreeDef([None, *, {'k': None}])"
    assert tree_map(lambda x: x * 100, [None, 1, {"k": None}]) == [None, 100, {"k": None}]
    assert tree_structure(None).num_leaves == 0
    assert tree_structure(None).num_nodes == 1


def test_unregistered_and_subclass_objects_are_leaves():
    class MyDict(dict):
        pass

    class MyList(list):
        pass

    obj = object()
    md = MyDict(a=1)
    ml = MyList([1, 2])
    assert tree_leaves([obj, md, ml]) == [obj, md, ml]


def test_namedtuple_round_trip_and_type_in_structure():
    Other = collections.namedtuple("Other", ["x", "y"])
    assert tree_structure(Point(1, 2)) != tree_structure(Other(1, 2))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    out = tree_map(lambda v: v + 1, Point(x=1, y=Point(2, 3)))
    assert out == Point(2, Point(3, 4)) and type(out.y) is Point


def test_dataclass_round_trip_and_meta_fields():
    layer = Layer(weight=[1, 2], name="dense", bias=3)
    leaves, treedef = tree_flatten(layer)
    assert leaves == [1, 2, 3]
    # The meta field is part of the structure.
    assert treedef != tree_structure(Layer(weight=[1, 2], name="other", bias=3))
    assert treedef == tree_structure(Layer(weight=[9, 9], name="dense", bias=9))
    # Unflatten bypasses __post_init__ and works with any leaves.
    out = treedef.unflatten(["a", "b", "c"])
    assert type(out) is Layer
    assert (out.weight, out.name, out.bias) == (["a", "b"], "dense", "c")
    doubled = tree_map(lambda v: v * 2, layer)
    assert doubled == Layer(weight=[2, 4], name="dense", bias=6)


def test_dataclass_default_fields_and_static_metadata():
    assert tree_leaves(Params(w=1, b=2)) == [1, 2]
    ws = WithStatic(x=7, mode="eval")
    assert tree_leaves(ws) == [7]
    assert tree_structure(ws) != tree_structure(WithStatic(x=7, mode="train"))
    assert tree_map(lambda v: -v, ws) == WithStatic(x=-7, mode="eval")


def test_register_dataclass_validation():
    @dataclasses.dataclass
    class Bad:
        a: Any
        b: Any

    with pytest.raises(ValueError, match="missing=\\['b'\\]"):
        register_dataclass(Bad, data_fields=["a"], meta_fields=[])
    with pytest.raises(TypeError):
        register_dataclass(int)


def test_register_dataclass_decorator_with_args():
    @register_dataclass(data_fields=["a"], meta_fields=["m"])
    @dataclasses.dataclass
    class C:
        a: Any
        m: int

    assert tree_leaves(C(a=(1, 2), m=3)) == [1, 2]


def test_duplicate_registration_names_type():
    class Fresh:
        pass

    register_pytree_node(Fresh, lambda x: ((), None), lambda a, c: Fresh())
    with pytest.raises(ValueError, match="Fresh"):
        register_pytree_node(Fresh, lambda x: ((), None), lambda a, c: Fresh())
    with pytest.raises(ValueError, match="tuple"):
        register_pytree_node(tuple, lambda x: (x, None), lambda a, c: tuple(c))


def test_registration_after_first_use_takes_effect():
    class Late:
        def __init__(self, v):
            self.v = v

    late = Late(3)
    assert tree_leaves([late]) == [late]  # a leaf while unregistered
    register_pytree_node(Late, lambda x: ((x.v,), None), lambda a, c: Late(*c))
    assert tree_leaves([late]) == [3]


def test_custom_node_aux_data_in_structure_and_repr():
    td = tree_structure(Box(1, "t1"))
    assert td != tree_structure(Box(1, "t2"))
    assert repr(td) == "PyTreeDef(CustomNode(Box['t1'], [*]))"


# --- is_leaf -----------------------------------------------------------------


def test_is_leaf_stops_recursion():
    tree = {"a": (1, 2), "b": [3, (4, 5)]}
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tree_leaves(tree, is_leaf=is_tuple) == [(1, 2), 3, (4, 5)]
    leaves, td = tree_flatten(tree, is_leaf=is_tuple)
    assert td.num_leaves == 3
    assert td.unflatten(["x", "y", "z"]) == {"a": "x", "b": ["y", "z"]}
    summed = tree_map(lambda t: sum(t) if isinstance(t, tuple) else -t, tree, is_leaf=is_tuple)
    assert summed == {"a": 3, "b": [-3, 9]}


def test_is_leaf_can_make_none_a_leaf():
    tree = [None, 1]
    assert tree_leaves(tree, is_leaf=lambda x: x is None) == [None, 1]
    out = tree_map(lambda x: 0 if x is None else x, tree, is_leaf=lambda x: x is None)
    assert out == [0, 1]


# --- tree_map ------------------------------------------------------------------


def test_tree_map_several_trees():
    a = {"x": 1, "y": (2, 3)}
    b = {"x": 10, "y": (20, 30)}
    c = {"x": 100, "y": (200, 300)}
    assert tree_map(lambda p, q, r: p + q * r, a, b, c) == {"x": 1001, "y": (4002, 9003)}


def test_tree_map_rest_may_be_deeper_at_leaves():
    out = tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]


def test_tree_map_arity_mismatch_message():
    with pytest.raises(ValueError) as ei:
        tree_map(operator.add, {"a": (1, 2), "b": 3}, {"a": (1, 2, 3), "b": 3})
    msg = str(ei.value)
    assert "Tuple arity mismatch: 3 != 2" in msg
    assert "PyTreeDef({'a': (*, *), 'b': *})" in msg
    assert "PyTreeDef({'a': (*, *, *), 'b': *})" in msg
    assert "['a']" in msg


def test_tree_map_type_mismatch_message_has_nested_path():
    first = {"p": [Point(1, 2)], "q": 0}
    second = {"p": [(1, 2)], "q": 0}
    with pytest.raises(ValueError) as ei:
        tree_map(operator.add, first, second)
    msg = str(ei.value)
    assert "path: ['p'][0]" in msg
    assert "CustomNode(namedtuple[Point], [*, *])" in msg
    assert "PyTreeDef({'p': [(*, *)], 'q': *})" in msg


def test_tree_map_dict_key_mismatch_and_leaf_vs_node():
    with pytest.raises(ValueError, match=r"Dict key mismatch.*\['a', 'b'\].*\['a', 'c'\]"):
        tree_map(operator.add, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match="Expected list, got 3"):
        tree_map(operator.add, [1], 3)
    with pytest.raises(ValueError, match=r"path: \.y\[1\]"):
        tree_map(operator.add, Point(0, [0, (0,)]), Point(0, [0, 0]))


def test_tree_map_custom_node_mismatch():
    with pytest.raises(ValueError, match="Mismatch custom node data: 'b' != 'a'"):
        tree_map(operator.add, Box(1, "a"), Box(1, "b"))
    with pytest.raises(ValueError, match="Custom node type mismatch"):
        tree_map(operator.add, Box(1, "a"), Pair(1, 2))


def test_tree_map_with_path_and_several_trees():
    tree = {"a": [1, 2], "b": Point(3, 4)}
    out = tree_map_with_path(lambda p, x, y: f"{keystr(p)}={x + y}", tree, tree)
    assert out == {"a": ["['a'][0]=2", "['a'][1]=4"], "b": Point("['b'].x=6", "['b'].y=8")}


# --- flatten_up_to, treedef API --------------------------------------------------


def test_flatten_up_to():
    td = tree_structure((0, {"k": 0}))
    assert td.flatten_up_to(([1, 2], {"k": None})) == [[1, 2], None]
    with pytest.raises(ValueError) as ei:
        td.flatten_up_to((1, {"j": 2}))
    msg = str(ei.value)
    assert "PyTreeDef((*, {'k': *}))" in msg
    assert "PyTreeDef((*, {'j': *}))" in msg
    assert "path: [1]" in msg


def test_treedef_equality_hash_and_cache_key():
    t1 = tree_structure({"a": (1, 2), "b": None})
    t2 = tree_structure({"b": None, "a": ("x", "y")})
    assert t1 == t2 and hash(t1) == hash(t2)
    cache = {t1: "hit"}
    assert cache[t2] == "hit"
    assert tree_structure((1, 2)) != tree_structure([1, 2])
    assert tree_structure((1, 2)) != tree_structure((1, (2,)))
    assert tree_structure({"a": 1}) != tree_structure({"b": 1})
    assert tree_structure([None]) != tree_structure([1])
    assert tree_structure(1) == tree_structure("anything")
    assert len({tree_structure((1, 2)), tree_structure((3, 4)), tree_structure([1, 2])}) == 2
    assert (t1 == 5) is False


def test_treedef_counts_children_repr():
    td = tree_structure((1, {"a": 2, "b": [3, None]}))
    assert td.num_leaves == 3
    # nodes: tuple, leaf, dict, leaf, list, leaf, None -> 7
    assert td.num_nodes == 7
    assert repr(td) == "PyTreeDef((*, {'a': *, 'b': [*, None]}))"
    kids = td.children()
    assert [repr(k) for k in kids] == ["PyTreeDef(*)", "PyTreeDef({'a': *, 'b': [*, None]})"]
    assert treedef_children(td) == kids
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert tree_structure(1).children() == []
    assert tree_structure({"a": 1}).node_data() == (dict, ("a",))
    assert tree_structure(1).node_data() is None


def test_treedef_tuple_and_compose():
    td = treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    assert td == tree_structure((0, [0, 0]))
    composed = tree_structure([0, 0]).compose(tree_structure((0, 0)))
    assert composed == tree_structure([(0, 0), (0, 0)])
    assert composed.num_leaves == 4


def test_treedef_is_leaf_variants():
    assert treedef_is_leaf(tree_structure(1))
    assert not treedef_is_leaf(tree_structure([1]))
    assert treedef_is_leaf(tree_structure(None))  # single node, like JAX
    assert treedef_is_strict_leaf(tree_structure(1))
    assert not treedef_is_strict_leaf(tree_structure(None))


def test_treedef_pickles():
    td = tree_structure({"a": Point(1, (2, None))})
    td2 = pickle.loads(pickle.dumps(td))
    assert td2 == td and td2.num_leaves == 2
    assert td2.unflatten([5, 6]) == {"a": Point(5, (6, None))}


def test_unflatten_wrong_count_message():
    td = tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3, got 4"):
        td.unflatten([1, 2, 3, 4])


def test_unflatten_accepts_iterables():
    td = tree_structure([0, (0, 0)])
    assert td.unflatten(iter("abc")) == ["a", ("b", "c")]
    assert td.unflatten(x * 2 for x in range(3)) == [0, (2, 4)]


# --- reductions ------------------------------------------------------------------


def test_tree_all_and_all_leaves():
    assert tree_all([True, {"a": 1, "b": (2,)}]) is True
    assert tree_all([1, {"a": 0}]) is False
    assert tree_all([None, ()]) is True  # no leaves
    assert all_leaves([1, "a", object(), 2.5])
    assert not all_leaves([1, (2,)])
    assert not all_leaves([None])
    assert all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple))


def test_tree_reduce():
    tree = [1, (2, {"a": 3, "b": 4})]
    assert tree_reduce(operator.add, tree) == 10
    assert tree_reduce(operator.add, tree, 100) == 110
    # Order matters for non-commutative ops: leaves are 1, 2, 3, 4.
    assert tree_reduce(lambda acc, x: acc * 10 + x, tree) == 1234
    assert tree_reduce(operator.add, [], 7) == 7
    assert tree_reduce(operator.add, [None], initializer=0) == 0
    with pytest.raises(TypeError):
        tree_reduce(operator.add, [])
    assert tree_reduce(lambda a, t: a + len(t), [(1, 2), (3,)], 0,
                       is_leaf=lambda x: isinstance(x, tuple)) == 3


# --- tree_transpose ----------------------------------------------------------------


def test_tree_transpose():
    outer = tree_structure([0, 0, 0])
    inner = tree_structure({"a": 0, "b": 0})
    tree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    assert tree_transpose(outer, inner, tree) == {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tree_transpose(outer, None, tree) == {"a": [1, 3, 5], "b": [2, 4, 6]}


def test_tree_transpose_inner_leaves_may_be_subtrees():
    outer = tree_structure((0, 0))
    inner = tree_structure([0, 0])
    out = tree_transpose(outer, inner, ([(1, 1), 2], [3, {"k": 4}]))
    assert out == [((1, 1), 3), (2, {"k": 4})]


def test_tree_transpose_mismatch_shows_both():
    outer = tree_structure([0, 0])
    inner = tree_structure((0, 0))
    with pytest.raises(TypeError) as ei:
        tree_transpose(outer, inner, [(1, 2), (3, 4, 5)])
    msg = str(ei.value)
    assert "PyTreeDef([(*, *), (*, *, *)])" in msg
    assert "PyTreeDef([(*, *), (*, *)])" in msg


# --- paths -------------------------------------------------------------------------


def test_tree_flatten_with_path():
    tree = {"b": Point(x=4, y=[5]), "a": [1, (2, 3)], "n": None}
    pairs, td = tree_flatten_with_path(tree)
    assert td == tree_structure(tree)
    assert [leaf for _, leaf in pairs] == [1, 2, 3, 4, 5]
    assert pairs[0][0] == (DictKey("a"), SequenceKey(0))
    assert pairs[2][0] == (DictKey("a"), SequenceKey(1), SequenceKey(1))
    assert pairs[3][0] == (DictKey("b"), GetAttrKey("x"))
    assert [keystr(p) for p, _ in pairs] == [
        "['a'][0]", "['a'][1][0]", "['a'][1][1]", "['b'].x", "['b'].y[0]"]


def test_paths_for_custom_and_dataclass_nodes():
    pairs = tree_leaves_with_path({"box": Box((7, 8)), "p": Params(w=1, b=2),
                                   "k": Keyed(lo=3, hi=4)})
    assert [keystr(p) for p, _ in pairs] == [
        "['box'][0][0]", "['box'][0][1]", "['k'].lo", "['k'].hi", "['p'].w", "['p'].b"]
    assert pairs[0][0][1] == FlattenedIndexKey(0)


def test_paths_ordered_and_defaultdict():
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    dd = collections.defaultdict(int, {"z": 1, "a": 2})
    assert [keystr(p) for p, _ in tree_leaves_with_path(od)] == ["['z']", "['a']"]
    assert [keystr(p) for p, _ in tree_leaves_with_path(dd)] == ["['a']", "['z']"]


def test_keystr_variants():
    path = (DictKey("params"), SequenceKey(2), GetAttrKey("w"), FlattenedIndexKey(1))
    assert keystr(path) == "['params'][2].w[1]"
    assert keystr(path, simple=True, separator="/") == "params/2/w/1"
    assert keystr(()) == ""
    assert str(DictKey(3)) == "[3]"


def test_with_path_is_leaf():
    pairs = tree_leaves_with_path({"a": (1, 2)}, is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == [((DictKey("a"),), (1, 2))]


# --- Partial -------------------------------------------------------------------------


def test_partial_is_pytree():
    p = Partial(operator.add, 1)
    assert p(2) == 3
    assert tree_leaves(p) == [1]
    q = tree_map(lambda x: x * 10, p)
    assert isinstance(q, Partial)
    assert q(2) == 12


def test_partial_keywords_and_structure():
    def f(x, *, scale, shift):
        return x * scale + shift

    p = Partial(f, scale=3, shift=1)
    assert tree_leaves(p) == [3, 1]  # keywords dict: sorted keys scale < shift
    assert p(2) == 7
    assert tree_structure(p) == tree_structure(Partial(f, scale=0, shift=0))
    assert tree_structure(p) != tree_structure(Partial(operator.add, scale=0, shift=0))
    assert tree_map(lambda v: v + 1, p)(2) == 10


def test_partial_wraps_plain_partial_as_static():
    inner = functools.partial(operator.mul, 5)
    p = Partial(inner)
    assert tree_leaves(p) == []  # the 5 stays inside the static func
    assert p(3) == 15
    assert tree_structure(p) == tree_structure(Partial(inner))
    assert tree_structure(p) != tree_structure(Partial(functools.partial(operator.mul, 5)))


def test_module_has_no_core_imports():
    import ast
    import inspect

    src = inspect.getsource(tu)
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.ImportFrom):
            assert node.module is not None and not node.module.startswith("core")
            assert node.level == 0
        elif isinstance(node, ast.Import):
            assert all(not a.name.startswith("core") for a in node.names)


def test_public_names_exported():
    for name in ["register_pytree_node", "register_pytree_node_class", "register_dataclass",
                 "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure",
                 "tree_map", "tree_all", "tree_reduce", "tree_transpose", "treedef_is_leaf",
                 "all_leaves", "tree_flatten_with_path", "tree_map_with_path", "keystr",
                 "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "Partial",
                 "PyTreeDef"]:
        assert name in tu.__all__ and hasattr(tu, name)
    assert isinstance(tree_structure(1), PyTreeDef)

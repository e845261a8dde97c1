"""Readers the trainer's tests share: a run's `metrics.jsonl` records and a train state's leaves
keyed by their pytree path."""
import json
import os

import numpy as np

from core.tree_util import keystr, tree_flatten_with_path


def jsonl(workdir):
    """Every record of the run's `metrics.jsonl`, in order."""
    with open(os.path.join(workdir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def leaves(tree):
    """`{path: host array}` for every leaf of `tree`."""
    return {keystr(p): np.asarray(v) for p, v in tree_flatten_with_path(tree)[0]}

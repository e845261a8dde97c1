"""CI runs the README's Python example and every example script on tiny settings (STYLE.md habit 12)."""
import os
import re
import runpy

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_python_block_runs():
    text = open(os.path.join(ROOT, "README.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has no python example"
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 (our own README)
    assert namespace["y"].shape == (3,)
    assert float(namespace["x"][0, 1]) == 2.0


def test_train_mlp_example_learns():
    module = runpy.run_path(os.path.join(ROOT, "examples", "train_mlp.py"))
    first, last, accuracy = module["main"](["--steps", "200", "--log-every", "100"])
    assert first > 0.6  # about log(2) at initialization for two balanced classes
    assert last < 0.5 * first and accuracy > 0.8


def test_bundled_data_is_the_documented_two_spirals():
    table = np.loadtxt(os.path.join(ROOT, "examples", "data", "two_spirals.csv"), delimiter=",", comments="#",
                       skiprows=2)
    assert table.shape == (600, 3) and set(np.unique(table[:, 2])) == {0.0, 1.0}
    assert (table[:, 2] == 0).sum() == 300

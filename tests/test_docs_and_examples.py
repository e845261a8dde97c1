"""The project's documents hold: the README's code runs and prints what it says, `make train` installs
only what training needs, every example script runs on tiny settings, and every document a file
refers to is in the repository (docs/design.md, Testing). The docstring examples run in
tests/test_doctests.py."""
import glob
import os
import re
import runpy
import shutil
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme_blocks():
    text = open(os.path.join(ROOT, "README.md")).read()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_python_blocks_run_and_print_what_they_say():
    blocks = _readme_blocks()
    assert blocks, "the README has no python example"
    printed = []
    namespace = {"print": lambda *args: printed.append(" ".join(str(a) for a in args))}
    for block in blocks:
        # top-level `print(...)` lines, each run exactly once; a trailing comment gives its output
        # (optionally followed by ": explanation")
        print_lines = [line for line in block.splitlines() if line.startswith("print(")]
        expected = [m.group(1) if (m := re.match(r"print\(.*?\)[ \t]+#[ \t]*(.*)$", line)) else None
                    for line in print_lines]
        printed.clear()
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 (our own README)
        assert len(printed) == len(expected), block
        for out, comment in zip(printed, expected):
            if comment is not None:
                assert comment == out or comment.startswith(out + ": "), (out, comment)
    assert namespace["y"].shape == (3,)
    assert float(namespace["x"][0, 1]) == 2.0
    # the README says print shows the values and repr adds the type, as JAX's Array does
    assert str(namespace["y"]).startswith("[") and repr(namespace["y"]).startswith("Array([")
    assert repr(namespace["y"]).endswith(", dtype=float32)")


def _make_dry_run(target):
    """The commands `make <target>` would run on a fresh checkout (-B: every target out of date)."""
    result = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return result.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_train_installs_only_what_training_needs():
    train, test = _make_dry_run("train"), _make_dry_run("test")
    assert re.search(r"pip install .*-e \.$", train, re.M), train
    assert "[test]" not in train and "pytest" not in train
    assert "-e '.[test]'" in test and "pytest" in test


# ----- every document a file refers to is in the repository ----------------------------------------

SKIP_DIRS = {"build", "dist", "__pycache__", "runs"}
SCANNED = (".py", ".md", ".c", ".cfg", ".toml", ".sh", ".txt", ".yaml", ".yml")
SHARED = ".." + "/shared"                       # spelled in two parts so this file does not match itself
OUTSIDE_ID = re.compile(r"\b(?:RELIABILITY|DESIGN|STYLE)\b(?!\.md)\s+[A-Z]\d")  # a bare name and an id
DOC_NAME = re.compile(r"\b[A-Z][A-Z0-9_-]{2,}\.md\b")                          # README.md, RESULTS.md
DOC_PATH = re.compile(r"\bdocs/[\w./-]+\.md\b")
CATALOGUE_IDS = re.compile(r"docs/reliability\.md((?:[ ,/-]*(?:and )?[FNETCS]\d+[b-d]?\b)+)")


def _repo_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in files:
            if name.endswith(SCANNED) or name == "Makefile":
                yield os.path.join(top, name)


def _catalogue_ids():
    text = open(os.path.join(ROOT, "docs", "reliability.md")).read()
    return set(re.findall(r"^\| ([FNETCS]\d+[b-d]?) \|", text, re.M))


def test_every_referenced_document_exists_in_the_repository():
    files = list(_repo_files())
    doc_names = {os.path.basename(f) for f in files if f.endswith(".md")}
    ids = _catalogue_ids()
    problems = []
    for path in files:
        rel = os.path.relpath(path, ROOT)
        for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
            where = f"{rel}:{n}"
            if SHARED in line:
                problems.append(f"{where}: refers outside the repository ({SHARED})")
            if OUTSIDE_ID.search(line):
                problems.append(f"{where}: cites a document that is not in the repository: {line.strip()}")
            for name in DOC_NAME.findall(line):
                if name not in doc_names:
                    problems.append(f"{where}: {name} is not in the repository")
            for doc in DOC_PATH.findall(line):
                if not os.path.isfile(os.path.join(ROOT, doc)):
                    problems.append(f"{where}: {doc} does not exist")
            for cited in CATALOGUE_IDS.findall(line):
                for id_ in re.findall(r"[FNETCS]\d+[b-d]?", cited):
                    if id_ not in ids:
                        problems.append(f"{where}: docs/reliability.md has no row {id_}")
    assert not problems, "\n".join(problems)


def test_the_catalogue_has_every_id_once_and_names_existing_tests():
    text = open(os.path.join(ROOT, "docs", "reliability.md")).read()
    rows = re.findall(r"^\| ([FNETCS]\d+[b-d]?) \|", text, re.M)
    expected = ([f"F{i}" for i in range(1, 67)] + [f"N{i}" for i in range(1, 10)] + [f"E{i}" for i in range(1, 6)]
                + [f"T{i}" for i in range(1, 10)] + [f"C{i}" for i in range(1, 4)]
                + ["S0", "S0b", "S0c", "S0d", "S1", "S2", "S3", "S4"])
    assert sorted(rows) == sorted(expected) and len(rows) == len(set(rows))
    for pattern in set(re.findall(r"\btests/[\w*.-]+\.py\b", text)):
        assert glob.glob(os.path.join(ROOT, pattern)), f"docs/reliability.md names {pattern}, which does not exist"


def test_the_reference_check_catches_outside_documents():
    # the patterns above must fire on the kinds of reference they exist for
    bad = ["see " + SHARED + "/X.md", "(RELIABILITY" + " N1)", "(RELIABILITY" + ".md F3)", "STYLE" + ".md habit 8"]
    names = {"README.md", "RESULTS.md"}
    hits = [line for line in bad
            if SHARED in line or OUTSIDE_ID.search(line) or set(DOC_NAME.findall(line)) - names]
    assert hits == bad
    assert CATALOGUE_IDS.findall("(docs/reliability.md F30-F32, F35)") == [" F30-F32, F35"]


def test_train_mlp_example_learns():
    module = runpy.run_path(os.path.join(ROOT, "examples", "train_mlp.py"))
    first, last, accuracy = module["main"](["--steps", "200", "--log-every", "100"])
    assert first > 0.6  # about log(2) at initialization for two balanced classes
    assert last < 0.5 * first and accuracy > 0.8


def test_dp_digits_example_runs_on_tiny_settings(tmp_path, capsys):
    """examples/dp_digits.py (issue 15) for one epoch at one epsilon: the calibrated sigma meets
    the target, the reference run is not private, and the table is printed."""
    module = runpy.run_path(os.path.join(ROOT, "examples", "dp_digits.py"))
    private, reference = module["main"](["--epochs", "1", "--epsilons", "2", "--workdir", str(tmp_path)])
    assert private["steps"] == reference["steps"] == 38                   # 1,212 examples in batches of 32
    assert 0.99 * 2 < private["epsilon_rdp"] <= 2 and private["epsilon_pld"] < private["epsilon_rdp"]
    assert private["sigma"] > 0 and reference["sigma"] is None and reference["epsilon_rdp"] is None
    assert reference["accuracy"] > 0.5                                    # chance is 0.1
    out = capsys.readouterr().out
    assert out.startswith("| target epsilon |") and f"| 2 | {private['epsilon_rdp']:.3f} |" in out


def test_bundled_data_is_the_documented_two_spirals():
    table = np.loadtxt(os.path.join(ROOT, "examples", "data", "two_spirals.csv"), delimiter=",", comments="#",
                       skiprows=2)
    assert table.shape == (600, 3) and set(np.unique(table[:, 2])) == {0.0, 1.0}
    assert (table[:, 2] == 0).sum() == 300

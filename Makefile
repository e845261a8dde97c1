# Two entry points a newcomer needs (README): `make train` and `make test`.
# Both create a local virtual environment (.venv) and install the project into it first: `train`
# only what training needs (`pip install -e .`), `test` adds the test extras (pytest, scipy).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TRAIN_STAMP := $(VENV)/.installed-train
TEST_STAMP := $(VENV)/.installed-test

.PHONY: train test test-full bench bench-setup coverage clean

$(TRAIN_STAMP): setup.cfg pyproject.toml setup.py core/_jitfast.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(TRAIN_STAMP)

$(TEST_STAMP): $(TRAIN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

train: $(TRAIN_STAMP)
	$(BIN)/train

# the tests run on every core (pytest-xdist), one file per worker at a time
test: $(TEST_STAMP)
	$(BIN)/python -m pytest -n auto --dist loadfile

test-full: $(TEST_STAMP)
	PURENN_TEST_FULL=1 $(BIN)/python -m pytest -n auto --dist loadfile

coverage: $(TEST_STAMP)
	$(BIN)/python tests/numpy_coverage.py

bench-setup:
	bash bench/setup_oracles.sh

bench: $(TRAIN_STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# Two entry points a newcomer needs (README): `make train` and `make test`.
# Both create a local virtual environment (.venv) and install the project into it first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: train test test-full bench bench-setup coverage clean

$(STAMP): setup.cfg pyproject.toml setup.py core/_jitfast.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

train: $(STAMP)
	$(BIN)/train

# the tests run on every core (pytest-xdist), one file per worker at a time
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadfile

test-full: $(STAMP)
	PURENN_TEST_FULL=1 $(BIN)/python -m pytest -n auto --dist loadfile

coverage: $(STAMP)
	$(BIN)/python tests/numpy_coverage.py

bench-setup:
	bash bench/setup_oracles.sh

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

#!/usr/bin/env bash
# Create the benchmark oracle virtual environments (jax, torch) idempotently.
#
# These environments are *oracles*: they live outside the framework's own
# dependencies, are never imported by purenn, and only ever run in their own
# subprocesses started by bench/run.py.
#
# Usage: bash bench/setup_oracles.sh [jax|torch ...]   (default: both)
# Env:   PYTHON=python3.11   interpreter used to create the venvs
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"

JAX_SPEC="jax==0.10.2 jaxlib==0.10.2"
# opacus: the DP peer of bench/dp_clipping.py (pinned, and installed beside the pinned torch)
TORCH_SPEC="torch==2.13.0 numpy opacus==1.6.0"

# make_venv NAME "PIP SPECS" "python check statement"
make_venv() {
    local name="$1" specs="$2" check="$3"
    local dir="$HERE/.venv-$name"
    if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "$check" >/dev/null 2>&1; then
        echo "[setup_oracles] $name: already present in $dir"
        return 0
    fi
    echo "[setup_oracles] $name: creating $dir"
    if [ ! -x "$dir/bin/python" ]; then
        "$PY" -m venv "$dir"
    fi
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    # shellcheck disable=SC2086
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check $specs
    "$dir/bin/python" -c "$check"
    echo "[setup_oracles] $name: ok"
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(jax torch)
fi

for t in "${targets[@]}"; do
    case "$t" in
        jax)
            make_venv jax "$JAX_SPEC" \
                "import jax, jaxlib; assert jax.__version__ == '0.10.2', jax.__version__"
            ;;
        torch)
            make_venv torch "$TORCH_SPEC" \
                "import torch, numpy, opacus; assert torch.__version__.split('+')[0] == '2.13.0', torch.__version__; assert opacus.__version__ == '1.6.0', opacus.__version__"
            ;;
        *)
            echo "[setup_oracles] unknown oracle: $t (expected jax or torch)" >&2
            exit 2
            ;;
    esac
done

"""The privacy-utility figure of DP-SGD on the bundled 8x8 digits: test accuracy at epsilon 1, 3
and 8 (delta 1e-5), and without privacy for reference.

Every run is `configs/digits_dp.yaml` (an MLP with one hidden layer of 32, SGD at 0.5, expected
batch 32 by Poisson sampling, C = 1, 6 epochs, seed 0) through the trainer, `train.fit`; a private
run replaces the config's noise multiplier by `dp.target_epsilon`, from which the trainer
calibrates sigma for the run's 228 steps, and the reference run sets `dp.enabled=false` (the
same model, optimizer, batch size and steps). It prints a Markdown table: epsilon (RDP, the
calibrated one, and PLD, tighter, for the same run), sigma, steps and test accuracy.

    PYTHONPATH=. python examples/dp_digits.py [--epsilons 1 3 8] [--epochs 6] [--workdir DIR]
"""
import argparse
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import train  # noqa: E402
from train import config as config_lib  # noqa: E402

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "digits_dp.yaml")


def run(epsilon, epochs, workdir):
    """One run of the config: private at `epsilon` (None: not private). Returns the table's row."""
    if epsilon is None:
        dp = ["dp.enabled=false"]
    else:
        dp = ["dp.noise_multiplier=null", f"dp.target_epsilon={epsilon!r}"]
    overrides = [f"run.epochs={epochs}", f"run.workdir={workdir}", "run.progress=off", *dp]
    cfg = config_lib.load_config([CONFIG], overrides)
    result = train.fit(cfg, resume="never", stream=io.StringIO())
    m = result.metrics
    return {"target": epsilon, "epsilon_rdp": m.get("dp/epsilon_rdp"), "epsilon_pld": m.get("dp/epsilon_pld"),
            "sigma": m.get("dp/noise_multiplier"), "steps": result.steps, "accuracy": m["test/accuracy"]}


def table(rows):
    """The rows as a Markdown table."""
    lines = ["| target epsilon | epsilon (RDP) | epsilon (PLD) | sigma | steps | test accuracy |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r["target"] is None:
            lines.append(f"| none (not private) | - | - | - | {r['steps']} | {r['accuracy']:.4f} |")
        else:
            lines.append(f"| {r['target']:g} | {r['epsilon_rdp']:.3f} | {r['epsilon_pld']:.3f} | {r['sigma']:.3f} "
                         f"| {r['steps']} | {r['accuracy']:.4f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0, 8.0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--workdir", default=None, help="where the runs go (default: a temporary directory)")
    args = parser.parse_args(argv)
    base = args.workdir or tempfile.mkdtemp(prefix="dp_digits_")
    rows = []
    for epsilon in [*args.epsilons, None]:
        name = "nonprivate" if epsilon is None else f"eps_{epsilon:g}"
        rows.append(run(epsilon, args.epochs, os.path.join(base, name)))
    print(table(rows))
    return rows


if __name__ == "__main__":
    main()

"""The `train` command (also `python -m train`): parse the arguments, build the config, call
`train.loop.fit`, and turn its outcome into an exit code.

    train [CONFIG.yaml ...] [KEY=VALUE | +KEY=VALUE | ~KEY ...] [--set KEY=VALUE ...]
          [--print-config] [--dry-run] [--resume auto|never|PATH] [--eval-only]
          [--workdir DIR] [--seed N] [--devices N]

Exit codes: 0 done; 2 bad config or bad input (a message, no traceback); 3 non-finite loss with
run.on_nonfinite: stop; 75 stopped by a signal after committing a checkpoint (run the same command
again to resume); 1 anything else (with a traceback).
"""
import argparse
import os
import sys

from .config import ConfigError, dump_yaml, help_text, load_config

EXIT_OK, EXIT_CONFIG, EXIT_NONFINITE, EXIT_PREEMPTED = 0, 2, 3, 75
# exceptions of train.loop (looked up by name, so this module works before and without loop.py)
_LOOP_EXIT_CODES = {"NonFiniteLossError": EXIT_NONFINITE, "Preempted": EXIT_PREEMPTED}

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs",
                              "digits_mlp.yaml")


def _parser():
    parser = argparse.ArgumentParser(
        prog="train",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a model described by YAML config files. Files merge left to right (mappings "
                    "merge, lists replace); then the overrides apply: positional ones in order, then "
                    "--set, then --workdir/--seed/--devices. KEY=VALUE sets a key, +KEY=VALUE adds one "
                    "(e.g. +model.args.dropout=0.1), ~KEY deletes one (restoring its default); VALUE is "
                    "YAML (1e-3, [64, 64], {b1: 0.9}, null, 'off'). With no config file, the bundled "
                    "configs/digits_mlp.yaml is used.",
        epilog=help_text() + "\n\nExit codes: 0 done; 2 bad config or input; 3 non-finite loss "
               "(run.on_nonfinite: stop); 75 stopped by a signal after a checkpoint (rerun to resume); "
               "1 anything else.")
    parser.add_argument("items", nargs="*", metavar="CONFIG.yaml | KEY=VALUE",
                        help="config files and overrides (an argument with '=' or starting with '+'/'~' "
                             "is an override)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="an override (repeatable)")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config (every key, defaults filled in) and exit")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the config, data and model and compile the steps, without training")
    parser.add_argument("--resume", default="auto", metavar="auto|never|PATH",
                        help="auto: continue from the newest valid checkpoint in the workdir (default); "
                             "never: start fresh; PATH: restore that checkpoint")
    parser.add_argument("--eval-only", action="store_true", help="evaluate the restored model, no training")
    parser.add_argument("--workdir", metavar="DIR", help="same as run.workdir=DIR")
    parser.add_argument("--seed", metavar="N", help="same as run.seed=N")
    parser.add_argument("--devices", metavar="N", help="same as run.devices=N")
    return parser


def _is_override(arg):
    return "=" in arg or arg.startswith(("+", "~"))


def _yaml_quoted(text):
    """`text` as a single-quoted YAML string, so a directory named `null` or `1e3` stays a string."""
    return "'" + text.replace("'", "''") + "'"


def parse_args(argv=None):
    """(config files, overrides, parsed options) of a `train` command line; argparse's SystemExit
    on bad usage or --help."""
    args = _parser().parse_intermixed_args(argv)
    files = [item for item in args.items if not _is_override(item)]
    overrides = [item for item in args.items if _is_override(item)] + list(args.sets)
    if args.workdir is not None:
        overrides.append(f"run.workdir={_yaml_quoted(args.workdir)}")
    for name in ("seed", "devices"):
        if getattr(args, name) is not None:
            overrides.append(f"run.{name}={getattr(args, name)}")
    if not files and os.path.exists(DEFAULT_CONFIG):
        files = [DEFAULT_CONFIG]
    return files, overrides, args


def main(argv=None):
    """Run the `train` command; returns the exit code (see the module docstring)."""
    try:
        files, overrides, args = parse_args(argv)
    except SystemExit as e:  # --help, or bad usage (argparse printed the message)
        return e.code if isinstance(e.code, int) else EXIT_CONFIG
    try:
        cfg = load_config(files, overrides)
        if args.print_config:
            sys.stdout.write(dump_yaml(cfg))
            return EXIT_OK
        if cfg.run.devices > 1:
            # on CPU, N devices must be asked for before the backend starts (core reads this once)
            os.environ.setdefault("PURENN_NUM_CPU_DEVICES", str(cfg.run.devices))
        from . import loop  # imported here: `train --help` and config errors need no model code
        loop.fit(cfg, resume=args.resume, dry_run=args.dry_run, eval_only=args.eval_only)
        return EXIT_OK
    except ConfigError as e:
        print(str(e), file=sys.stderr)
        return EXIT_CONFIG
    except Exception as e:
        code = _loop_exit_code(e)
        if code is None:
            raise
        print(f"train: {e}" if str(e) else f"train: {type(e).__name__}", file=sys.stderr)
        return code


def _loop_exit_code(error):
    loop = sys.modules.get(__package__ + ".loop")
    for name, code in _LOOP_EXIT_CODES.items():
        cls = getattr(loop, name, None)
        if isinstance(cls, type) and isinstance(error, cls):
            return code
    return None


if __name__ == "__main__":
    sys.exit(main())

"""The `train` command. Until the trainer issue lands, it runs the bundled example that trains a
small model with `core` alone."""
import runpy
import os
import sys


def main(argv=None):
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "train_mlp.py")
    sys.argv = [example] + list(sys.argv[1:] if argv is None else argv)
    runpy.run_path(example, run_name="__main__")


if __name__ == "__main__":
    main()

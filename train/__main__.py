"""`python -m train ...` is the `train` command (train/cli.py)."""
import sys

from .cli import main

sys.exit(main())

"""`optim`: minmax-style optimizers over pytrees of parameters, with schedules (issue 7).

The contract is written once at the top of `optim/base.py`."""
from .base import Optimizer, OptimizerState, optimizer  # noqa: F401
from .optimizers import *  # noqa: F401,F403
from .schedules import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403

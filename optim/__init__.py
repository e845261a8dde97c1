"""`optim`: minmax-style optimizers over pytrees of parameters, with schedules (issue 7), and
DP-SGD with privacy accounting (issue 15).

The contract is written once at the top of `optim/base.py`. Importing `optim` does not import the
optional dp-accounting library; `optim.privacy` imports it on first use."""
from .base import (JoinPoint, Optimizer, OptimizerState, optimizer, pack_optimizer_state,  # noqa: F401
                   unpack_optimizer_state)
from .optimizers import *  # noqa: F401,F403
from .schedules import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
from .dp import *  # noqa: F401,F403
from .privacy import *  # noqa: F401,F403

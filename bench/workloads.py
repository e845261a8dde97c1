"""Benchmark workload registry: what each workload computes and how it is reported.

This module is deliberately stdlib-only: it is imported by the runner
(bench/run.py) and by every peer script (bench/peers/*_w.py), each of which
runs under a different interpreter / virtual environment (purenn's own venv,
bench/.venv-jax, bench/.venv-torch).

Each peer script implements every workload below *with the same computation*,
written out explicitly in that library's eager API, so that the only thing that
differs between peers is the library. Inputs are always built from the same
deterministic NumPy arrays (see ``make_inputs_np``), and each peer reports a
checksum of one result so the runner can flag a peer that computes something
different.

Most workloads are eager (no jit). The jit workloads (``jit_dispatch_3op*``,
``trace_compile_mlp20``, ``axpy_5000_jit``) run on purenn and jax only, except
``jit_dispatch_3op*``, where torch runs the same three ops eagerly as a
reference (torch.compile is deliberately not used). The differentiation
workloads (``grad_mlp_*``, ``newton_step_jit``) run on purenn and jax only:
they compare ``core.grad``/``core.jacfwd``/``core.jacrev`` with jax's. The
vmap workloads (``per_example_grads_*``, ``vmap_matvec_jit``,
``matvec_batched_jit``) run on purenn and jax, and ``per_example_grads_vmap``
also on torch through ``torch.func`` (eager). The training workloads
(``mlp_adam_step``, ``convnet_step``, issue 7) run on all three peers, torch
eagerly. The pmap workloads (``pmap_mlp_step_2dev`` and its 1-device reference
``mlp_step_global_1dev``, issue 6) run on purenn and jax. A peer
outside a workload's ``peers`` is not run and is shown as "n/a" in the report.

The MLP loss of the ``grad_mlp_*`` workloads, written out the same way by each
peer (no library loss function)::

    h = maximum(x @ W1 + b1, 0);  logits = h @ W2 + b2
    m = max(logits, axis=1, keepdims=True)
    lse = log(sum(exp(logits - m), axis=1)) + m[:, 0]
    onehot = (y[:, None] == arange(10)).astype(float32)
    loss = mean(lse - sum(onehot * logits, axis=1))

and the gradient is taken with respect to the params dict
``{"W1", "b1", "W2", "b2"}``. The checksum is over the four gradients.

The ``per_example_grads_*`` workloads take the same loss for ONE example
(x of shape (784,), y an int32 scalar label), at batch 64::

    h = maximum(x @ W1 + b1, 0);  logits = h @ W2 + b2
    m = max(logits)
    lse = log(sum(exp(logits - m))) + m
    onehot = (y == arange(10)).astype(float32)
    loss = lse - sum(onehot * logits)

and compute its gradient for each of the 64 examples, by vmap(grad(loss),
in_axes=(None, 0, 0)) under jit (torch: torch.func.vmap/grad, eager), or by a
Python loop of jitted single-example gradients. Their unit is examples per
second; the checksum is over all 64 x 4 per-example gradients.

The training workloads (``mlp_adam_step``, ``convnet_step``) time one whole
Adam step ``step(i, opt_state, (x, y))``: value_and_grad of the loss, then the
optimizer update, under jit for purenn (nn.serial + optim.adam + core.jit) and
jax (jax.example_libraries.stax + optimizers + jax.jit); torch runs
nn.Sequential + torch.optim.Adam eagerly (zero_grad, forward, backward, step;
no torch.compile). The networks::

    mlp_adam_step: Dense(512), Relu, Dense(512), Relu, Dense(10);
                   loss = softmax cross-entropy with int32 labels (mean)
    convnet_step:  Conv(32, (3, 3), 'SAME'), Relu, Conv(64, (3, 3), 'SAME'), Relu,
                   MaxPool((2, 2)) (stride 1, as stax), Flatten, Dense(128), Relu,
                   Dense(10), LogSoftmax;  loss = -mean(logp[i, y_i])

All peers start from the SAME parameters, drawn here in NumPy in stax's layout
(HWIO kernels, (1, 1, 1, C) conv biases, (in, out) dense weights, NHWC
flattening); torch gets them transposed to its layout (OIHW kernels, (out, in)
weights, the first Dense's rows permuted from NHWC to NCHW flattening order),
so the checksum is the loss after one Adam step from those parameters.

The pmap workloads (issue 6, purenn and jax only) time the ``mlp_adam_step``
MLP trained data-parallel, against the same work on one device:

    pmap_mlp_step_2dev:   2 CPU devices of one process. Parameters and Adam
                          state are replicated once (core.replicate; jax:
                          jax.device_put onto a 2-device mesh, sharded along a
                          new leading axis), the global batch of 256 is split
                          into (2, 128, ...) shards put on the devices once, and
                          step = pmap(lambda i, s, b: value_and_grad, then
                          lax.pmean(grads, "batch"), then opt_update,
                          axis_name="batch", in_axes=(None, 0, 0)); each step's
                          output state feeds the next, the batch stays the same.
    mlp_step_global_1dev: the plain jitted Adam step of ``mlp_adam_step`` on the
                          whole batch of 256 on one device.

Both start from the same parameters and batch, so both report the same
checksum: the global loss after one step (for the pmap workload, the mean of
the two devices' shard losses). The device count is fixed through
``Workload.env``, which the runner sets in the peer's environment before the
library is imported (PURENN_NUM_CPU_DEVICES for purenn, XLA_FLAGS
--xla_force_host_platform_device_count for jax; the XLA_FLAGS value replaces
any inherited one); each peer checks it got that many devices and fails
otherwise. torch is "n/a": it has no multi-device CPU data parallelism inside
one process.

The ``newton_step_jit`` objective, with A (64, 16) and x (16,)::

    f(x, A) = sum(log(1 + exp(A @ x))) + 0.5 * sum(x * x)
    step(x, A) = x - solve(jacfwd(jacrev(f))(x, A), grad(f)(x, A))

Timing convention (implemented in bench/peers/_harness.py):
  * a workload is a ``body(n)`` that runs ``n`` iterations back to back and
    blocks (``block_until_ready``) at the end, so async dispatch cannot hide
    work outside the timed region;
  * warm-up calls first (jit/compile caches, allocator, thread pools), then the
    inner count ``n`` is calibrated so one sample lasts about ``target_s``;
  * ``samples`` samples are taken with time.perf_counter and the GC disabled;
    the process reports the median per-iteration time (converted to ``unit``);
  * ``inner`` > 0 fixes the inner count instead of calibrating it, and a
    ``self_timed`` workload's ``body(n)`` returns the seconds it measured itself
    (so per-iteration setup, such as clearing compilation caches, stays
    outside the timed region).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Problem sizes (shared by every peer).
SMALL_N = 8          # eager_add_small*: two (8,) float32 vectors
LATENCY_POOL = 16    # latency workloads: inputs rotate over this many arrays
LATENCY_BIG = 512    # fetch_fresh_512: (512, 512) float32
CHAIN_N = 1000       # eager_chain10: one (1000,) float32 vector
MATMUL_N = 2048      # matmul_2048: (2048, 2048) @ (2048, 2048), float32
AXPY_N = 5000        # axpy_5000, axpy_5000_jit: (5000, 5000) float32
MLP_DEPTH = 20       # trace_compile_mlp20: 20 layers h = tanh(h @ W + b)
MLP_WIDTH = 128      #   of width 128
MLP_BATCH = 32       #   on a (32, 128) batch
GRAD_IN = 784        # grad_mlp_*: x (128, 784) -> relu(x @ W1 + b1) (256) -> logits (10)
GRAD_HIDDEN = 256
GRAD_CLASSES = 10
GRAD_BATCH = 128
NEWTON_M = 64        # newton_step_jit: A (64, 16), x (16,)
NEWTON_N = 16
PEX_BATCH = 64       # per_example_grads_*: 64 examples of the grad_mlp_* MLP (784-256-10)
MATVEC_N = 512       # vmap_matvec_jit, matvec_batched_jit: W (512, 512)
MATVEC_BATCH = 64    #   applied to a (64, 512) batch of vectors
TRAIN_IN = 784       # mlp_adam_step: MLP 784-512-512-10, Adam, batch 128
TRAIN_HIDDEN = 512
TRAIN_CLASSES = 10
TRAIN_BATCH = 128
TRAIN_LR = 1e-3      # Adam step size of both training workloads (b1, b2, eps: the defaults)
PMAP_DEVICES = 2     # pmap_mlp_step_2dev: the mlp_adam_step MLP data-parallel on 2 CPU devices,
PMAP_GLOBAL_BATCH = 256   #   a global batch of 256 split into (2, 128, ...) shards;
                          #   mlp_step_global_1dev: the same 256 on one device
CONV_HW = 28         # convnet_step: (64, 28, 28, 1) NHWC images, the stax seed's convnet
CONV_BATCH = 64
CONV_CH = (32, 64)   #   Conv(32, (3, 3), 'SAME'), Conv(64, (3, 3), 'SAME')
CONV_POOL_HW = CONV_HW - 1   # MaxPool((2, 2)) with stax's default stride 1: 28 -> 27
CONV_DENSE = 128     #   Dense(128) on the flattened 27 * 27 * 64 = 46656 features

ALL_PEERS = ("purenn", "jax", "torch")
JIT_PEERS = ("purenn", "jax")


def cpu_devices_env(n: int) -> dict:
    """The environment that gives each peer ``n`` CPU devices in one process:
    purenn reads PURENN_NUM_CPU_DEVICES, jax the XLA flag (both at import)."""
    return {"PURENN_NUM_CPU_DEVICES": str(n),
            "XLA_FLAGS": f"--xla_force_host_platform_device_count={n}"}

# The ten elementwise ops of eager_chain10, in order, starting from y = x.
# Every peer writes exactly this sequence out by hand (no interpretation loop,
# which would add Python overhead unrelated to the library):
CHAIN10 = (
    ("mul", 1.0001),
    ("add", 0.5),
    ("sin", None),
    ("mul", 0.5),
    ("add", 0.25),
    ("exp", None),
    ("mul", 0.999),
    ("sub", 0.5),
    ("sin", None),
    ("add", 1.0),
)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    unit: str                 # "us", "ms" (time per iteration), "GFLOP/s" or "ex/s"
    higher_is_better: bool
    target_s: float           # approx. duration of one timed sample
    samples: int              # timed samples per process (per round)
    warmup: int               # warm-up iterations before calibration
    flops: float = 0.0        # per iteration, for GFLOP/s workloads
    examples: int = 0         # per iteration, for ex/s (examples per second) workloads
    inner: int = 0            # > 0: fixed inner count (no calibration)
    self_timed: bool = False  # body(n) returns the seconds it timed itself
    peers: tuple = ALL_PEERS  # peers that implement it; the others are "n/a"
    na_note: str = ""         # why the other peers are "n/a"
    eager_counterpart: str = ""   # jit workload: the eager workload it mirrors
    # Environment variables the runner sets for the peer process (on top of the
    # peer's own): what must be fixed before the library is imported, such as
    # the number of CPU devices.
    env: dict = field(default_factory=dict)

    @property
    def unit_short(self) -> str:
        return "µs" if self.unit == "us" else self.unit

    @property
    def unit_label(self) -> str:
        if self.unit == "us":
            return "µs / iteration"
        if self.unit == "ms":
            return "ms / iteration"
        if self.unit == "ex/s":
            return "examples / s"
        return self.unit

    def from_seconds(self, seconds_per_iter: float) -> float:
        """Convert a per-iteration time in seconds into this workload's unit."""
        if self.unit == "us":
            return seconds_per_iter * 1e6
        if self.unit == "ms":
            return seconds_per_iter * 1e3
        if self.unit == "GFLOP/s":
            return self.flops / seconds_per_iter / 1e9
        if self.unit == "ex/s":
            return self.examples / seconds_per_iter
        raise ValueError(f"unknown unit {self.unit!r}")


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "eager_add_small",
            "x + y on two (8,) float32 arrays, eager (no jit); N ops back to "
            "back with nothing in between, one block_until_ready at the end",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
        ),
        Workload(
            "eager_add_small_sync",
            "x + y on two (8,) float32 arrays, eager (no jit); "
            "block_until_ready after every op (torch: plain op, it is synchronous)",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
        ),
        Workload(
            "eager_chain10",
            "chain of 10 elementwise ops (mul, add, sin, mul, add, exp, mul, "
            "sub, sin, add) on a (1000,) float32 array, eager; per chain",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=50,
        ),
        Workload(
            "matmul_2048",
            "(2048, 2048) @ (2048, 2048) float32 matmul, eager; 2*n^3 / time",
            unit="GFLOP/s", higher_is_better=True,
            target_s=0.2, samples=5, warmup=2,
            flops=2.0 * MATMUL_N ** 3,
        ),
        Workload(
            "axpy_5000",
            "x*x + x*2.0 on a (5000, 5000) float32 array, eager; per call",
            unit="ms", higher_is_better=False,
            target_s=0.1, samples=7, warmup=2,
        ),
        Workload(
            "jit_dispatch_3op",
            "dispatch of a jitted f(x, y) = sin(x) * y + 1.0 on two (8,) float32 "
            "arrays (compiled during warm-up); N calls back to back, one "
            "block_until_ready at the end; per call. torch: the same three ops "
            "eagerly (no compilation), for reference only",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
        ),
        Workload(
            "jit_dispatch_3op_sync",
            "same jitted f(x, y) = sin(x) * y + 1.0 on two (8,) float32 arrays, "
            "block_until_ready after every call; per call. torch: the same three "
            "ops eagerly (synchronous, no compilation), for reference only",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
        ),
        Workload(
            "trace_compile_mlp20",
            f"trace + compile of a jitted {MLP_DEPTH}-layer MLP forward "
            f"(h = tanh(h @ W + b), width {MLP_WIDTH}, batch {MLP_BATCH}, float32; "
            "the weights are arguments, not constants): each sample makes a fresh "
            "jitted function, clears the library's compilation caches (outside "
            "timing) and times its first call including block_until_ready; "
            "per trace+compile",
            unit="ms", higher_is_better=False,
            target_s=0.0, samples=5, warmup=2, inner=1, self_timed=True,
            peers=JIT_PEERS,
            na_note="no torch equivalent without torch.compile, which is not used",
        ),
        Workload(
            "axpy_5000_jit",
            "jit(lambda x: x*x + x*2.0) on a (5000, 5000) float32 array "
            "(compiled during warm-up); per call. The jit counterpart of the "
            "eager `axpy_5000`: compare the two rows",
            unit="ms", higher_is_better=False,
            target_s=0.1, samples=7, warmup=2,
            peers=JIT_PEERS,
            na_note="jit workload (torch.compile not used); torch's eager figure "
                    "is in `axpy_5000`",
            eager_counterpart="axpy_5000",
        ),
        Workload(
            "grad_mlp_eager",
            f"gradient of a mean softmax cross-entropy MLP loss (x ({GRAD_BATCH}, "
            f"{GRAD_IN}) -> relu({GRAD_HIDDEN}) -> {GRAD_CLASSES} logits, integer "
            "labels, logsumexp written with max/exp/sum/log) with respect to the "
            "params {W1, b1, W2, b2}, float32, without jit (grad(loss) op by op); "
            "per gradient",
            unit="ms", higher_is_better=False,
            target_s=0.2, samples=5, warmup=2,
            peers=JIT_PEERS,
            na_note="differentiation workload: compares core.grad with jax.grad",
        ),
        Workload(
            "grad_mlp_jit",
            "jit(grad(loss)) of the same MLP loss as `grad_mlp_eager` "
            "(compiled during warm-up), steady state: N calls back to back, "
            "one block_until_ready at the end; per gradient",
            unit="ms", higher_is_better=False,
            target_s=0.1, samples=7, warmup=3,
            peers=JIT_PEERS,
            na_note="differentiation workload: compares core.grad with jax.grad",
            eager_counterpart="grad_mlp_eager",
        ),
        Workload(
            "grad_mlp_trace_compile",
            "trace + compile of jit(grad(loss)) for the `grad_mlp_eager` loss and "
            "signature: each sample makes a fresh loss function and jitted "
            "gradient, clears the library's compilation caches (outside timing) "
            "and times its first call including block_until_ready; "
            "per trace+compile",
            unit="ms", higher_is_better=False,
            target_s=0.0, samples=5, warmup=2, inner=1, self_timed=True,
            peers=JIT_PEERS,
            na_note="differentiation workload: compares core.grad with jax.grad",
        ),
        Workload(
            "newton_step_jit",
            "one jitted Newton step x - solve(H, g) for f(x) = sum(log(1 + "
            f"exp(A @ x))) + 0.5 * |x|^2, A ({NEWTON_M}, {NEWTON_N}) float32, "
            "g = grad(f), H = jacfwd(jacrev(f)) (compiled during warm-up); "
            "N calls back to back, one block_until_ready at the end; per step",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=20,
            peers=JIT_PEERS,
            na_note="differentiation workload: compares core.jacfwd/jacrev with jax's",
        ),
        Workload(
            "per_example_grads_vmap",
            f"per-example gradients of the `grad_mlp_eager` MLP loss written for ONE "
            f"example (x ({GRAD_IN},), an int32 label) at batch {PEX_BATCH}: "
            "jit(vmap(grad(loss), in_axes=(None, 0, 0))) with respect to {W1, b1, "
            "W2, b2} (compiled during warm-up); torch: torch.func.vmap("
            "torch.func.grad(loss), in_dims=(None, 0, 0)), eager; examples / s",
            unit="ex/s", higher_is_better=True,
            target_s=0.1, samples=7, warmup=3,
            examples=PEX_BATCH,
        ),
        Workload(
            "per_example_grads_loop",
            f"the same {PEX_BATCH} per-example gradients as `per_example_grads_vmap`, "
            "by a Python loop calling jit(grad(loss)) once per example (the "
            "examples are split into separate arrays outside timing); examples / s",
            unit="ex/s", higher_is_better=True,
            target_s=0.1, samples=7, warmup=2,
            examples=PEX_BATCH,
            peers=JIT_PEERS,
            na_note="the loop of jitted gradients is the jit baseline for "
                    "`per_example_grads_vmap`; torch's figure is there",
        ),
        Workload(
            "vmap_matvec_jit",
            f"jit(vmap(lambda W, x: W @ x, in_axes=(None, 0))): one matrix W "
            f"({MATVEC_N}, {MATVEC_N}), passed as an argument, times each row of a "
            f"({MATVEC_BATCH}, {MATVEC_N}) batch, float32 (compiled during warm-up); "
            "per call. Compare with `matvec_batched_jit`",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=20,
            peers=JIT_PEERS,
            na_note="vmap under jit: compares core.vmap with jax.vmap",
        ),
        Workload(
            "matvec_batched_jit",
            f"the hand-batched `vmap_matvec_jit`: jit(lambda W, X: X @ W.T) on the "
            f"same W ({MATVEC_N}, {MATVEC_N}) and X ({MATVEC_BATCH}, {MATVEC_N}) "
            "(compiled during warm-up); per call",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=20,
            peers=JIT_PEERS,
            na_note="vmap under jit: compares core.vmap with jax.vmap",
        ),
        Workload(
            "mlp_adam_step",
            f"one Adam step (step size {TRAIN_LR:g}) of an MLP {TRAIN_IN}-{TRAIN_HIDDEN}-"
            f"{TRAIN_HIDDEN}-{TRAIN_CLASSES} (relu; mean softmax cross-entropy, int32 "
            f"labels) at batch {TRAIN_BATCH}, float32: value_and_grad plus the optimizer "
            "update, jitted whole (purenn: nn.serial + optim.adam + core.jit; jax: "
            "stax + optimizers + jax.jit; torch: nn.Sequential + torch.optim.Adam, "
            "eager, no torch.compile); N steps back to back, one block_until_ready "
            "at the end; per step",
            unit="ms", higher_is_better=False,
            target_s=0.2, samples=5, warmup=3,
        ),
        Workload(
            "convnet_step",
            f"one Adam step of the stax seed's convnet (Conv({CONV_CH[0]}, (3, 3), "
            f"'SAME'), Relu, Conv({CONV_CH[1]}, (3, 3), 'SAME'), Relu, MaxPool((2, 2)) "
            f"with stride 1, Flatten, Dense({CONV_DENSE}), Relu, Dense(10), LogSoftmax; "
            f"loss -mean(logp[y])) at batch {CONV_BATCH} on ({CONV_HW}, {CONV_HW}, 1) "
            "float32 images, jitted whole as `mlp_adam_step` (torch: NCHW, "
            "MaxPool2d(2, stride=1), eager); per step",
            unit="ms", higher_is_better=False,
            target_s=0.5, samples=5, warmup=2,
        ),
        Workload(
            "pmap_mlp_step_2dev",
            f"the `mlp_adam_step` MLP ({TRAIN_IN}-{TRAIN_HIDDEN}-{TRAIN_HIDDEN}-"
            f"{TRAIN_CLASSES}, Adam {TRAIN_LR:g}) trained data-parallel on "
            f"{PMAP_DEVICES} CPU devices of one process: parameters and optimizer "
            "state replicated once, a global batch of "
            f"{PMAP_GLOBAL_BATCH} split into ({PMAP_DEVICES}, "
            f"{PMAP_GLOBAL_BATCH // PMAP_DEVICES}, ...) shards placed on the devices "
            "once; step = pmap(value_and_grad, lax.pmean(grads, 'batch'), the Adam "
            "update, axis_name='batch'), its outputs fed back (state stays on the "
            "devices), the same sharded batch every step; N steps back to back, one "
            "block_until_ready at the end; per step (compare with "
            "`mlp_step_global_1dev`)",
            unit="ms", higher_is_better=False,
            target_s=0.2, samples=5, warmup=3,
            peers=JIT_PEERS,
            na_note="pmap workload: torch has no in-process multi-device CPU "
                    "equivalent (torch.distributed needs several processes)",
            env=cpu_devices_env(PMAP_DEVICES),
        ),
        # Latency around a small program (issue 18): what a training step that logs a number
        # pays. Blocked per call, the inputs rotating over a pool of LATENCY_POOL arrays so that
        # no cache of host values can help.
        Workload(
            "fetch_fresh_small",
            "np.asarray(f(x, y)) with f = jit((a*b + a) - b) on two (8,) float32 arrays, "
            "inputs rotating over a pool: the host fetch of a fresh result, call included; "
            "per call",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
            peers=JIT_PEERS, na_note="latency of a jitted call and its host fetch: jit peers only",
        ),
        Workload(
            "fetch_scalar_small",
            "float(fs(x, y)) with fs = jit(sum((a*b + a) - b)) on two (8,) float32 arrays, "
            "inputs rotating over a pool; per call",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
            peers=JIT_PEERS, na_note="latency of a jitted call and its host fetch: jit peers only",
        ),
        Workload(
            "fetch_fresh_512",
            f"np.asarray(h(a)) with h = jit(a * 2) on a ({LATENCY_BIG}, {LATENCY_BIG}) float32 "
            "array, inputs rotating over a pool of 4; per call",
            unit="us", higher_is_better=False,
            target_s=0.1, samples=9, warmup=20,
            peers=JIT_PEERS, na_note="latency of a jitted call and its host fetch: jit peers only",
        ),
        Workload(
            "block_tree_ready",
            "block_until_ready({'a': x, 'b': [y, x]}) on ready (8,) float32 arrays: the "
            "cost of the call itself; per call",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
            peers=JIT_PEERS, na_note="latency of a jitted call and its host fetch: jit peers only",
        ),
        Workload(
            "jit_call_block_pool",
            "block_until_ready(f(x, y)) with f = jit((a*b + a) - b) on two (8,) float32 "
            "arrays, inputs rotating over a pool; per call",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
            peers=JIT_PEERS, na_note="latency of a jitted call and its host fetch: jit peers only",
        ),
        Workload(
            "eager_add_block_pool",
            "block_until_ready(x + y), eager, on two (8,) float32 arrays rotating over a "
            "pool (torch: x + y, it is synchronous); per op",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
        ),
        Workload(
            "eager_chain10_block_pool",
            "the eager_chain10 chain (10 elementwise ops) on a (1000,) float32 array "
            "rotating over a pool, block_until_ready on its result; per chain",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=50,
        ),
        Workload(
            "pjrt_floor_add_small",
            "the floor under eager_add_block_pool: purenn's compiled x + y program run "
            "by a raw execute_sharded(bufs).consume_with_handlers(handlers) call on "
            "ready buffers of the same pool, then block_until_ready on the jaxlib "
            "array; per call",
            unit="us", higher_is_better=False,
            target_s=0.05, samples=9, warmup=200,
            peers=("purenn",),
            na_note="jaxlib's execute call as purenn makes it (the same jaxlib 0.10.2 as jax's)",
        ),
        Workload(
            "mlp_step_global_1dev",
            f"the 1-device reference for `pmap_mlp_step_2dev`: the same Adam step "
            f"of the same MLP on the whole global batch of {PMAP_GLOBAL_BATCH} on "
            "ONE CPU device, jitted whole as `mlp_adam_step`; per step",
            unit="ms", higher_is_better=False,
            target_s=0.2, samples=5, warmup=3,
            peers=JIT_PEERS,
            na_note="the 1-device reference of `pmap_mlp_step_2dev`, which torch "
                    "does not run; torch's MLP step is in `mlp_adam_step`",
            env=cpu_devices_env(1),
        ),
    )
}


LATENCY_SMALL = ("fetch_fresh_small", "fetch_scalar_small", "block_tree_ready",
                 "jit_call_block_pool")


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise KeyError(
            f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}"
        ) from None


def make_inputs_np(name: str):
    """Deterministic NumPy float32 inputs for workload ``name``.

    Imported lazily (numpy is present in every peer's environment, but this
    module itself must stay importable without it).
    """
    import numpy as np

    rng = np.random.default_rng(0)
    if name in ("eager_add_small", "eager_add_small_sync"):
        x = (np.arange(SMALL_N, dtype=np.float32) / np.float32(SMALL_N))
        return (x,)  # y is jnp.ones / torch.ones((8,), float32)
    if name == "eager_chain10":
        return (np.linspace(0.0, 1.0, CHAIN_N, dtype=np.float32),)
    if name == "matmul_2048":
        a = rng.standard_normal((MATMUL_N, MATMUL_N), dtype=np.float32)
        b = rng.standard_normal((MATMUL_N, MATMUL_N), dtype=np.float32)
        return (a, b)
    if name in ("axpy_5000", "axpy_5000_jit"):
        return (rng.random((AXPY_N, AXPY_N), dtype=np.float32),)
    if name in ("jit_dispatch_3op", "jit_dispatch_3op_sync"):
        x = (np.arange(SMALL_N, dtype=np.float32) / np.float32(SMALL_N))
        y = np.linspace(0.5, 1.5, SMALL_N, dtype=np.float32)
        return (x, y)
    if name in ("eager_add_block_pool", "pjrt_floor_add_small"):
        return make_inputs_np("fetch_fresh_small")
    if name == "eager_chain10_block_pool":
        return (rng.random((LATENCY_POOL, CHAIN_N), dtype=np.float32),)
    if name in LATENCY_SMALL:
        # a pool of (x, y) pairs, each (8,) float32: shape (LATENCY_POOL, 2, 8)
        x = rng.standard_normal((LATENCY_POOL, SMALL_N), dtype=np.float32)
        y = rng.standard_normal((LATENCY_POOL, SMALL_N), dtype=np.float32)
        return (x, y)
    if name == "fetch_fresh_512":
        return (rng.standard_normal((4, LATENCY_BIG, LATENCY_BIG), dtype=np.float32),)
    if name == "trace_compile_mlp20":
        # x, then W_0, b_0, ..., W_19, b_19; W scaled so tanh does not saturate.
        x = rng.standard_normal((MLP_BATCH, MLP_WIDTH), dtype=np.float32)
        params = []
        scale = np.float32(1.0 / np.sqrt(MLP_WIDTH))
        for _ in range(MLP_DEPTH):
            w = rng.standard_normal((MLP_WIDTH, MLP_WIDTH), dtype=np.float32) * scale
            b = rng.standard_normal((MLP_WIDTH,), dtype=np.float32) * np.float32(0.1)
            params += [w, b]
        return (x, *params)
    if name in ("grad_mlp_eager", "grad_mlp_jit", "grad_mlp_trace_compile",
                "per_example_grads_vmap", "per_example_grads_loop"):
        # x, y (int32 labels), W1, b1, W2, b2; W scaled by 1/sqrt(fan-in).
        batch = GRAD_BATCH if name.startswith("grad_mlp") else PEX_BATCH
        x = rng.standard_normal((batch, GRAD_IN), dtype=np.float32)
        y = rng.integers(0, GRAD_CLASSES, size=(batch,)).astype(np.int32)
        w1 = rng.standard_normal((GRAD_IN, GRAD_HIDDEN), dtype=np.float32)
        w1 *= np.float32(1.0 / np.sqrt(GRAD_IN))
        b1 = rng.standard_normal((GRAD_HIDDEN,), dtype=np.float32) * np.float32(0.1)
        w2 = rng.standard_normal((GRAD_HIDDEN, GRAD_CLASSES), dtype=np.float32)
        w2 *= np.float32(1.0 / np.sqrt(GRAD_HIDDEN))
        b2 = rng.standard_normal((GRAD_CLASSES,), dtype=np.float32) * np.float32(0.1)
        return (x, y, w1, b1, w2, b2)
    if name == "newton_step_jit":
        # A scaled so A @ x stays O(1): exp neither overflows nor saturates.
        a = rng.standard_normal((NEWTON_M, NEWTON_N), dtype=np.float32)
        a *= np.float32(1.0 / np.sqrt(NEWTON_N))
        x = rng.standard_normal((NEWTON_N,), dtype=np.float32)
        return (a, x)
    if name in ("vmap_matvec_jit", "matvec_batched_jit"):
        # W scaled by 1/sqrt(n) so the products stay O(1).
        w = rng.standard_normal((MATVEC_N, MATVEC_N), dtype=np.float32)
        w *= np.float32(1.0 / np.sqrt(MATVEC_N))
        xs = rng.standard_normal((MATVEC_BATCH, MATVEC_N), dtype=np.float32)
        return (w, xs)
    if name in ("mlp_adam_step", "pmap_mlp_step_2dev", "mlp_step_global_1dev"):
        # x, y (int32 labels), then (W, b) per Dense layer in stax's layout.
        # The two pmap-study workloads share one global batch (and parameters),
        # so their checksums (the global loss after one step) agree too.
        batch = TRAIN_BATCH if name == "mlp_adam_step" else PMAP_GLOBAL_BATCH
        x = rng.standard_normal((batch, TRAIN_IN), dtype=np.float32)
        y = rng.integers(0, TRAIN_CLASSES, size=(batch,)).astype(np.int32)
        sizes = (TRAIN_IN, TRAIN_HIDDEN, TRAIN_HIDDEN, TRAIN_CLASSES)
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            params += [_glorot(rng, (fan_in, fan_out), fan_in, fan_out),
                       _small(rng, (fan_out,), 1e-2)]
        return (x, y, *params)
    if name == "convnet_step":
        # x (NHWC), y, then conv kernels HWIO with (1, 1, 1, C) biases and the
        # two Dense layers, all as stax's init_fun shapes them.
        x = rng.standard_normal((CONV_BATCH, CONV_HW, CONV_HW, 1), dtype=np.float32)
        y = rng.integers(0, TRAIN_CLASSES, size=(CONV_BATCH,)).astype(np.int32)
        c1, c2 = CONV_CH
        flat = CONV_POOL_HW * CONV_POOL_HW * c2
        params = [
            _glorot(rng, (3, 3, 1, c1), 9 * 1, 9 * c1), _small(rng, (1, 1, 1, c1), 1e-6),
            _glorot(rng, (3, 3, c1, c2), 9 * c1, 9 * c2), _small(rng, (1, 1, 1, c2), 1e-6),
            _glorot(rng, (flat, CONV_DENSE), flat, CONV_DENSE), _small(rng, (CONV_DENSE,), 1e-2),
            _glorot(rng, (CONV_DENSE, TRAIN_CLASSES), CONV_DENSE, TRAIN_CLASSES),
            _small(rng, (TRAIN_CLASSES,), 1e-2),
        ]
        return (x, y, *params)
    raise KeyError(name)


def _glorot(rng, shape, fan_in, fan_out):
    """Glorot-normal-scaled float32 weights (untruncated: any fixed draw will do)."""
    import numpy as np

    w = rng.standard_normal(shape, dtype=np.float32)
    return w * np.float32(np.sqrt(2.0 / (fan_in + fan_out)))


def _small(rng, shape, stddev):
    import numpy as np

    return rng.standard_normal(shape, dtype=np.float32) * np.float32(stddev)

"""torch oracle peer: eager CPU tensors. Run with bench/.venv-torch/bin/python.

    bench/.venv-torch/bin/python bench/peers/torch_w.py WORKLOAD

torch on CPU is synchronous, so there is nothing to block on; the *_sync
variant is therefore the same loop as the plain one. Gradients are disabled
(torch.inference_mode) so autograd bookkeeping is not part of the timing,
matching jax/purenn where eager ops record nothing.

``per_example_grads_vmap`` is the exception: it runs torch.func.vmap over
torch.func.grad, which needs autograd, so that workload enables gradients.

Jit workloads: torch.compile is deliberately not used. ``jit_dispatch_3op*``
run the same three ops eagerly, as a reference for the per-call cost only;
``trace_compile_mlp20`` and ``axpy_5000_jit`` are not run for torch ("n/a",
see workloads.py).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness  # noqa: E402


def versions():
    import numpy
    import torch

    return {"torch": torch.__version__, "numpy": numpy.__version__,
            "torch_threads": str(torch.get_num_threads())}


def build(name):
    import torch
    import workloads as W

    torch.set_grad_enabled(False)
    inputs = W.make_inputs_np(name)

    if name in ("eager_add_small", "eager_add_small_sync"):
        x = torch.from_numpy(inputs[0])
        y = torch.ones((W.SMALL_N,), dtype=torch.float32)

        def body(n):
            z = x
            for _ in range(n):
                z = x + y
            return z

        return body, lambda: (x + y).numpy()

    if name == "eager_chain10":
        x = torch.from_numpy(inputs[0])

        def chain(y):
            y = y * 1.0001
            y = y + 0.5
            y = torch.sin(y)
            y = y * 0.5
            y = y + 0.25
            y = torch.exp(y)
            y = y * 0.999
            y = y - 0.5
            y = torch.sin(y)
            y = y + 1.0
            return y

        def body(n):
            y = x
            for _ in range(n):
                y = chain(x)
            return y

        return body, lambda: chain(x).numpy()

    if name == "eager_add_block_pool":
        pool = [(torch.from_numpy(a.copy()), torch.from_numpy(b.copy())) for a, b in zip(*inputs)]
        m = len(pool) - 1  # a power of two minus one

        def body(n):  # CPU ops are synchronous: the result is ready when the op returns
            for i in range(n):
                x, y = pool[i & m]
                x + y
        return body, lambda: (pool[0][0] + pool[0][1]).numpy()

    if name == "eager_chain10_block_pool":
        pool = [torch.from_numpy(a.copy()) for a in inputs[0]]
        m = len(pool) - 1

        def chain(y):
            y = y * 1.0001
            y = y + 0.5
            y = torch.sin(y)
            y = y * 0.5
            y = y + 0.25
            y = torch.exp(y)
            y = y * 0.999
            y = y - 0.5
            y = torch.sin(y)
            y = y + 1.0
            return y

        def body(n):
            for i in range(n):
                chain(pool[i & m])
        return body, lambda: chain(pool[0]).numpy()

    if name == "matmul_2048":
        a = torch.from_numpy(inputs[0])
        b = torch.from_numpy(inputs[1])

        def body(n):
            for _ in range(n):
                c = torch.matmul(a, b)
            return c

        return body, lambda: torch.matmul(a, b).numpy()

    if name == "axpy_5000":
        x = torch.from_numpy(inputs[0])

        def f(x):
            return x * x + x * 2.0

        def body(n):
            for _ in range(n):
                z = f(x)
            return z

        return body, lambda: f(x).numpy()

    if name in ("jit_dispatch_3op", "jit_dispatch_3op_sync"):
        # Eager: three op dispatches per call, no compilation (reference only).
        x = torch.from_numpy(inputs[0])
        y = torch.from_numpy(inputs[1])

        def f3(x, y):
            return torch.sin(x) * y + 1.0

        def body(n):
            z = x
            for _ in range(n):
                z = f3(x, y)
            return z

        return body, lambda: f3(x, y).numpy()

    if name == "per_example_grads_vmap":
        import numpy as np
        from torch.func import grad, vmap

        # torch.func transforms need autograd, switched off above for the
        # other workloads; this one alone turns it back on.
        torch.set_grad_enabled(True)
        x, y = torch.from_numpy(inputs[0]), torch.from_numpy(inputs[1])
        params = dict(zip(("W1", "b1", "W2", "b2"),
                          (torch.from_numpy(a) for a in inputs[2:])))
        classes = torch.arange(W.GRAD_CLASSES, dtype=y.dtype)

        def loss(params, x, y):
            # The grad_mlp_* loss for ONE example: x (784,), y a scalar label.
            h = torch.clamp_min(torch.matmul(x, params["W1"]) + params["b1"], 0.0)
            logits = torch.matmul(h, params["W2"]) + params["b2"]
            m = torch.max(logits)
            lse = torch.log(torch.sum(torch.exp(logits - m))) + m
            onehot = (y == classes).to(torch.float32)
            return lse - torch.sum(onehot * logits)

        pex = vmap(grad(loss), in_dims=(None, 0, 0))

        def body(n):
            for _ in range(n):
                out = pex(params, x, y)
            return out

        def result():
            g = pex(params, x, y)
            return np.concatenate([g[k].detach().numpy().ravel() for k in sorted(g)])

        return body, result

    if name in ("mlp_adam_step", "convnet_step"):
        import numpy as np
        import torch.nn.functional as F
        from torch import nn

        # Training needs autograd, switched off above for the eager workloads.
        torch.set_grad_enabled(True)
        x, y = inputs[0], torch.from_numpy(inputs[1].astype(np.int64))
        if name == "mlp_adam_step":
            x = torch.from_numpy(x)
            w1, b1, w2, b2, w3, b3 = inputs[2:]
            model = nn.Sequential(
                nn.Linear(W.TRAIN_IN, W.TRAIN_HIDDEN), nn.ReLU(),
                nn.Linear(W.TRAIN_HIDDEN, W.TRAIN_HIDDEN), nn.ReLU(),
                nn.Linear(W.TRAIN_HIDDEN, W.TRAIN_CLASSES))
            # The shared parameters are in stax's layout: Linear weights are (out, in).
            shared = [w1.T, b1, w2.T, b2, w3.T, b3]

            def loss_fn(out, yb):
                return F.cross_entropy(out, yb)
        else:
            x = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))   # NHWC -> NCHW
            k1, c1, k2, c2, w3, b3, w4, b4 = inputs[2:]
            hw, ch = W.CONV_POOL_HW, W.CONV_CH[1]
            model = nn.Sequential(
                nn.Conv2d(1, W.CONV_CH[0], 3, padding="same"), nn.ReLU(),
                nn.Conv2d(W.CONV_CH[0], ch, 3, padding="same"), nn.ReLU(),
                nn.MaxPool2d(2, stride=1),   # stax's MaxPool((2, 2)) has stride 1
                nn.Flatten(), nn.Linear(hw * hw * ch, W.CONV_DENSE), nn.ReLU(),
                nn.Linear(W.CONV_DENSE, W.TRAIN_CLASSES), nn.LogSoftmax(dim=1))
            # HWIO kernels -> OIHW; (1, 1, 1, C) biases -> (C,); the first Dense's
            # rows from NHWC flattening order (h, w, c) to NCHW's (c, h, w).
            w3_nchw = w3.reshape(hw, hw, ch, -1).transpose(2, 0, 1, 3).reshape(hw * hw * ch, -1)
            shared = [k1.transpose(3, 2, 0, 1), c1.ravel(), k2.transpose(3, 2, 0, 1), c2.ravel(),
                      w3_nchw.T, b3, w4.T, b4]

            def loss_fn(out, yb):
                return F.nll_loss(out, yb)

        model_params = list(model.parameters())
        if [tuple(p.shape) for p in model_params] != [a.shape for a in shared]:
            raise RuntimeError(f"{name}: torch's parameter shapes differ from the shared ones")

        def fresh():
            with torch.no_grad():
                for p, a in zip(model_params, shared):
                    p.copy_(torch.from_numpy(np.ascontiguousarray(a)))
            return torch.optim.Adam(model.parameters(), lr=W.TRAIN_LR)

        def train_step(opt):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss

        state = [fresh()]

        def body(n):
            opt = state[0]
            for _ in range(n):
                loss = train_step(opt)
            return loss

        def result():
            # The loss after one step from the shared initial parameters
            # (resets the model; called after the timing).
            opt = fresh()
            train_step(opt)
            return train_step(opt).detach().numpy()

        return body, result

    raise KeyError(name)


if __name__ == "__main__":
    sys.exit(_harness.main("torch", build, versions))

"""The PyTorch side of bench/trainer.py's time-to-accuracy figure (issue 14): the digits MLP
trained by a plain eager PyTorch loop on exactly the data the trainer sees.

    bench/.venv-torch/bin/python bench/peers/train_loop_torch.py DATA.npz [--threads 2] [--target 0.97]

DATA.npz comes from `bench/peers/train_loop_purenn.py export` (run with the project's
interpreter): the training and test splits as `train.data` makes them, the batch order of every
epoch (`orders[e]`, the trainer's permutation), the MLP's initial parameters as the trainer
draws them (`param_k`: nn.Dense's `W[in, out]`, `b[out]`, layer by layer) and the
optimizer settings. The loop follows the trainer's step: batches of `batch_size` in that order,
the last partial one padded and masked, the masked mean softmax cross-entropy, Adam
(b1 0.9, b2 0.999, eps 1e-8) with the learning rate set before every step from the cosine decay
over all the run's steps (`lr * (1 + cos(pi * i / total)) / 2` at step i = 0, 1, ...). After each
epoch the whole test split is evaluated under `torch.no_grad()`.

Prints `ready` once the model and data are built, `epoch E test_accuracy A` after every epoch,
and a JSON line at the end. No `torch.compile`: eager, as a user's first loop would be.
"""
import argparse
import json
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--target", type=float, default=0.97)
    args = ap.parse_args(argv)
    try:
        result = run(args)
    except Exception as e:  # noqa: BLE001 -- reported to the runner as one JSON line
        result = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


def run(args):
    torch.set_num_threads(args.threads)
    z = np.load(args.data, allow_pickle=False)
    meta = json.loads(str(z["meta"]))
    if meta["optimizer"] != "adam" or meta["schedule"] != "cosine_decay":
        raise ValueError(f"this loop does Adam with cosine decay, the data asks for {meta['optimizer']} with "
                         f"{meta['schedule']}")
    n = len(z["train_y"])
    flat = lambda a: torch.from_numpy(np.ascontiguousarray(a.reshape(len(a), -1), dtype=np.float32))  # noqa: E731
    train_x, train_y = flat(z["train_x"]), torch.from_numpy(z["train_y"].astype(np.int64))
    test_x, test_y = flat(z["test_x"]), torch.from_numpy(z["test_y"].astype(np.int64))
    params = [z[f"param_{k}"] for k in range(sum(1 for name in z.files if name.startswith("param_")))]
    layers = []
    for k in range(0, len(params), 2):
        w, b = params[k], params[k + 1]
        lin = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b))
        layers += [lin, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    lr, total, batch_size = meta["learning_rate"], meta["total_steps"], meta["batch_size"]
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
    orders = z["orders"]
    print("ready", flush=True)

    step, history, reached = 0, [], None
    t0 = time.perf_counter()
    for epoch in range(meta["epochs"]):
        order = torch.from_numpy(orders[epoch].astype(np.int64))
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            real = len(idx)
            mask = torch.zeros(batch_size)
            mask[:real] = 1.0
            if real < batch_size:
                idx = torch.cat([idx, idx[:1].expand(batch_size - real)])
            x, y = train_x[idx], train_y[idx]
            for group in opt.param_groups:
                group["lr"] = lr * 0.5 * (1.0 + math.cos(math.pi * min(step, total) / total))
            opt.zero_grad(set_to_none=True)
            loss = (F.cross_entropy(model(x), y, reduction="none") * mask).sum() / mask.sum().clamp(min=1.0)
            loss.backward()
            opt.step()
            step += 1
            if step == total:
                break
        with torch.no_grad():
            acc = float((model(test_x).argmax(dim=1) == test_y).float().mean())
        print(f"epoch {epoch + 1} test_accuracy {acc:.6f}", flush=True)
        history.append(acc)
        if reached is None and acc >= args.target:
            reached = epoch + 1
    return {"ok": True, "epochs": meta["epochs"], "steps": step, "test_accuracy": history,
            "epochs_to_target": reached, "train_seconds": time.perf_counter() - t0,
            "threads": torch.get_num_threads(), "torch": torch.__version__}


if __name__ == "__main__":
    sys.exit(main())

"""torch worker of bench/dp_clipping.py (issue 15): (e) Opacus with grad_sample_mode="ghost" and
with its default hooks, (f) torch.func per-example gradients (vmap(grad)) clipped and summed, and
torch's non-private gradient as a reference; eager CPU, the same models and parameters as purenn
(bench/peers/_dp_common.py, converted to torch's layouts). Run with the torch oracle venv:

    bench/.venv-torch/bin/python bench/peers/dp_torch.py --model mlp --batch 256 --variants ref,e_ghost,e_hooks,f

Each step computes the clipped sum and stops there (no noise, no parameter update): for Opacus's
ghost mode, forward + the wrapped loss's backward (its two backward passes leave the clipped sum in
p.grad); for its hooks mode, forward + backward (per-sample gradients in p.grad_sample) +
`optimizer.clip_and_accumulate()` (the clipped sum in p.summed_grad). Opacus scales by
min(1, C / (||g_i|| + 1e-6)), so its checksum differs from the exact one in the 6th digit.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _dp_common as common  # noqa: E402

import numpy as np  # noqa: E402

VARIANTS = {"ref": "torch non-private", "e_ghost": "(e) Opacus ghost", "e_hooks": "(e) Opacus hooks",
            "f": "(f) torch.func vmap(grad) clipping"}


def main():
    args = common.parse_args()
    import warnings

    import torch
    from torch import nn

    warnings.filterwarnings("ignore")
    flat, x_np, labels = common.make_data(args.model, args.batch)
    conv = args.model == "convnet"
    C, B = args.clip, args.batch

    def build_model():
        if not conv:
            model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
            W1, b1, W2, b2, W3, b3 = flat
            weights = [W1.T, b1, W2.T, b2, W3.T, b3]
        else:
            model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                                  nn.MaxPool2d(2, stride=1), nn.Flatten(), nn.Linear(common.CONV_FLAT, 128), nn.ReLU(),
                                  nn.Linear(128, 10))
            K1, c1, K2, c2, W3, b3, W4, b4 = flat
            # HWIO -> OIHW; purenn flattens (H, W, C), torch (C, H, W)
            W3t = W3.reshape(27, 27, 64, 128).transpose(2, 0, 1, 3).reshape(common.CONV_FLAT, 128).T
            weights = [K1.transpose(3, 2, 0, 1), c1, K2.transpose(3, 2, 0, 1), c2, W3t, b3, W4.T, b4]
        with torch.no_grad():
            for p, w in zip(model.parameters(), weights, strict=True):
                p.copy_(torch.from_numpy(np.ascontiguousarray(w)))
        return model

    x = torch.from_numpy(x_np.transpose(0, 3, 1, 2).copy() if conv else x_np)
    y = torch.from_numpy(labels)

    def build(key):
        model = build_model()
        if key == "ref":
            def step():
                model.zero_grad(set_to_none=True)
                nn.functional.cross_entropy(model(x), y).backward()
                return [p.grad for p in model.parameters()]
            return step, lambda out: out, lambda g: [v.numpy() for v in g], None
        if key == "f":
            from torch.func import functional_call, grad, vmap
            params = {k: v.detach() for k, v in model.named_parameters()}

            def loss_one(p, xi, yi):
                return nn.functional.cross_entropy(functional_call(model, p, (xi[None],)), yi[None], reduction="sum")

            def step():
                g = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
                sq = sum(v.reshape(B, -1).pow(2).sum(1) for v in g.values())
                c = torch.clamp(C / sq.sqrt(), max=1.0)
                return [torch.tensordot(c, v, dims=1) for v in g.values()]
            return step, lambda out: out, lambda g: [v.numpy() for v in g], None
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        loader = DataLoader(TensorDataset(x, y), batch_size=B)
        criterion = nn.CrossEntropyLoss(reduction="sum")
        mode = "ghost" if key == "e_ghost" else "hooks"
        made = PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=loader, criterion=criterion,
                                            noise_multiplier=0.0, max_grad_norm=C, poisson_sampling=False,
                                            loss_reduction="sum", grad_sample_mode=mode)
        if mode == "ghost":
            pmodel, popt, pcrit, _ = made

            def step():
                popt.zero_grad(set_to_none=True)
                pcrit(pmodel(x), y).backward()
                return [p.grad for p in pmodel.parameters()]
        else:
            pmodel, popt, _ = made

            def step():
                popt.zero_grad(set_to_none=True)
                criterion(pmodel(x), y).backward()
                popt.clip_and_accumulate()
                return [p.summed_grad for p in popt.params]
        return step, lambda out: out, lambda g: [v.detach().numpy() for v in g], None

    def versions():
        import opacus
        return {"torch": torch.__version__, "opacus": opacus.__version__, "threads": torch.get_num_threads()}

    common.run_variants("torch", args, build, versions)


if __name__ == "__main__":
    main()

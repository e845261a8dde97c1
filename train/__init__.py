"""`train`: the YAML-configured trainer (`train CONFIG.yaml`) and its library form,
`train.fit(config) -> Result`. Its modules, in reading order: config, registry, data, step,
checkpoint, logs, loop, cli, and dp (DP-SGD, used by step and loop when `dp.enabled`); the design
is in docs/design.md ("The trainer", and "DP-SGD and privacy accounting" for dp)."""

__all__ = ["fit", "Result"]


def __getattr__(name):
    # imported on first use, so `train --help` and config errors do not wait for the core
    if name in __all__:
        from . import loop
        return getattr(loop, name)
    raise AttributeError(f"module 'train' has no attribute {name!r}")

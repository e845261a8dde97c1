"""Only the optional C extension lives here; everything else is in setup.cfg.

`core._jitfast` is jit's dispatch fast path in C. It is optional: without a C compiler the build
skips it and `core.api` uses the same path written in Python.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("core._jitfast", ["core/_jitfast.c"], optional=True)])

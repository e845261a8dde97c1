"""Global configuration flags, read from the environment once and changed with `update`.

`core.config.update("enable_x64", True)` switches on 64-bit types (also `PURENN_ENABLE_X64=1`).
JAX's spellings work too: every option JAX also has answers to `jax_<name>`
(`config.update("jax_enable_x64", True)`) and reads the environment variable `JAX_<NAME>`
(`JAX_ENABLE_X64=1`) when our `PURENN_<NAME>` is not set (ours wins when both are).
Every flag that changes how a program is traced or compiled is part of `config.trace_key()`, so a
cache keyed on it never serves a program built under other settings.

`update` is global (every thread sees it). The context managers `core.disable_jit()` and
`checking_leaks()` set their flag for the current thread only, as in JAX: a thread debugging
inside `disable_jit()` does not make other threads' jitted functions run op by op.
"""
import contextlib
import os
import sys
import threading

__all__ = ["config", "update", "read", "checking_leaks", "default_matmul_precision", "config_with_absl", "parse_flags_with_absl"]


def _env(name):
    """(variable name, value) of our `PURENN_<NAME>`, else JAX's `JAX_<NAME>` (so a JAX user's shell
    settings work unchanged); ours wins when both are set. (None, None) when neither is."""
    for var in ("PURENN_" + name, "JAX_" + name):
        value = os.environ.get(var)
        if value is not None:
            return var, value
    return None, None


def _env_bool(name, default):
    _, value = _env(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _env_str(name, default):
    _, value = _env(name)
    return default if value is None else value


def _env_number(name, default, kind, minimum):
    """An environment variable read as `kind` (int or float), at least `minimum`; unset: default."""
    var, raw = _env(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{var} must be {'an integer' if kind is int else 'a number'}, got {raw!r}") from None
    if not value >= minimum:
        raise ValueError(f"{var} must be >= {minimum}, got {raw!r}")
    return value


_UNSET = object()

# The names `default_matmul_precision` accepts: core.lax.Precision's aliases, as JAX's
MATMUL_PRECISION_STRINGS = ("default", "fastest", "bfloat16", "high", "bfloat16_3x", "tensorfloat32",
                            "highest", "float32")


class _ThreadFlags(threading.local):
    """The flags that context managers set in the current thread: name -> value (thread-local)."""

    def __init__(self):
        self.overrides = {}


def _context_flag(name):
    """A flag a context manager may set for one thread: this thread's value if one is set, else the
    global one."""
    def get(self):
        value = self._local.overrides.get(name, _UNSET)
        return self._values[name] if value is _UNSET else value
    return property(get, doc=f"The value of {name!r} in this thread.")


class Config:
    """The flags, with their defaults and documentation. Unknown names are errors."""

    _DEFAULTS = {
        "enable_x64": (lambda: _env_bool("ENABLE_X64", False),
                       "Enable 64-bit types (float64, int64, complex128); off by default as in JAX."),
        "debug_nans": (lambda: _env_bool("DEBUG_NANS", False),
                       "Raise FloatingPointError when a computation produces a NaN."),
        "debug_infs": (lambda: _env_bool("DEBUG_INFS", False),
                       "Raise FloatingPointError when a computation produces an Inf."),
        "disable_jit": (lambda: _env_bool("DISABLE_JIT", False),
                        "Run jitted functions op by op (for debugging)."),
        "numpy_rank_promotion": (lambda: _env_str("NUMPY_RANK_PROMOTION", "allow"),
                                 "'allow', 'warn' or 'raise' when NumPy functions broadcast arrays of "
                                 "different ranks (a (3,) bias against a (3, 4) array)."),
        "numpy_dtype_promotion": (lambda: _env_str("NUMPY_DTYPE_PROMOTION", "standard"),
                                  "'standard' (JAX's lattice) or 'strict' (no implicit promotion between "
                                  "different array dtypes; Python scalars still adapt)."),
        "check_tracer_leaks": (lambda: _env_bool("CHECK_TRACER_LEAKS", False),
                               "When a traced function returns, raise if a tracer it created is still "
                               "referenced (a global, a list, an attribute); see `checking_leaks`."),
        "compilation_cache_dir": (lambda: _env_str("COMPILATION_CACHE_DIR", None) or None,
                                  "A directory where compiled programs are kept across processes (the "
                                  "persistent compilation cache); None: off. Loading an entry runs its "
                                  "machine code: use a directory only you can write."),
        "persistent_cache_min_compile_time_secs": (
            lambda: _env_number("PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", 0.0, float, 0),
            "Only programs whose compile took at least this long are written to the persistent cache "
            "(default 0: all; loading even a small eager program is ~20x faster than compiling it)."),
        "compilation_cache_max_size": (lambda: _env_number("COMPILATION_CACHE_MAX_SIZE", 1 << 30, int, -1),
                                       "The persistent cache's size limit in bytes (default 1 GiB; -1: none); "
                                       "the least recently used entries go first."),
        "debug_key_reuse": (lambda: _env_bool("DEBUG_KEY_REUSE", False),
                            "Raise errors.KeyReuseError when a PRNG key is consumed twice (core/key_reuse.py)."),
        "default_matmul_precision": (
            lambda: _env_str("DEFAULT_MATMUL_PRECISION", None) or None,
            "The precision of float32 contractions (dot_general, conv) not given one: None, or one of "
            f"{list(MATMUL_PRECISION_STRINGS)} (see core.lax.Precision). No effect on CPU results."),
        "threefry_partitionable": (lambda: _env_bool("THREEFRY_PARTITIONABLE", False),
                                   "Derive random bits as JAX's newer scheme (one 64-bit counter per "
                                   "element, jax 0.10's default), so `core.random` gives jax's current "
                                   "values; off: JAX's classic scheme (our default)."),
        "platforms": (lambda: (os.environ.get("PURENN_PLATFORMS") or os.environ.get("PURENN_PLATFORM")
                                    or os.environ.get("JAX_PLATFORMS") or None),
                      "Comma-separated platforms to use, as JAX's `jax_platforms` ('cpu', 'cuda' or 'gpu'; "
                      "None: a GPU if a CUDA plugin is installed, else the CPU). Read when the backend "
                      "starts (the first computation); set it before that."),
    }
    _PLATFORM_NAMES = ("cpu", "cuda", "gpu")
    _CHOICES = {"numpy_rank_promotion": ("allow", "warn", "raise"),
                "numpy_dtype_promotion": ("standard", "strict")}
    # Flags that context managers set per thread (`_override`); read through these properties.
    _THREAD_LOCAL = ("disable_jit", "check_tracer_leaks", "default_matmul_precision")
    disable_jit = _context_flag("disable_jit")
    check_tracer_leaks = _context_flag("check_tracer_leaks")
    default_matmul_precision = _context_flag("default_matmul_precision")

    def __init__(self):
        self._values = {name: make() for name, (make, _) in self._DEFAULTS.items()}
        # flags are read on hot paths: plain attributes (the thread-local ones are properties)
        self.__dict__.update({k: v for k, v in self._values.items() if k not in self._THREAD_LOCAL})
        self._local = _ThreadFlags()
        self._lock = threading.RLock()  # updates, per-thread overrides and the cached trace key
        self._active_overrides = 0  # thread-local overrides in effect, in all threads together
        self._trace_key = None
        self._update_derived()

    def _canonical(self, name):
        """Our name for option `name`: JAX's spelling `jax_<name>` is an alias of every option JAX
        also has (`jax_enable_x64` is `enable_x64`)."""
        if isinstance(name, str) and name.startswith("jax_") and name[4:] in self._DEFAULTS:
            return name[4:]
        return name

    def update(self, name, value):
        """Set flag `name` to `value`, e.g. `config.update("enable_x64", True)`; JAX's spelling works
        too: `config.update("jax_enable_x64", True)`."""
        name = self._canonical(name)
        if name not in self._values:
            known = ", ".join(sorted(self._values))
            raise AttributeError(f"Unknown config option {name!r}; the options are: {known}.")
        choices = self._CHOICES.get(name)
        if choices is not None and value not in choices:
            raise ValueError(f"config option {name!r} must be one of {choices}, got {value!r}")
        if name == "compilation_cache_dir" and not (value is None or isinstance(value, (str, os.PathLike))):
            raise TypeError(f"config option 'compilation_cache_dir' must be a path or None, got {value!r}")
        if name == "compilation_cache_max_size" and (
                isinstance(value, bool) or not isinstance(value, int) or value < -1):
            raise ValueError("config option 'compilation_cache_max_size' must be a number of bytes >= 0, or -1 for "
                             f"no limit, got {value!r}")
        if name == "persistent_cache_min_compile_time_secs" and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0):
            raise ValueError("config option 'persistent_cache_min_compile_time_secs' must be a number of seconds "
                             f">= 0, got {value!r}")
        if name == "platforms":
            value = self._check_platforms(value)
        if name == "default_matmul_precision":
            value = _check_matmul_precision(value)
        with self._lock:
            self._values[name] = value
            if name not in self._THREAD_LOCAL:
                self.__dict__[name] = value
            self._update_derived()

    def _check_platforms(self, value):
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise TypeError(f"config option 'platforms' must be a comma-separated string such as 'cpu', or None, "
                                f"got {value!r}")
            unknown = [p for p in value.lower().split(",") if p.strip() not in self._PLATFORM_NAMES]
            if unknown:
                raise ValueError(f"config option 'platforms': unknown platform(s) {unknown}; the platforms are "
                                 f"{self._PLATFORM_NAMES}.")
        client = sys.modules.get("core.runtime.client")
        started = client is not None and client._state["backend"] is not None
        if self is config and started and value != self._values["platforms"]:
            raise RuntimeError("config option 'platforms' is read when the backend starts, and it has started "
                               "(a computation ran). Set it first thing in the program, or with the "
                               "JAX_PLATFORMS / PURENN_PLATFORMS environment variable.")
        return value

    def _update_derived(self):
        # one attribute the eager hot path reads to know whether any output check is on
        self.__dict__["check_outputs"] = self._values["debug_nans"] or self._values["debug_infs"]
        # a new token after every config change: fast-path entries remembered before it are stale
        self._base_token = object()
        self._publish()

    def _publish(self):
        """(Under `_lock`.) Set the attributes the fast paths read without locking. jit's fast path (api.py,
        _jitfast.c) runs a remembered executable only while `_jit_fast_token` is the token it was
        remembered under: None while jit must not be skipped (debug checks, disable_jit), and also
        while any thread has a context-manager override, so that a thread inside `disable_jit()`
        or `checking_leaks()` goes through the slow path, which reads its own flags. Other threads
        then take the slow path too, and get the same compiled results. The fast path itself stays
        one identity check, with no thread-local lookup. `_trace_key` (read by pmap's fast path) is
        likewise not cached while overrides are active."""
        off = self.check_outputs or self._values["disable_jit"] or self._active_overrides
        self.__dict__["_jit_fast_token"] = None if off else self._base_token
        self._trace_key = None

    @contextlib.contextmanager
    def _override(self, name, value):
        """Within the block, flag `name` (one of `_THREAD_LOCAL`) is `value` in this thread only."""
        if name not in self._THREAD_LOCAL:
            raise AttributeError(f"config option {name!r} cannot be set per thread.")
        overrides = self._local.overrides
        previous = overrides.get(name, _UNSET)
        with self._lock:
            overrides[name] = value
            self._active_overrides += 1
            self._publish()
        try:
            yield
        finally:
            with self._lock:
                if previous is _UNSET:
                    overrides.pop(name, None)
                else:
                    overrides[name] = previous
                self._active_overrides -= 1
                self._publish()

    def read(self, name):
        """The value of flag `name` (for a thread-local flag, this thread's value); `jax_<name>` too."""
        name = self._canonical(name)
        if name in self._THREAD_LOCAL:
            return getattr(self, name)
        return self._values[name]

    def __getattr__(self, name):
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        if values is not None and name.startswith("jax_") and name[4:] in values:
            return getattr(self, name[4:])  # JAX's spelling, e.g. config.jax_enable_x64
        raise AttributeError(f"Unknown config option {name!r}.")

    def trace_key(self):
        """A hashable summary of the flags that change how programs are built."""
        key = self._trace_key
        if key is None:
            with self._lock:
                # check_tracer_leaks is part of the key so that a cached trace never hides a leak;
                # it is this thread's value, so the key is cached only while no thread overrides it
                key = (self._values["enable_x64"], self._values["numpy_rank_promotion"],
                       self._values["numpy_dtype_promotion"], self.check_tracer_leaks,
                       self._values["debug_key_reuse"], self.default_matmul_precision,
                       self._values["threefry_partitionable"])
                if not self._active_overrides:
                    self._trace_key = key
        return key

    def parse_flags_with_absl(self, argv=None):
        """Apply the `--jax_<option>=<value>` command-line flags (and `--<option>=<value>`, our
        spelling) in `argv` (default `sys.argv`) to the config, as JAX's function of this name does
        for test programs. Booleans also take `--jax_enable_x64` and `--nojax_enable_x64`. Other
        arguments are left alone. absl is not needed: the flags are parsed here.

        Example:
            >>> cfg = Config()
            >>> cfg.parse_flags_with_absl(["prog", "--jax_numpy_rank_promotion=raise", "--other"])
            >>> cfg.numpy_rank_promotion
            'raise'
        """
        for arg in (sys.argv if argv is None else argv)[1:]:
            if not arg.startswith("--"):
                continue
            flag, has_value, raw = arg[2:].partition("=")
            negated = not has_value and flag.startswith("no") and self._canonical(flag[2:]) in self._DEFAULTS
            name = self._canonical(flag[2:] if negated else flag)
            if name not in self._DEFAULTS:
                continue
            self.update(name, self._parse_flag_value(name, raw if has_value else (not negated)))

    def _parse_flag_value(self, name, raw):
        """The value of option `name` from its command-line text `raw` (a bool for a bare flag)."""
        default = self._values[name]
        if isinstance(raw, bool) or isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"flag --jax_{name} takes true or false, got {raw!r}")
        if isinstance(raw, bool):
            raise ValueError(f"flag --jax_{name} needs a value: --jax_{name}=<value>")
        if name == "compilation_cache_max_size":
            return int(raw)
        if name == "persistent_cache_min_compile_time_secs":
            return float(raw)
        return None if raw.lower() == "none" and name in ("compilation_cache_dir", "platforms") else raw

    def config_with_absl(self):
        """Define absl flags `--jax_<option>` for every option (as JAX does), so a program run with
        `absl.app.run` takes them on its command line; each flag given there updates the config when
        absl parses the flags. Needs the `absl-py` package (ImportError naming it otherwise);
        `parse_flags_with_absl` works without it."""
        try:
            from absl import flags
        except ImportError:
            raise ImportError("config.config_with_absl() needs the absl-py package (pip install absl-py); "
                              "without it, config.parse_flags_with_absl() reads --jax_<option> flags from "
                              "sys.argv.") from None
        for name, (_, doc) in self._DEFAULTS.items():
            flag = "jax_" + name
            if flag in flags.FLAGS:
                continue
            default = self._values[name]
            if isinstance(default, bool):
                flags.DEFINE_bool(flag, default, doc)
            else:
                flags.DEFINE_string(flag, None if default is None else str(default), doc)

            def apply(value, name=name, flag=flag):
                if flags.FLAGS[flag].present:
                    self.update(name, value if isinstance(value, bool) or value is None
                                else self._parse_flag_value(name, value))
                return True
            flags.register_validator(flag, apply)

    def __repr__(self):
        return f"Config({self._values})"


config = Config()
update = config.update
read = config.read
config_with_absl = config.config_with_absl
parse_flags_with_absl = config.parse_flags_with_absl


def _check_matmul_precision(value):
    if value is not None and value not in MATMUL_PRECISION_STRINGS:
        raise ValueError(f"config option 'default_matmul_precision' must be None or one of "
                         f"{list(MATMUL_PRECISION_STRINGS)}, got {value!r}")
    return value


@contextlib.contextmanager
def default_matmul_precision(precision):
    """Within this block, contractions given no `precision=` (`lax.dot_general`, `jnp.matmul`,
    `jnp.einsum`, convolutions, ...) use `precision`, one of core.lax.Precision's names such as
    'highest' or 'tensorfloat32', in the current thread only (as JAX's context manager of this
    name). Functions jitted inside are traced again: the setting is part of the trace cache key.
    On CPU results do not change; the lowered program records the setting.

    Example:
        >>> with default_matmul_precision("highest"):
        ...     "HIGHEST" in core.jit(lambda a: a @ a).lower(core.numpy.ones((2, 2))).as_text()
        True
    """
    value = _check_matmul_precision(precision)
    with config._override("default_matmul_precision", value):
        yield


@contextlib.contextmanager
def checking_leaks():
    """Within this block, every traced function (`jit`, `make_jaxpr`, control-flow bodies) is checked
    for leaked tracers when it returns: a tracer it created that is still referenced from elsewhere
    (a global, a list, an object's attribute) raises `errors.LeakedTracerError` ("Leaked trace ...")
    naming each tracer and where it was created, instead of a later `UnexpectedTracerError`.

    The check runs `gc.collect()` after every trace, so tracing is slower, and a cached trace is not
    reused across the switch (the flag is part of the trace cache key). False positives are possible:
    anything that legitimately keeps a tracer alive for a moment after the trace returns (a debugger,
    a traceback object kept from an exception caught inside the function, another thread, a cache in
    user code) is reported as a leak. Like `config.update("check_tracer_leaks", True)`, but for the
    current thread only (other threads keep the global setting), as JAX's context managers are.

    Example:
        >>> with checking_leaks():
        ...     core.jit(lambda x: x * 2.0)(1.0)  # fine: nothing escapes
        Array(2., dtype=float32, weak_type=True)
    """
    with config._override("check_tracer_leaks", True):
        yield

"""purenn's version, `core.__version__` (setup.cfg reads it from here: one place)."""
__version__ = "0.1.0"
__version_info__ = tuple(int(part) for part in __version__.split("."))

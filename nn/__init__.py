"""`nn`: see the open issues; this package is built after the core."""

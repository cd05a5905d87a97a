"""Benchmarks: scripts that measure workbench, run with ``python -m benchmarks.<name>``."""

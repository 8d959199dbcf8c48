"""Benchmarks: printed figures, never timed assertions."""

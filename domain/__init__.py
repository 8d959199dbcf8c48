"""Pure game rules: the kernel every game implements, and one package per game.

Nothing in this package performs I/O, reads a clock or uses global randomness.
"""

"""A module whose helper tests/test_jit.py redefines (as a notebook cell run again)."""


def act(x):
    return x * 2.0


def user(x):
    return act(x) + 1.0

"""tests/helpers.py: the oracles themselves, against derivatives by hand."""

import numpy as np
from helpers import fd_grad


def test_fd_grad_of_a_fortran_ordered_array_is_the_gradient():
    """A Fortran-ordered x gave zeros: reshape(-1) was a copy, so neither the
    perturbation nor the result reached the arrays (session 11)."""
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3) + 0.5)
    f = lambda v: float(np.sum(v**3) + v[0, 1] * v[1, 2])  # noqa: E731
    want = 3 * x**2
    want[0, 1] += x[1, 2]
    want[1, 2] += x[0, 1]
    for given in (x, np.ascontiguousarray(x), x.T.copy(order="F").T):
        np.testing.assert_allclose(fd_grad(f, given), want, rtol=1e-7)

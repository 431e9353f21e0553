"""``linalg.contraction.contract``, the one evaluator of einsums (issue 17): large
float contractions follow a cached greedy path (NumPy's matmul), the rest the
plain loop. Values against a float64 NumPy oracle (float32 at rtol 1e-5) and
exact for integers; the plan is made once per (subscripts, shapes, dtypes)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

E = importlib.import_module("srcjax.primitives.linalg.contraction")

CASES = [
    ("bhtk,bhsk->bhts", [(4, 8, 32, 8), (4, 8, 32, 8)], True),
    ("btd,dhk->bhtk", [(4, 32, 64), (64, 8, 8)], True),
    ("bti,btj->bij", [(4, 32, 64), (4, 32, 64)], True),
    ("...ij,...jk->...ik", [(3, 40, 30), (30, 50)], True),
    ("ij,jk", [(64, 64), (64, 64)], True),
    ("...d,...d->", [(4, 64, 128), (4, 64, 128)], True),
    ("ij,jk->ik", [(3, 3), (3, 3)], False),  # tiny: plain loop
    ("i,j->ij", [(300,), (300,)], False),  # outer product: nothing summed
    ("ij,ij->ij", [(300, 300), (300, 300)], False),  # elementwise
    ("ii->i", [(200, 200)], False),  # one operand
    ("bti,ijc,btj->btc", [(4, 32, 16), (16, 16, 3), (4, 32, 16)], True),
]


def _ops(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return [rng.integers(-50, 50, size=s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _oracle(spec, ops):
    spec = E._explicit_ellipsis(spec, [o.shape for o in ops])
    return np.einsum(spec, *[o.astype(np.float64) for o in ops])


@pytest.mark.parametrize("spec,shapes,uses_path", CASES)
def test_float32_values_and_plan(spec, shapes, uses_path):
    ops = _ops(shapes, np.float32)
    got = E.contract(spec, *ops)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _oracle(spec, ops), rtol=1e-5, atol=1e-4)
    key = (spec, *[x for o in ops for x in (o.shape, o.dtype.num)])
    assert (E._PLANS[key][1] is not False) == uses_path


@pytest.mark.parametrize("spec,shapes,uses_path", CASES)
def test_integers_exact(spec, shapes, uses_path):
    ops = _ops(shapes, np.int64)
    ref = np.einsum(E._explicit_ellipsis(spec, [o.shape for o in ops]), *ops)
    got = E.contract(spec, *ops)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got, ref)


def test_plan_made_once(monkeypatch):
    ops = _ops([(2, 8, 32, 8), (2, 8, 32, 8)], np.float64, seed=1)
    E.contract("bhtk,bhsk->bhts", *ops)
    calls = []
    real = np.einsum_path
    monkeypatch.setattr(np, "einsum_path", lambda *a, **k: calls.append(a) or real(*a, **k))
    for _ in range(3):
        got = E.contract("bhtk,bhsk->bhts", *ops)
    assert calls == []
    np.testing.assert_allclose(got, np.einsum("bhtk,bhsk->bhts", *ops), rtol=1e-12, atol=1e-12)


def test_attention_grad_through_jit():
    # the cotangent einsums (ad.einsum_with_consts) go through the path too
    q, k = _ops([(2, 4, 32, 8), (2, 4, 32, 8)], np.float32, seed=2)

    def f(q, k):
        return jnp.sum(jnp.einsum("bhtk,bhsk->bhts", q, k) ** 2)

    gq, gk = srcjax.jit(srcjax.grad(f, argnums=(0, 1)))(q, k)
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    s = np.einsum("bhtk,bhsk->bhts", q64, k64)
    np.testing.assert_allclose(gq, 2 * np.einsum("bhts,bhsk->bhtk", s, k64), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(gk, 2 * np.einsum("bhts,bhtk->bhsk", s, q64), rtol=1e-5, atol=1e-4)


def test_three_operands_get_pairwise_steps():
    # NumPy's default memory limit left this as one three-operand loop (3.2 ms)
    x, b, y = _ops([(4, 32, 64), (64, 64, 3), (4, 32, 64)], np.float32, seed=3)
    got = E.contract("bti,ijc,btj->btc", x, b, y)
    key = ("bti,ijc,btj->btc", *[v for o in (x, b, y) for v in (o.shape, o.dtype.num)])
    assert len(E._PLANS[key][1]) == 3  # 'einsum_path' and two pairwise steps
    np.testing.assert_allclose(got, _oracle("bti,ijc,btj->btc", [x, b, y]), rtol=1e-5, atol=1e-4)


def test_blas_thread_count_restored():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    q, k = _ops([(4, 8, 32, 8), (4, 8, 32, 8)], np.float64, seed=4)
    before = [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    E.contract("bhtk,bhsk->bhts", q, k)
    assert [i["num_threads"] for i in threadpoolctl.threadpool_info()] == before


def test_np_einsum_is_called_by_contract_only():
    # (debt of session 14: ad/sums.py, linalg/triangular.py and linalg/solve.py
    # called np.einsum themselves, missing the path and the BLAS thread policy)
    import ast
    import os

    root = os.path.dirname(srcjax.__file__)
    home = os.path.join(root, "primitives", "linalg", "contraction.py")
    found = []
    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            if not f.endswith(".py") or path == home:
                continue
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                fn = node.func if isinstance(node, ast.Call) else None
                if (
                    isinstance(fn, ast.Attribute)
                    and fn.attr == "einsum"
                    and isinstance(fn.value, ast.Name)
                    and fn.value.id in ("np", "numpy")
                ):
                    found.append(f"{os.path.relpath(path, root)}:{node.lineno}")
    assert found == []


def test_sum_of_products_dot_form_without_vecdot(monkeypatch):
    # NumPy < 2 has no vecdot: the trailing-axes dot goes through contract
    sums = importlib.import_module("srcjax.primitives.ad.sums")
    monkeypatch.setattr(sums, "_VECDOT", None)
    x, y = _ops([(4, 5, 6), (4, 5, 6)], np.float32, seed=3)
    got = sums._sum_of_products(x, y, axis=(1, 2))
    want = np.sum(x.astype(np.float64) * y.astype(np.float64), axis=(1, 2))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)
    x, y = _ops([(3, 7), (3, 7)], np.float64, seed=4)
    np.testing.assert_allclose(sums._sum_of_products(x, y, axis=(1,)), np.sum(x * y, 1), rtol=1e-13)


@pytest.mark.parametrize(
    "xs,ys,matmul",
    [
        ((64, 1, 6, 6), (64, 6, 1, 6), True),  # R7: prod's second derivatives under vmap
        ((64, 6, 1, 6), (64, 1, 6, 6), True),
        ((3, 1, 4, 5), (3, 2, 1, 5), True),
        ((1, 1, 5), (2, 3, 5), True),
        ((2, 3, 5), (1, 1, 5), True),
        ((2, 1, 5), (1, 3, 5), True),
        ((4, 1, 2, 1, 5), (4, 3, 1, 2, 5), False),  # x's, y's, x's axes interleaved
        ((0, 1, 5), (0, 2, 5), False),
    ],
)
def test_sum_of_products_over_the_last_axis_of_an_outer_product(xs, ys, matmul):
    sums = importlib.import_module("srcjax.primitives.ad.sums")
    x, y = _ops([xs, ys], np.float32, seed=5)
    assert (sums._outer_form(x, y) is not None) == matmul
    for axis in (-1, (len(xs) - 1,)):
        got = sums._sum_of_products(x, y, axis=axis)
        want = np.sum(x.astype(np.float64) * y.astype(np.float64), axis=-1)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _substitution(t, b, lower):
    """Row-by-row substitution in float64 Python: the oracle of a singular solve."""
    m, n = b.shape
    x = np.zeros((m, n))
    rows = range(m) if lower else range(m - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in rows:
            for k in range(n):
                r = b[i, k] - sum(t[i, j] * x[j, k] for j in range(m))
                x[i, k] = r / t[i, i]
    return x


@pytest.mark.parametrize("lower", [True, False])
def test_singular_triangular_solve_substitutes_through_contract(lower, x64):
    from srcjax.scipy.linalg import solve_triangular

    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 4))
    a = np.tril(a) if lower else np.triu(a)
    a[1, 1] = 0.0  # singular: inf/NaN as XLA's triangular solve gives
    b = rng.standard_normal((4, 2))
    got = np.asarray(solve_triangular(a, b, lower=lower))
    want = _substitution(a, b, lower)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_adjugate_derivative_through_contract():
    # d adj(a) [t] for invertible a: adj = det(a) inv(a), so the derivative is
    # det(a) (tr(inv(a) t) inv(a) - inv(a) t inv(a)), in float64
    solve = importlib.import_module("srcjax.primitives.linalg.solve")
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 4, 4))
    t = rng.standard_normal((2, 4, 4))
    inv = np.linalg.inv(a)
    det = np.linalg.det(a)[:, None, None]
    tr = np.trace(inv @ t, axis1=-2, axis2=-1)[:, None, None]
    want = det * (tr * inv - inv @ t @ inv)
    np.testing.assert_allclose(np.asarray(solve._adjugate_d(a, t)), want, rtol=1e-9, atol=1e-12)


# -- small contractions that are matrix products: one np.matmul (_AsMatmul) ----------

MATMUL_CASES = [
    ("zhtd,zhsd->zhts", [(4, 4, 8, 4), (4, 4, 8, 4)], True),  # user8 p01's attention
    ("zhts,zhsd->zhtd", [(4, 4, 8, 8), (4, 4, 8, 4)], True),
    ("zhts,zhtd->zhsd", [(4, 4, 8, 8), (4, 4, 8, 4)], True),
    ("abc,cdb->dab", [(4, 5, 6), (6, 7, 5)], True),  # labels in any order
    ("ij,jk->ki", [(12, 9), (9, 10)], True),  # transposed output
    ("ij,j->i", [(40, 30), (30,)], True),
    ("ij,ij->i", [(30, 20), (30, 20)], True),  # a row-wise dot
    ("ij,jk->ik", [(3, 3), (3, 3)], False),  # tiny: the plain loop
    ("ij,kj->", [(20, 20), (20, 20)], False),  # j summed, i and k summed alone
    ("ii,ij->j", [(20, 20), (20, 20)], False),  # a diagonal
    ("bij,bjk->bik", [(1, 8, 8), (5, 8, 8)], False),  # b broadcasts from 1
]


@pytest.mark.parametrize("spec,shapes,as_matmul", MATMUL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_small_matrix_products_as_one_matmul(spec, shapes, as_matmul, dtype):
    ops = _ops(shapes, np.float64, seed=5)
    if dtype is np.complex128:
        ops = [o + 1j * p for o, p in zip(ops, _ops(shapes, np.float64, seed=6))]
    ops = [o.astype(dtype) for o in ops]
    got = E.contract(spec, *ops)
    want = np.einsum(spec, *[o.astype(np.complex128) for o in ops])
    assert got.dtype == np.einsum(spec, *ops).dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    key = (spec, *[x for o in ops for x in (o.shape, o.dtype.num)])
    assert (type(E._PLANS[key][1]) is E._AsMatmul) == as_matmul

"""The run-time helpers of jit-generated CPU code (srcjax/backends/runtime.py)."""

import numpy as np
import pytest

from srcjax.backends import runtime


def test_chunk_bytes_grow_with_threads_within_bounds():
    assert runtime.default_chunk_bytes(1) == 512 * 1024
    assert runtime.default_chunk_bytes(2) == 512 * 1024
    assert runtime.default_chunk_bytes(8) == 1 << 20
    assert runtime.default_chunk_bytes(16) == 2 << 20
    assert runtime.default_chunk_bytes(256) == 4 << 20


def test_thread_count_is_at_least_one_and_at_most_the_machine():
    assert 1 <= runtime._usable_cores() <= (__import__("os").cpu_count() or 1)


@pytest.mark.parametrize("nthreads", [1, 3, 8])
def test_chunked_sum_is_independent_of_the_thread_count(monkeypatch, nthreads):
    monkeypatch.setattr(runtime, "NUM_THREADS", nthreads)
    x = np.random.default_rng(0).standard_normal(100_003).astype(np.float32)

    def region(lo, hi):
        return np.sum(x[lo:hi])

    got = runtime.run_chunked(region, n=x.size, chunk=1000, reduce="sum", dtype=np.float32)
    want = np.sum(x.astype(np.float64))
    assert abs(float(got) - want) <= 1e-5 * np.sum(np.abs(x))
    monkeypatch.setattr(runtime, "NUM_THREADS", 1)
    one = runtime.run_chunked(region, n=x.size, chunk=1000, reduce="sum", dtype=np.float32)
    assert got == one  # partials combine in chunk order, whatever the threads did


def test_chunked_elementwise_writes_every_element_once(monkeypatch):
    monkeypatch.setattr(runtime, "NUM_THREADS", 4)
    x = np.arange(10_007, dtype=np.float64)
    out = np.zeros_like(x)

    def region(lo, hi, t0):
        np.multiply(x[lo:hi], 2.0, out=t0)
        np.add(t0, 1.0, out=out[lo:hi])

    runtime.run_chunked(region, n=x.size, chunk=512, scratch=(np.float64,))
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_pool_hands_a_dead_buffer_out_again_but_never_a_live_one():
    runtime.clear_pool()
    shape = (runtime.POOL_MIN_BYTES // 4,)
    a = runtime.empty(shape, np.float32)
    a[:] = 1
    b = runtime.empty(shape, np.float32)
    assert not np.shares_memory(a, b)  # a is alive
    addr = a.__array_interface__["data"][0]
    del a
    c = runtime.empty(shape, np.float32)
    assert c.__array_interface__["data"][0] == addr
    runtime.clear_pool()


def test_donated_reuses_only_a_matching_writeable_buffer():
    x = np.ones((4, 5), np.float32)
    assert runtime.donated(x, (4, 5), np.float32) is x
    assert runtime.donated(x, (5, 4), np.float32) is not x
    assert runtime.donated(x, (4, 5), np.float64) is not x
    x.flags.writeable = False
    assert runtime.donated(x, (4, 5), np.float32) is not x
    assert runtime.donated(x.T.copy().T, (4, 5), np.float32) is not x

"""Buffer assignment: big intermediates of a graph live in one workspace kept
between calls (no fresh, page-faulting allocations per call); results never
share memory with it, concurrent calls each get their own, and padded
intermediates are re-zeroed on every call."""
from __future__ import annotations

import threading

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.compile import device_put, jit

rng = np.random.default_rng(2)


def model(x, w):
    h = xnp.tanh(x @ w)                  # dot result: an intermediate (workspace)
    g = (h @ w.T).reshape(-1)            # reshape of an intermediate: a result
    return g, xnp.sum(h, axis=0)


def reference(x, w):
    h = np.tanh(x @ w)
    return (h @ w.T).reshape(-1), h.sum(axis=0)


def test_intermediates_use_the_workspace_and_results_are_their_own_arrays():
    x = rng.standard_normal((128, 256)).astype(np.float32)
    w = rng.standard_normal((256, 256)).astype(np.float32) / 16
    compiled = jit(model).lower(x, w).compile()
    assert compiled.program.workspace_bytes >= x.shape[0] * w.shape[1] * 4   # h lives there
    first = [np.asarray(r).copy() for r in compiled(x, w)]
    g, s = compiled(x, w)
    for got, want in zip((g, s), reference(x, w)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4)
    np.asarray(g)[:] = 7.0                      # a result is the caller's: writing it ...
    again = compiled(x, w)                      # ... changes nothing the next call computes
    for a, b in zip(again, first):
        np.testing.assert_array_equal(np.asarray(a), b)
    (ws,) = compiled.program.idle_workspaces()
    for r in again:
        buf = np.asarray(r.buffer if hasattr(r, "buffer") else r)
        assert not np.shares_memory(buf, ws)


def test_concurrent_calls_get_separate_workspaces():
    w = rng.standard_normal((256, 256)).astype(np.float32) / 16
    xs = [rng.standard_normal((128, 256)).astype(np.float32) for _ in range(6)]
    f = jit(model)
    f(xs[0], w)
    results: dict[int, tuple] = {}

    def work(i: int) -> None:
        for _ in range(5):
            results[i] = tuple(np.asarray(r) for r in f(xs[i], w))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(xs):
        for got, want in zip(results[i], reference(x, w)):
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


def test_padded_intermediates_are_zeroed_on_every_call():
    # the transpose result is tiled (padding elements) and big enough for the workspace
    x = rng.standard_normal((300, 130)).astype(np.float32)

    def f(x):
        return lax.pad(xnp.exp(x).T, 0.0, ((1, 1, 0), (0, 2, 0))) * 2

    g = jit(f, out_layouts="{1,0:T(8,128)}")
    for _ in range(3):
        got = np.asarray(g(x))
        np.testing.assert_allclose(got, np.pad(np.exp(x).T, ((1, 1), (0, 2))) * 2, rtol=1e-6)
    xt = device_put(x, "{0,1:T(8,128)}")
    h = jit(lambda x: xnp.sum(xnp.exp(x).T @ x, axis=0), in_layouts="{0,1:T(8,128)}")
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(h(xt)), (np.exp(x).T @ x).sum(axis=0), rtol=2e-4)


# ------------------------------------------------------------------ loop bodies
# Intermediates of loop bodies, branches and calls live in the workspace too
# (a fresh buffer per iteration page-faults); what outlives an iteration (the
# new carry, even when it is a bitcast of an intermediate) has its own buffer.

W = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
X = rng.standard_normal((128, 256)).astype(np.float32)


def loop_body(source: str, header: str) -> str:
    """The lines of generated source inside the last loop starting with ``header``."""
    lines = source.splitlines()
    start = max(i for i, line in enumerate(lines) if line.strip().startswith(header))
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body)


def big_allocations(source: str) -> list[str]:
    """Fresh buffers of 64 KiB or more in generated source (f32 elements)."""
    import re
    return [n for n in re.findall(r"(?:empty|zeros)_buf\((\d+)", source) if int(n) * 4 >= 1 << 16]


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4)


def test_loop_body_intermediates_use_the_workspace():
    def f(x, w):
        return lax.fori_loop(0, 4, lambda i, c: xnp.tanh(c @ w) * 0.5 + c, x)

    compiled = jit(f).lower(X, W).compile()
    loop_text = loop_body(compiled.source, "for it")  # fori_loop: a scan
    assert "ws[" in loop_text and not big_allocations(loop_text)  # none per iteration
    want = X
    for _ in range(4):
        want = np.tanh(want @ W) * 0.5 + want
    for _ in range(2):
        _close(compiled(X, W), want)


def test_a_carry_that_is_a_bitcast_of_an_intermediate_is_copied():
    # the new carry is the dot's buffer seen through a reshape: the next
    # iteration's dot would overwrite the buffer it reads
    def f(x, w):
        return lax.fori_loop(0, 3, lambda i, c: (c.reshape(128, 256) @ w).reshape(-1),
                             x.reshape(-1))

    want = X @ W @ W @ W
    for _ in range(2):
        _close(jit(f)(X, W), want.reshape(-1))


def test_branches_nested_loops_and_scans_in_a_loop_body():
    def body(i, c):
        c = lax.cond(i % 2 == 0, lambda c: xnp.tanh(c @ W), lambda c: (c @ W) * 0.5, c)
        inner = lax.fori_loop(0, 2, lambda j, d: (d @ W).reshape(d.shape) + 1.0, c)
        carry, ys = lax.scan(lambda k, row: (k + xnp.sum(row), row * 2.0), 0.0, inner)
        return inner + carry * 1e-3 + ys[::-1] * 1e-3

    want = X.astype(np.float64)
    w = W.astype(np.float64)
    for i in range(3):
        want = np.tanh(want @ w) if i % 2 == 0 else (want @ w) * 0.5
        for _ in range(2):
            want = want @ w + 1.0
        want = want + want.sum() * 1e-3 + want[::-1] * 2e-3
    for _ in range(2):
        _close(jit(lambda x: lax.fori_loop(0, 3, body, x))(X), want)


def test_a_tuple_carry_of_intermediates_is_copied():
    def body(i, t):
        h = lax.get_tuple_element(t, 0) @ W      # an intermediate, held by the new tuple
        return lax.tuple([h.reshape(-1).reshape(128, 256), h * 0.5])

    def f(x):
        t = lax.fori_loop(0, 3, body, lax.tuple([x, x]))
        return lax.get_tuple_element(t, 0), lax.get_tuple_element(t, 1)

    a, b = jit(f)(X)
    _close(a, X @ W @ W @ W)
    _close(b, X @ W @ W @ W * 0.5)


def test_new_carries_rotate_between_two_slots_and_results_are_the_callers():
    # the loop's result is a workspace slot: the caller gets a copy, which a
    # later call must not overwrite
    def f(x, w):
        y = x @ w                           # a result: the loop's initial carry
        return y, lax.fori_loop(0, 5, lambda i, c: xnp.tanh(c @ w), y)

    g = jit(f)
    compiled = g.lower(X, W).compile()
    buffers = [convert(a) for convert, a in zip(compiled._converters, (X, W))]
    raw = compiled.program.run(buffers, ())             # never hands out the workspace
    (ws,) = compiled.program.idle_workspaces()
    assert not any(np.shares_memory(r, ws) for r in raw)
    first = g(X, W)[1]
    kept = np.asarray(first).copy()
    second = g(X * 2, W)[1]
    np.testing.assert_array_equal(np.asarray(first), kept)
    want = X @ W
    for _ in range(5):
        want = np.tanh(want @ W)
    _close(first, want)
    assert not np.shares_memory(np.asarray(first), np.asarray(second))


def test_carries_that_swap_positions_are_copied():
    # position 1 rotates; position 0 takes the old position-1 buffer, which
    # the iteration after next would overwrite
    def f(a, b):
        return lax.fori_loop(0, 5, lambda i, c: (c[1], c[0] @ W), (a, b))

    a, b = X, X[::-1].copy()
    for _ in range(5):
        a, b = b, a @ W
    got = jit(f)(X, X[::-1].copy())
    _close(got[0], a)
    _close(got[1], b)


def test_scan_carries_rotate_and_ys_are_stacked():
    def f(x, xs):
        return lax.scan(lambda c, row: (xnp.tanh(c @ W) + row, xnp.sum(c)), x, xs)

    xs = rng.standard_normal((6, 256)).astype(np.float32)
    compiled = jit(f).lower(X, xs).compile()
    assert not big_allocations(loop_body(compiled.source, "for it"))
    c, ys = X.astype(np.float64), []
    for row in xs:
        ys.append(c.sum())
        c = np.tanh(c @ W) + row
    got_c, got_ys = compiled(X, xs)
    _close(got_c, c)
    np.testing.assert_allclose(np.asarray(got_ys), ys, rtol=1e-3)


def test_values_bound_by_name_are_copied_when_a_loop_carries_them():
    # a call's tuple result holds the callee's intermediates (workspace
    # slices): carried as it is, the next iteration would overwrite it
    def body(i, c):
        t = lax.call(lambda c: lax.tuple([lax.rev(c, (0,))]), c)  # rev reads what it writes
        return lax.get_tuple_element(t, 0)

    want = X[::-1]
    _close(jit(lambda x: lax.fori_loop(0, 3, body, x))(X), want)

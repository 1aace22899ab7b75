"""jax.numpy beyond the basics, as the API docs' examples use it: einsum in
its operand-list form and with optimize=, roll with a traced shift,
where/nonzero/unique/argwhere with size=, sort/argsort/lexsort,
searchsorted, digitize, bincount with length, histogram, convolve and
correlate, polynomials, statistics, set operations, vectorize with a
signature, linalg variety and fft."""


def main(jax):
    import jax.numpy as jnp

    out = {}
    a = jnp.arange(6.0).reshape(2, 3)
    b = jnp.arange(12.0).reshape(3, 4)
    out["einsum_sublist"] = jnp.einsum(a, [0, 1], b, [1, 2], [0, 2])
    out["einsum_sublist_implicit"] = jnp.einsum(a, [0, 1], a, [0, 1])
    out["einsum_sublist_ellipsis"] = jnp.einsum(jnp.ones((2, 2, 3)), [Ellipsis, 1], b, [1, 2],
                                                [Ellipsis, 2])
    out["einsum_optimize"] = jnp.einsum("ij,jk,kl->il", a, b, jnp.ones((4, 2)),
                                        optimize="optimal")
    out["einsum_outer"] = jnp.einsum("i,j->ij", jnp.arange(3.0), jnp.arange(2.0))
    out["einsum_jit"] = jax.jit(lambda x, y: jnp.einsum(x, [1, 0], y, [1, 2]))(a.T, b.T[:3])

    x = jnp.arange(8)
    out["roll_traced"] = jax.jit(lambda v, s: jnp.roll(v, s))(x, 3)
    out["roll_traced_neg"] = jax.jit(lambda v, s: jnp.roll(v, s))(x, -10)
    out["roll_traced_axis"] = jax.jit(lambda v, s: jnp.roll(v, s, axis=1))(
        x.reshape(2, 4), jnp.int32(1))
    out["roll_multi"] = jnp.roll(x.reshape(2, 4), (1, 2), axis=(0, 1))
    out["roll_none"] = jnp.roll(x.reshape(2, 4), 3)
    out["roll_vmap"] = jax.vmap(jnp.roll)(x.reshape(2, 4), jnp.array([1, 3]))

    v = jnp.array([3, 0, 5, 0, 2, 7])
    out["where_size"] = jax.jit(lambda v: jnp.where(v > 1, size=5, fill_value=-1))(v)
    out["nonzero_size"] = jax.jit(lambda v: jnp.nonzero(v, size=3))(v)
    out["flatnonzero"] = jnp.flatnonzero(v)
    out["argwhere_size"] = jnp.argwhere(v.reshape(2, 3) > 2, size=4, fill_value=9)
    out["unique_size"] = jax.jit(lambda v: jnp.unique(v, size=6, fill_value=-1))(v)
    uniq = jnp.unique(jnp.array([4, 1, 4, 2, 1, 4]), return_index=True, return_inverse=True,
                      return_counts=True)
    out["unique_all"] = tuple(uniq)
    out["unique_values"] = jnp.unique_values(jnp.array([3, 1, 3]))
    out["unique_counts"] = tuple(jnp.unique_counts(jnp.array([3, 1, 3])))

    keys = jnp.array([[1, 1, 0, 0], [3, 2, 1, 2]])
    out["lexsort"] = jnp.lexsort(keys)
    out["lexsort_tuple"] = jnp.lexsort((jnp.array([2, 1, 2, 1]), jnp.array([0, 0, 1, 1])))
    out["sort_axis_none"] = jnp.sort(a[::-1], axis=None)
    out["sort_desc"] = jnp.sort(jnp.array([3.0, 1.0, 2.0]), descending=True)
    out["argsort_axis0"] = jnp.argsort(jnp.array([[3, 1], [1, 2], [2, 0]]), axis=0)
    out["partition"] = jnp.partition(jnp.array([5, 1, 4, 2, 3]), 2)[2]
    out["argpartition"] = jnp.sort(jnp.argpartition(jnp.array([5, 1, 4, 2, 3]), 2)[:2])
    grid = jnp.array([0.0, 1.0, 2.5, 4.0])
    q = jnp.array([-1.0, 1.0, 3.0, 5.0])
    out["searchsorted"] = (jnp.searchsorted(grid, q), jnp.searchsorted(grid, q, side="right"),
                           jnp.searchsorted(grid, q, method="compare_all"))
    out["digitize"] = (jnp.digitize(q, grid), jnp.digitize(q, grid, right=True))
    out["bincount"] = jax.jit(lambda c: jnp.bincount(c, length=6))(jnp.array([0, 1, 1, 3, 3, 3]))
    out["bincount_w"] = jnp.bincount(jnp.array([0, 2, 2]), weights=jnp.array([0.5, 1.0, 2.0]))
    data = jnp.array([0.1, 0.4, 0.45, 0.8, 1.0, 0.2])
    out["histogram"] = jnp.histogram(data, bins=4, range=(0.0, 1.0))
    out["histogram_density"] = jnp.histogram(data, bins=jnp.array([0.0, 0.5, 1.0]),
                                             density=True)
    out["histogram2d"] = jnp.histogram2d(data, data[::-1], bins=2)[0]
    out["histogram_bin_edges"] = jnp.histogram_bin_edges(data, bins=3)

    sig = jnp.array([1.0, 2.0, 3.0, 4.0])
    ker = jnp.array([0.25, 0.5, 0.25])
    out["convolve"] = (jnp.convolve(sig, ker), jnp.convolve(sig, ker, mode="valid"),
                       jnp.convolve(sig, ker, mode="same"))
    out["correlate"] = jnp.correlate(sig, jnp.array([1.0, -1.0]), mode="full")
    p = jnp.array([2.0, -3.0, 1.0])
    out["polyval"] = jnp.polyval(p, jnp.array([0.0, 1.0, 2.0]))
    t = jnp.arange(5.0)
    out["polyfit"] = jnp.polyfit(t, 2 * t ** 2 - 3 * t + 1, 2)
    out["polymul"] = (jnp.polymul(p, jnp.array([1.0, 1.0])), jnp.polyadd(p, jnp.ones(2)),
                      jnp.polyder(p), jnp.polyint(p))
    out["roots"] = jnp.sort(jnp.roots(jnp.array([1.0, -3.0, 2.0])).real)
    out["poly"] = jnp.poly(jnp.array([1.0, 2.0]))
    out["interp"] = jnp.interp(jnp.array([0.5, 1.5, 9.0]), jnp.array([0.0, 1.0, 2.0]),
                               jnp.array([0.0, 10.0, 0.0]))

    m = jnp.array([[1.0, 2.0, 7.0], [4.0, 3.0, 0.5], [2.0, 8.0, 1.0], [5.0, 5.0, 5.0]])
    out["stats"] = (jnp.median(m, axis=0), jnp.percentile(m, 75.0, axis=1),
                    jnp.quantile(m, jnp.array([0.1, 0.5]), method="nearest"),
                    jnp.var(m, ddof=1), jnp.std(m, axis=0), jnp.average(m, axis=1,
                                                                      weights=jnp.arange(3.0)))
    out["cov"] = (jnp.cov(m.T), jnp.corrcoef(m[:, 0], m[:, 1]))
    out["nanfns"] = (jnp.nanmean(jnp.array([1.0, jnp.nan, 3.0])),
                     jnp.nansum(jnp.array([[1.0, jnp.nan], [2.0, 3.0]]), axis=0),
                     jnp.nanargmax(jnp.array([jnp.nan, 2.0, 1.0])),
                     jnp.nanstd(jnp.array([1.0, jnp.nan, 3.0])))
    out["diff_grad"] = (jnp.diff(sig, n=2), jnp.ediff1d(sig, to_begin=0.0),
                        jnp.gradient(sig ** 2), jnp.trapezoid(sig ** 2, dx=0.5))
    out["setops"] = (jnp.intersect1d(jnp.array([1, 3, 4, 3]), jnp.array([3, 1, 2, 1])),
                     jnp.union1d(jnp.array([-1, 0, 1]), jnp.array([-2, 0, 2])),
                     jnp.setdiff1d(jnp.array([1, 2, 3, 2, 4]), jnp.array([3, 4, 5])),
                     jnp.setxor1d(jnp.array([1, 2, 3]), jnp.array([2, 3, 4])))

    @jnp.vectorize
    def clipped_relu(x, upper=3.0):
        return jnp.minimum(jnp.maximum(x, 0.0), upper)
    out["vectorize"] = clipped_relu(jnp.array([[-1.0, 2.0], [5.0, 1.0]]))
    pairwise = jnp.vectorize(lambda u, w: jnp.dot(u, w), signature="(n),(n)->()")
    out["vectorize_sig"] = pairwise(jnp.ones((4, 3)), jnp.arange(3.0))
    out["apply_along_axis"] = jnp.apply_along_axis(lambda r: r.max() - r.min(), 1, m)
    out["select_choose"] = (jnp.select([sig < 2, sig > 3], [sig * 10, -sig], default=0.0),
                            jnp.choose(jnp.array([0, 1, 0]), [jnp.arange(3), 10 * jnp.arange(3)]))
    out["indices"] = (jnp.triu_indices(3, k=1), jnp.tril_indices_from(jnp.ones((2, 2))),
                      jnp.diag_indices(2), jnp.unravel_index(jnp.array([5, 7]), (2, 4)),
                      jnp.ravel_multi_index((jnp.array([1, 0]), jnp.array([2, 3])), (2, 4)))
    out["put_take"] = (jnp.take(sig, jnp.array([0, 5]), mode="clip"),
                       jnp.take(sig, jnp.array([0, 5]), mode="fill", fill_value=-1.0),
                       jnp.put(sig, jnp.array([0, 2]), jnp.array([9.0, 8.0]), inplace=False))

    # linalg variety
    A = jnp.array([[4.0, -2.0, 1.0], [-2.0, 4.0, -2.0], [1.0, -2.0, 4.0]])
    out["linalg"] = (jnp.linalg.matrix_rank(m), jnp.linalg.cond(A), jnp.trace(A),
                     jnp.linalg.multi_dot([A, A, jnp.ones(3)]),
                     jnp.linalg.tensorsolve(A, jnp.ones(3)), jnp.linalg.norm(A, "fro"),
                     jnp.linalg.norm(A, jnp.inf), jnp.linalg.norm(sig, 1),
                     jnp.linalg.vector_norm(m, axis=0), jnp.linalg.matrix_norm(A, ord="nuc"),
                     jnp.linalg.cross(jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0])),
                     jnp.linalg.outer(sig[:2], sig[:3]), jnp.linalg.matrix_transpose(m).shape,
                     jnp.linalg.vecdot(m, m), jnp.linalg.diagonal(A))
    w = jnp.linalg.eigvals(jnp.array([[2.0, 1.0], [0.0, 3.0]]))
    out["eigvals"] = jnp.sort(w.real)
    ev, evec = jnp.linalg.eig(jnp.array([[2.0, 0.0], [0.0, 3.0]]))
    out["eig"] = (jnp.sort(ev.real), jnp.abs(evec).sum())
    out["svdvals"] = jnp.linalg.svdvals(m)
    sign, logdet = jnp.linalg.slogdet(A)
    out["slogdet_inv"] = (sign, logdet, jnp.linalg.inv(A) @ A)
    out["tensordot"] = (jnp.tensordot(a, b, axes=1), jnp.tensordot(a, a, axes=([0, 1], [0, 1])),
                        jnp.inner(sig, sig), jnp.vdot(a, a), jnp.matmul(a, b).shape)

    # fft
    s = jnp.cos(2 * jnp.pi * jnp.arange(8) / 8.0)
    out["fft"] = jnp.fft.fft(s)
    out["rfft"] = jnp.fft.rfft(s)
    out["irfft"] = jnp.fft.irfft(jnp.fft.rfft(s), n=8)
    out["ifft"] = jnp.fft.ifft(jnp.fft.fft(s)).real
    out["fft2"] = jnp.fft.fft2(a)
    out["fftn_axes"] = jnp.fft.fftn(jnp.ones((2, 3, 4)), axes=(1, 2)).shape
    out["fftfreq"] = (jnp.fft.fftfreq(8, d=0.5), jnp.fft.rfftfreq(8), jnp.fft.fftshift(x),
                      jnp.fft.ifftshift(x))
    out["fft_norm"] = jnp.fft.fft(s, norm="ortho")
    out["fft_grad"] = jax.grad(lambda z: jnp.sum(jnp.abs(jnp.fft.rfft(z)) ** 2))(s)
    return out

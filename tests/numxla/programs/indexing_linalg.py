"""NumPy idioms as JAX users write them: slicing, fancy and boolean-mask
indexing, .at[] updates, sorting and take_along_axis, einsum, and
jnp.linalg's solve/inv/slogdet/eigh/svd/qr/norm, eagerly and under jit."""


def main(jax):
    import numpy as onp
    jnp = jax.numpy

    x = jnp.arange(12.0).reshape(3, 4)
    v = jnp.array([3.0, 1.0, 2.0, 5.0, 4.0])
    idx = jnp.array([0, 2, 2])
    out = {}
    out["every_other"] = v[::2]
    out["reversed"] = v[::-1]
    out["fancy"] = x[idx]
    out["fancy2"] = x[idx, jnp.array([1, 3, 0])]
    out["newaxis"] = x[:, None, 1].shape
    out["ellipsis"] = x[..., -1]
    out["bool_mask"] = v[v > 2.5]                     # eager only: data-dependent shape
    out["at_set"] = v.at[1].set(10.0)
    out["at_add_dup"] = jnp.zeros(4).at[jnp.array([0, 1, 1, 3])].add(1.0)
    out["at_mul"] = v.at[::2].multiply(2.0)
    out["at_min"] = v.at[jnp.array([0, 4])].min(0.5)
    out["at_get_oob"] = v.at[jnp.array([1, 7])].get(mode="fill", fill_value=-1.0)
    out["np_at"] = jnp.asarray(onp.ones(3)).at[0].set(5.0)
    out["argsort"] = jnp.argsort(v)
    out["sort_desc"] = jnp.sort(v)[::-1]
    out["take_along"] = jnp.take_along_axis(x, jnp.argsort(-x, axis=1), axis=1)
    out["argmax_axis"] = jnp.argmax(x, axis=0)
    out["einsum_ij"] = jnp.einsum("ij,kj->ik", x, x)
    out["einsum_trace"] = jnp.einsum("ii", x[:, :3])
    out["einsum_batch"] = jnp.einsum("bi,bij->bj", x[:, :2], jnp.ones((3, 2, 5)))
    out["top_k"] = jax.lax.top_k(v, 2)
    out["unique"] = jnp.unique(jnp.array([3, 1, 3, 2, 1]))
    out["nonzero_size"] = jnp.nonzero(v > 2, size=4, fill_value=-1)[0]
    out["cumsum_rev"] = jnp.cumsum(v[::-1])
    out["meshgrid"] = jnp.meshgrid(jnp.arange(2), jnp.arange(3))[0]
    out["concat"] = jnp.concatenate([v, v[:2]])
    out["tile"] = jnp.tile(jnp.array([1, 2]), 3)
    out["roll"] = jnp.roll(v, 2)
    out["clip"] = jnp.clip(v, 2, 4)
    out["isin"] = jnp.isin(jnp.array([1, 2, 3]), jnp.array([2, 3]))

    @jax.jit
    def scatter_rows(m, rows, vals):
        return m.at[rows].add(vals)
    out["jit_scatter"] = scatter_rows(x, jnp.array([2, 0]), jnp.ones((2, 4)))

    @jax.jit
    def dynamic(m, i):
        return jax.lax.dynamic_slice(m, (i, 1), (2, 2)), m[i], jax.lax.dynamic_update_slice(
            m, jnp.zeros((1, 2)), (i, i))
    out["dynamic"] = dynamic(x, 1)

    a = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    b = jnp.array([1.0, 2.0, 3.0])
    out["solve"] = jnp.linalg.solve(a, b)
    out["inv"] = jnp.linalg.inv(a)
    out["slogdet"] = jnp.linalg.slogdet(a)
    out["det"] = jnp.linalg.det(a)
    w, q = jnp.linalg.eigh(a)
    out["eigh_w"] = w
    out["eigh_recon"] = (q * w) @ q.T
    u, s, vt = jnp.linalg.svd(x, full_matrices=False)
    out["svd_s"] = s
    out["svd_recon"] = (u * s) @ vt
    qq, rr = jnp.linalg.qr(a)
    out["qr_recon"] = qq @ rr
    out["norms"] = (jnp.linalg.norm(x), jnp.linalg.norm(x, axis=1), jnp.linalg.norm(a, ord=2))
    out["lstsq"] = jnp.linalg.lstsq(x.T, jnp.ones(4))[0]
    out["pinv"] = jnp.linalg.pinv(x) @ x
    out["matrix_power"] = jnp.linalg.matrix_power(a, 3)
    out["cholesky"] = jnp.linalg.cholesky(a)
    out["jit_solve_grad"] = jax.jit(jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, b))))(a)
    out["grad_slogdet"] = jax.grad(lambda a: jnp.linalg.slogdet(a)[1])(a)
    out["eigh_grad"] = jax.grad(lambda a: jnp.linalg.eigh(a)[0][-1])(a)
    out["outer"] = jnp.outer(b, b[:2])
    out["kron"] = jnp.kron(jnp.eye(2), jnp.ones((2, 2)))
    return out

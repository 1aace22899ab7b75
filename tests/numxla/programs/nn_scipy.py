"""jax.nn and jax.scipy as their API docs call them: activations,
one_hot (with axis and out-of-range labels), softmax/log_softmax with
where=, logsumexp with b= and return_sign, standardize,
dot_product_attention with masks and bias, initializers, and a sweep of
jax.scipy.special, jax.scipy.stats distributions and jax.scipy.linalg."""


def main(jax):
    import jax.numpy as jnp
    from jax import nn
    from jax.scipy import linalg as sla
    from jax.scipy import special, stats

    out = {}
    x = jnp.linspace(-3.0, 3.0, 7)
    out["activations"] = (nn.relu(x), nn.relu6(x * 3), nn.sigmoid(x), nn.softplus(x),
                          nn.silu(x), nn.swish(x), nn.gelu(x), nn.gelu(x, approximate=False),
                          nn.elu(x), nn.celu(x, alpha=0.5), nn.selu(x), nn.leaky_relu(x, 0.1),
                          nn.hard_tanh(x), nn.hard_sigmoid(x), nn.hard_swish(x),
                          nn.log_sigmoid(x), nn.soft_sign(x), nn.mish(x), nn.squareplus(x),
                          nn.sparse_plus(x), nn.tanh(x))
    out["glu"] = nn.glu(jnp.arange(8.0).reshape(2, 4) / 4)
    out["relu_grad0"] = jax.grad(nn.relu)(0.0)
    labels = jnp.array([0, 2, 5, -1])
    out["one_hot"] = nn.one_hot(labels, 3)
    out["one_hot_axis"] = nn.one_hot(jnp.array([1, 0]), 3, axis=0, dtype=jnp.int32)
    logits = jnp.array([[1.0, 2.0, 3.0, 4.0], [2.0, -1.0, 0.0, 5.0]])
    mask = jnp.array([[True, True, False, True], [False, True, True, True]])
    out["softmax"] = nn.softmax(logits, axis=-1)
    out["softmax_where"] = nn.softmax(logits, where=mask)
    out["log_softmax_where"] = nn.log_softmax(logits, axis=1, where=mask)
    out["softmax_axis0"] = nn.softmax(logits, axis=0)
    out["softmax_grad"] = jax.grad(lambda l: nn.softmax(l)[0, 1])(logits)
    out["logsumexp"] = (nn.logsumexp(logits, axis=1), special.logsumexp(logits, b=0.5),
                        special.logsumexp(jnp.array([1.0, 2.0]), b=jnp.array([1.0, -2.0]),
                                          return_sign=True),
                        special.logsumexp(logits, axis=0, keepdims=True))
    out["standardize"] = nn.standardize(logits, axis=-1)
    out["normalize_eps"] = nn.standardize(logits, axis=0, epsilon=1.0)

    # attention
    B, T, S, N, H = 1, 3, 4, 2, 4
    q = jnp.linspace(-1.0, 1.0, B * T * N * H).reshape(B, T, N, H)
    k = jnp.cos(jnp.arange(B * S * N * H, dtype=jnp.float32)).reshape(B, S, N, H)
    v = jnp.sin(jnp.arange(B * S * N * H, dtype=jnp.float32)).reshape(B, S, N, H)
    out["attention"] = nn.dot_product_attention(q, k, v)
    attn_mask = jnp.tril(jnp.ones((T, S), dtype=jnp.bool_))
    out["attention_mask"] = nn.dot_product_attention(q, k, v, mask=attn_mask[None, None])
    out["attention_bias_scale"] = nn.dot_product_attention(
        q, k, v, bias=jnp.ones((1, N, T, S)) * jnp.arange(S), scale=0.5)
    out["attention_causal"] = nn.dot_product_attention(q, k[:, :T], v[:, :T], is_causal=True)

    # initializers (deterministic ones, and shapes of the random ones)
    key = jax.random.PRNGKey(0)
    init = nn.initializers
    out["init_det"] = (init.zeros(key, (2, 2)), init.ones(key, (3,)),
                       init.constant(-0.5)(key, (2,)), init.orthogonal()(key, (3, 3)).shape,
                       init.glorot_uniform()(key, (4, 5)).shape,
                       init.he_normal(in_axis=0, out_axis=1)(key, (3, 2)).dtype.name,
                       init.variance_scaling(2.0, "fan_in", "truncated_normal")(
                           key, (8, 4)).shape, init.lecun_normal()(key, (2, 2),
                                                                   jnp.float32).shape)

    # scipy.special
    z = jnp.array([0.5, 1.0, 2.5, 4.0])
    out["special"] = (special.gammaln(z), special.digamma(z), special.polygamma(1, z),
                      special.betaln(z, 2.0), special.erf(z - 2), special.erfc(z),
                      special.erfinv(jnp.array([-0.5, 0.0, 0.9])), special.expit(z - 2),
                      special.logit(jnp.array([0.1, 0.5, 0.9])), special.xlogy(0.0, 0.0),
                      special.xlogy(z, z), special.xlog1py(z, z), special.entr(z / 5),
                      special.i0e(z), special.i1e(z), special.i0(z), special.i1(z),
                      special.ndtr(z - 2), special.ndtri(jnp.array([0.1, 0.5, 0.975])),
                      special.log_ndtr(jnp.array([-10.0, 0.0, 3.0])),
                      special.gammainc(2.0, z), special.gammaincc(2.0, z),
                      special.betainc(2.0, 3.0, z / 5), special.zeta(z + 1, 1.0),
                      special.multigammaln(z + 2, 2), special.gamma(z), special.factorial(4.0),
                      special.rel_entr(z, z[::-1]), special.kl_div(z, z[::-1]),
                      special.spence(z), special.exp1(z), special.expi(z),
                      special.expn(2, z), special.erfcx(z - 2), special.logsumexp(z),
                      special.softmax(z), special.log_softmax(z))
    out["bessel"] = special.bessel_jn(jnp.array([5.0, 7.5, 12.0]), v=2)
    out["digamma_grad"] = jax.grad(special.gammaln)(2.5)

    # scipy.stats
    pts = jnp.array([-1.0, 0.0, 0.5, 2.0])
    out["norm"] = (stats.norm.logpdf(pts, 0.5, 2.0), stats.norm.pdf(pts), stats.norm.cdf(pts),
                   stats.norm.ppf(jnp.array([0.05, 0.5, 0.99])), stats.norm.logcdf(pts),
                   stats.norm.sf(pts), stats.norm.isf(jnp.array([0.2])))
    pos = jnp.array([0.2, 1.0, 3.0])
    out["continuous"] = (stats.t.logpdf(pts, df=3.0), stats.beta.logpdf(pos / 4, 2.0, 3.0),
                         stats.gamma.logpdf(pos, 2.0, scale=0.5), stats.expon.logpdf(pos, 0.1),
                         stats.laplace.logpdf(pts, 0.0, 2.0), stats.cauchy.logpdf(pts),
                         stats.logistic.logpdf(pts), stats.uniform.logpdf(pts, -1.0, 2.0),
                         stats.chi2.logpdf(pos, 3.0), stats.truncnorm.logpdf(pts, -1.0, 1.0),
                         stats.gumbel_r.logpdf(pts, 0.5), stats.pareto.logpdf(pos + 1, 2.0),
                         stats.gennorm.logpdf(pts, 1.5), stats.vonmises.logpdf(pts, 2.0),
                         stats.gamma.cdf(pos, 2.0), stats.beta.cdf(pos / 4, 2.0, 3.0))
    ks = jnp.array([0, 1, 3])
    out["discrete"] = (stats.poisson.logpmf(ks, 2.0), stats.poisson.cdf(ks, 2.0),
                       stats.bernoulli.logpmf(ks[:2], 0.3), stats.geom.logpmf(ks + 1, 0.4),
                       stats.binom.logpmf(ks, 5, 0.3), stats.nbinom.logpmf(ks, 3, 0.5),
                       stats.betabinom.logpmf(ks, 5, 2.0, 3.0))
    mean = jnp.array([0.0, 1.0])
    cov = jnp.array([[2.0, 0.3], [0.3, 1.0]])
    out["multivariate"] = (
        stats.multivariate_normal.logpdf(jnp.array([[0.5, 0.5], [1.0, -1.0]]), mean, cov),
        stats.multivariate_normal.pdf(jnp.array([0.0, 0.0]), mean, cov),
        stats.dirichlet.logpdf(jnp.array([0.2, 0.3, 0.5]), jnp.array([1.0, 2.0, 3.0])),
        stats.multinomial.logpmf(jnp.array([1, 2, 0]), 3, jnp.array([0.2, 0.5, 0.3])))
    out["describe"] = (stats.mode(jnp.array([1, 2, 2, 3, 3, 3])).mode,
                       stats.rankdata(jnp.array([3.0, 1.0, 2.0, 2.0])),
                       stats.sem(pts), stats.gaussian_kde(pts).evaluate(jnp.array([0.0, 1.0])))
    out["logpdf_grad"] = jax.grad(lambda m: stats.norm.logpdf(1.0, m, 2.0))(0.5)

    # scipy.linalg
    A = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    b = jnp.array([1.0, 2.0, 3.0])
    c_and_lower = sla.cho_factor(A)
    out["cho"] = (sla.cho_solve(c_and_lower, b), sla.cholesky(A, lower=True))
    lu_piv = sla.lu_factor(A)
    out["lu"] = (sla.lu_solve(lu_piv, b), sla.lu(A)[0] @ sla.lu(A)[1] @ sla.lu(A)[2])
    L = jnp.tril(A)
    out["triangular"] = (sla.solve_triangular(L, b, lower=True),
                         sla.solve_triangular(L, b, trans=1, lower=True),
                         sla.solve_triangular(L.T, b, lower=False, unit_diagonal=True))
    out["expm"] = (sla.expm(jnp.array([[0.0, 1.0], [-1.0, 0.0]])), sla.expm(A / 4))
    out["misc"] = (sla.block_diag(jnp.ones((1, 2)), 2 * jnp.ones((2, 1))), sla.det(A),
                   sla.inv(A), sla.solve(A, b, assume_a="pos"), sla.eigh(A)[0],
                   sla.svd(A, compute_uv=False), sla.qr(A)[1].shape, sla.sqrtm(A).real,
                   sla.polar(A)[1], sla.toeplitz(jnp.array([1.0, 2.0, 3.0])),
                   sla.hessenberg(A).shape)
    out["expm_frechet_grad"] = jax.grad(lambda t: jnp.sum(sla.expm(t * A / 4)))(1.0)
    return out

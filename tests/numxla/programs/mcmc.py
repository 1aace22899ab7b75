"""Bayesian logistic regression sampled with random-walk Metropolis in
lax.scan, several chains with vmap, using jax.scipy.stats and
jax.scipy.special, as probabilistic-programming examples do."""


def main(jax):
    jnp, random, lax = jax.numpy, jax.random, jax.lax
    special, stats = jax.scipy.special, jax.scipy.stats

    key = random.PRNGKey(0)
    k_x, k_w, k_y, k_chain = random.split(key, 4)
    n, d = 40, 3
    X = random.normal(k_x, (n, d))
    true_w = jnp.array([1.5, -2.0, 0.5])
    y = random.bernoulli(k_y, special.expit(X @ true_w))

    def log_posterior(w):
        logits = X @ w
        log_lik = jnp.sum(y * jax.nn.log_sigmoid(logits) + (1 - y) * jax.nn.log_sigmoid(-logits))
        log_prior = jnp.sum(stats.norm.logpdf(w, 0.0, 2.0))
        return log_lik + log_prior

    def mh_step(state, key):
        w, logp = state
        k1, k2 = random.split(key)
        proposal = w + 0.3 * random.normal(k1, w.shape)
        logp_new = log_posterior(proposal)
        accept = jnp.log(random.uniform(k2)) < logp_new - logp
        w = jnp.where(accept, proposal, w)
        logp = jnp.where(accept, logp_new, logp)
        return (w, logp), (w, accept)

    @jax.jit
    def run_chain(key, w0):
        keys = random.split(key, 60)
        _, (ws, accepts) = lax.scan(mh_step, (w0, log_posterior(w0)), keys)
        return ws, accepts

    chain_keys = random.split(k_chain, 3)
    ws, accepts = jax.vmap(run_chain, in_axes=(0, None))(chain_keys, jnp.zeros(d))
    # a few scipy names on fixed inputs
    z = jnp.array([-1.0, 0.0, 2.0])
    return {
        "y_mean": jnp.mean(y),
        "posterior_mean": jnp.mean(ws[:, 20:], axis=(0, 1)),
        "accept_rate": jnp.mean(accepts),
        "last": ws[:, -1],
        "log_posterior_true": log_posterior(true_w),
        "grad_log_posterior": jax.grad(log_posterior)(true_w),
        "logsumexp": special.logsumexp(z),
        "logsumexp_b": special.logsumexp(z, b=jnp.array([1.0, 2.0, 0.5])),
        "gammaln": special.gammaln(jnp.array([0.5, 3.0, 10.0])),
        "digamma": special.digamma(jnp.array([0.5, 3.0])),
        "erf": special.erf(z),
        "xlogy": special.xlogy(jnp.array([0.0, 2.0]), jnp.array([0.0, 3.0])),
        "logit": special.logit(jnp.array([0.25, 0.5])),
        "norm_cdf": stats.norm.cdf(z),
        "norm_ppf": stats.norm.ppf(jnp.array([0.1, 0.5, 0.9])),
        "mvn_logpdf": stats.multivariate_normal.logpdf(z[:2], jnp.zeros(2),
                                                       jnp.array([[1.0, 0.3], [0.3, 2.0]])),
        "bernoulli_logpmf": stats.bernoulli.logpmf(jnp.array([0, 1]), 0.3),
        "poisson_logpmf": stats.poisson.logpmf(jnp.array([0, 3]), 2.0),
        "gamma_logpdf": stats.gamma.logpdf(jnp.array([0.5, 2.0]), 2.0),
        "beta_logpdf": stats.beta.logpdf(jnp.array([0.2, 0.7]), 2.0, 3.0),
        "t_logpdf": stats.t.logpdf(z, 3.0),
    }

"""Gaussian-process regression: an RBF kernel, Cholesky factorisation and
triangular solves, the log marginal likelihood and its gradient with respect
to the (log) hyperparameters, after JAX's examples/gaussian_process_regression.py."""


def main(jax):
    jnp, random = jax.numpy, jax.random
    scipy_linalg = jax.scipy.linalg

    def cov_map(cov_func, xs, xs2=None):
        if xs2 is None:
            return jax.vmap(lambda x: jax.vmap(lambda y: cov_func(x, y))(xs))(xs)
        return jax.vmap(lambda x: jax.vmap(lambda y: cov_func(x, y))(xs))(xs2).T

    def softplus(x):
        return jnp.logaddexp(x, 0.)

    def exp_quadratic(x1, x2):
        return jnp.exp(-jnp.sum((x1 - x2) ** 2))

    def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
        noise = softplus(params["noise"])
        amp = softplus(params["amplitude"])
        ls = softplus(params["lengthscale"])
        ymean = jnp.mean(y)
        y = y - ymean
        x = x / ls
        train_cov = amp * cov_map(exp_quadratic, x) + jnp.eye(x.shape[0]) * (noise + 1e-6)
        chol = jnp.linalg.cholesky(train_cov)
        kinvy = scipy_linalg.solve_triangular(chol.T, scipy_linalg.solve_triangular(
            chol, y, lower=True))
        if compute_marginal_likelihood:
            log2pi = jnp.log(2. * 3.1415)
            ml = jnp.sum(-0.5 * jnp.dot(y.T, kinvy) - jnp.sum(jnp.log(jnp.diag(chol)))
                         - (x.shape[0] / 2.) * log2pi)
            ml -= jnp.sum(-0.5 * jnp.log(2 * 3.1415) - jnp.log(amp) - jnp.log(amp) ** 2 * 0.5)
            return -ml
        if xtest is not None:
            xtest = xtest / ls
        cross_cov = amp * cov_map(exp_quadratic, x, xtest)
        mu = jnp.dot(cross_cov.T, kinvy) + ymean
        v = scipy_linalg.solve_triangular(chol, cross_cov, lower=True)
        var = amp * cov_map(exp_quadratic, xtest) - jnp.dot(v.T, v)
        return mu, var

    marginal_likelihood = jax.jit(lambda p, x, y: gp(p, x, y, compute_marginal_likelihood=True))
    grad_fun = jax.jit(jax.grad(lambda p, x, y: gp(p, x, y, compute_marginal_likelihood=True)))
    predict = jax.jit(lambda p, x, y, xt: gp(p, x, y, xt))

    params = {"amplitude": jnp.zeros((1, 1)), "noise": jnp.zeros((1, 1)) - 5.,
              "lengthscale": jnp.zeros((1, 1))}
    momentums = {k: p * 0. for k, p in params.items()}
    scales = {k: p * 0. + 1. for k, p in params.items()}
    lr, c = 0.01, 0.9

    key = random.PRNGKey(10)
    numpts = 12
    x = (random.uniform(key, shape=(numpts, 1)) * 4.) - 2.
    y = jnp.sin(x[:, 0] * 2.) + 0.1 * random.normal(random.fold_in(key, 1), (numpts,))
    xtest = jnp.linspace(-2., 2., 6)[:, None]

    trace = []
    for i in range(8):
        grads = grad_fun(params, x, y)
        for k in params:
            momentums[k] = 0.9 * momentums[k] + 0.1 * grads[k][0]
            scales[k] = 0.9 * scales[k] + 0.1 * grads[k][0] ** 2
            params[k] -= lr * momentums[k] / jnp.sqrt(scales[k] + 1e-5)
        trace.append(marginal_likelihood(params, x, y))
    mu, var = predict(params, x, y, xtest)
    # the same factorisation through cho_factor/cho_solve
    K = cov_map(exp_quadratic, x) + 0.1 * jnp.eye(numpts)
    alpha = scipy_linalg.cho_solve(scipy_linalg.cho_factor(K, lower=True), y)
    return {
        "neg_log_ml": jnp.stack(trace),
        "params": params,
        "mu": mu,
        "var_diag": jnp.diag(var),
        "alpha_head": alpha[:4],
        "K_logdet": jnp.linalg.slogdet(K)[1],
    }

"""Automatic differentiation variational inference in the style of JAX's
examples/advi.py: a diagonal-Gaussian posterior fitted to Neal's funnel by
maximising a Monte Carlo ELBO, samples drawn with the reparameterisation
trick, the ELBO batched over PRNG keys with vmap(in_axes=(0, None, None)),
jax.scipy.stats.norm densities, example_libraries.optimizers' Adam, and the
fitted density evaluated on a grid with nested vmap."""


def main(jax):
    from functools import partial

    import jax.numpy as jnp
    import jax.scipy.stats.norm as norm
    from jax import jit, grad, lax, random, vmap
    from jax.example_libraries import optimizers

    def diag_gaussian_sample(rng, mean, log_std):
        # reparameterised: a function of (mean, log_std) that gradients flow through
        return mean + jnp.exp(log_std) * random.normal(rng, mean.shape)

    def diag_gaussian_logpdf(x, mean, log_std):
        return jnp.sum(vmap(norm.logpdf)(x, mean, jnp.exp(log_std)))

    def elbo(logprob, rng, mean, log_std):
        sample = diag_gaussian_sample(rng, mean, log_std)
        return logprob(sample) - diag_gaussian_logpdf(sample, mean, log_std)

    def batch_elbo(logprob, rng, params, num_samples):
        rngs = random.split(rng, num_samples)
        vectorized_elbo = vmap(partial(elbo, logprob), in_axes=(0, None, None))
        return jnp.mean(vectorized_elbo(rngs, *params))

    def funnel_log_density(params):
        return norm.logpdf(params[0], 0, jnp.exp(params[1])) + \
            norm.logpdf(params[1], 0, 1.35)

    num_samples = 20
    D = 2

    @jit
    def objective(params, t):
        rng = random.PRNGKey(t)
        return -batch_elbo(funnel_log_density, rng, params, num_samples)

    init_mean = jnp.zeros(D)
    init_std = jnp.zeros(D)
    init_params = (init_mean, init_std)
    opt_init, opt_update, get_params = optimizers.adam(step_size=0.1)
    opt_state = opt_init(init_params)

    @jit
    def update(i, opt_state):
        params = get_params(opt_state)
        gradient = grad(objective)(params, i)
        return opt_update(i, gradient, opt_state)

    objectives = []
    for t in range(30):
        opt_state = update(t, opt_state)
        if t % 5 == 0:
            objectives.append(objective(get_params(opt_state), t))
    mean, log_std = get_params(opt_state)

    # the target and the fitted densities on a grid, as the example plots them
    xlimits, ylimits, num_ticks = (-2.0, 2.0), (-4.0, 2.0), 5
    x = jnp.linspace(*xlimits, num=num_ticks)
    y = jnp.linspace(*ylimits, num=num_ticks)
    X, Y = jnp.meshgrid(x, y)
    xy = jnp.stack([X.ravel(), Y.ravel()], axis=1)
    target = jnp.exp(vmap(funnel_log_density)(xy)).reshape(X.shape)
    fitted = jnp.exp(vmap(lambda p: diag_gaussian_logpdf(p, mean, log_std))(xy)).reshape(
        X.shape)
    grid = vmap(vmap(lambda a, b: funnel_log_density(jnp.array([a, b])), (0, None)),
                (None, 0))(x, y)
    samples = vmap(diag_gaussian_sample, in_axes=(0, None, None))(
        random.split(random.PRNGKey(0), 4), mean, log_std)

    # a lax.scan version of the same loop: the whole optimisation jitted at once
    def scan_step(state, i):
        return update(i, state), objective(get_params(state), i)
    _, scanned = lax.scan(scan_step, opt_init(init_params), jnp.arange(5))
    return {"objectives": jnp.stack(objectives), "mean": mean, "log_std": log_std,
            "target": target, "fitted": fitted, "grid": grid, "samples": samples,
            "scanned": scanned, "norm_cdf": norm.cdf(jnp.array([-1.0, 0.0, 2.0]), 0.5, 2.0),
            "norm_ppf": norm.ppf(jnp.array([0.1, 0.5, 0.9])),
            "norm_logcdf": norm.logcdf(jnp.array([-10.0, 0.0]))}

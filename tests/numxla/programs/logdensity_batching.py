"""JAX's "Autobatching for Bayesian inference" notebook: a Bayesian
logistic regression whose log joint is written for one parameter vector
and batched with vmap (and jit(vmap)), compared with a hand-batched
version; a mean-field ELBO over a batch of samples optimised with grad;
and the other jax.scipy.stats log-densities under vmap and grad."""


def main(jax):
    import numpy as np
    import jax.numpy as jnp
    import jax.scipy as jsp
    from jax import random

    # a toy logistic regression data set
    np.random.seed(10009)
    num_features = 6
    num_points = 40
    true_beta = np.random.randn(num_features).astype(jnp.float32)
    all_x = np.random.randn(num_points, num_features).astype(jnp.float32)
    y = (np.random.rand(num_points) < jax.nn.sigmoid(all_x.dot(true_beta))).astype(jnp.int32)

    # the log joint for ONE parameter vector
    def log_joint(beta):
        result = 0.
        # beta's prior: a standard normal, summed over its elements
        result = result + jnp.sum(jsp.stats.norm.logpdf(beta, 0., 1.))
        # the likelihood, written without worrying about a batch dimension
        result = result - jnp.sum(jnp.log(1 + jnp.exp(-(2 * y - 1) * jnp.dot(all_x, beta))))
        return result

    batch_size = 5
    batched_test_beta = np.random.randn(batch_size, num_features).astype(jnp.float32)
    one = log_joint(np.random.randn(num_features))

    # a hand-batched version, written with care for the extra axis
    def batched_log_joint(beta):
        result = 0.
        result = result + jnp.sum(jsp.stats.norm.logpdf(beta, 0., 1.), axis=-1)
        result = result - jnp.sum(jnp.log(1 + jnp.exp(-(2 * y - 1) * jnp.dot(all_x, beta.T).T)),
                                  axis=-1)
        return result

    by_hand = batched_log_joint(batched_test_beta)
    vmap_batched = jax.vmap(log_joint)
    by_vmap = vmap_batched(batched_test_beta)
    jit_vmap = jax.jit(jax.vmap(log_joint))(batched_test_beta)

    # mean-field variational inference: the ELBO from a batch of samples
    def elbo(beta_loc, beta_log_scale, epsilon):
        beta_sample = beta_loc + jnp.exp(beta_log_scale) * epsilon
        return jnp.mean(vmap_batched(beta_sample), 0) + jnp.sum(
            beta_log_scale - 0.5 * np.log(2 * np.pi))

    elbo = jax.jit(elbo)
    elbo_val_and_grad = jax.jit(jax.value_and_grad(elbo, argnums=(0, 1)))

    def normal_sample(key, shape):
        """A batch of standard normals, and a fresh key."""
        new_key, sub_key = random.split(key)
        return new_key, random.normal(sub_key, shape)

    normal_sample = jax.jit(normal_sample, static_argnums=(1,))

    key = random.PRNGKey(10003)
    beta_loc = jnp.zeros(num_features, jnp.float32)
    beta_log_scale = jnp.zeros(num_features, jnp.float32)
    step_size = 0.01
    batch_size = 16
    epsilon_shape = (batch_size, num_features)
    elbos = []
    for i in range(40):
        key, epsilon = normal_sample(key, epsilon_shape)
        elbo_val, (beta_loc_grad, beta_log_scale_grad) = elbo_val_and_grad(
            beta_loc, beta_log_scale, epsilon)
        beta_loc += step_size * beta_loc_grad
        beta_log_scale += step_size * beta_log_scale_grad
        if i % 10 == 0:
            elbos.append(elbo_val)

    # other log-densities, batched over parameters and differentiated
    stats = jsp.stats
    xs = jnp.linspace(0.1, 2.5, 4)
    dens = {
        "t": jax.vmap(stats.t.logpdf, (0, None))(xs, 3.0),
        "gamma": jax.vmap(lambda a: stats.gamma.logpdf(xs, a, scale=0.5))(jnp.array([1.0, 2.5])),
        "beta": stats.beta.logpdf(xs / 3.0, 2.0, 3.0),
        "expon": stats.expon.logpdf(xs, scale=2.0),
        "laplace": stats.laplace.logpdf(xs, 1.0, 0.5),
        "cauchy": stats.cauchy.logpdf(xs),
        "logistic": stats.logistic.logpdf(xs),
        "poisson": stats.poisson.logpmf(jnp.arange(4), 2.0),
        "bernoulli": stats.bernoulli.logpmf(jnp.array([0, 1, 1]), 0.3),
        "binom": stats.binom.logpmf(jnp.arange(4), 5, 0.4),
        "dirichlet": stats.dirichlet.logpdf(jnp.array([0.2, 0.3, 0.5]),
                                            jnp.array([1.0, 2.0, 3.0])),
        "mvn": jax.vmap(stats.multivariate_normal.logpdf, (0, None, None))(
            jnp.stack([xs[:2], xs[2:]]), jnp.zeros(2), jnp.array([[1.0, 0.3], [0.3, 2.0]])),
        "uniform": stats.uniform.logpdf(xs, 0.0, 2.0),
        "norm_sf": stats.norm.sf(xs),
        "norm_logsf": stats.norm.logsf(xs * 4),
        "chi2": stats.chi2.logpdf(xs, 3.0),
    }
    grads = {
        "t_df": jax.grad(lambda df: jnp.sum(stats.t.logpdf(xs, df)))(3.0),
        "gamma_a": jax.grad(lambda a: jnp.sum(stats.gamma.logpdf(xs, a)))(2.0),
        "beta_ab": jax.grad(lambda a, b: jnp.sum(stats.beta.logpdf(xs / 3.0, a, b)),
                            argnums=(0, 1))(2.0, 3.0),
        "mvn_mean": jax.grad(lambda m: stats.multivariate_normal.logpdf(
            xs[:2], m, jnp.eye(2)))(jnp.ones(2)),
        "poisson_rate": jax.grad(lambda r: jnp.sum(stats.poisson.logpmf(jnp.arange(4), r)))(2.0),
    }
    return {"one": one, "by_hand": by_hand, "by_vmap": by_vmap, "jit_vmap": jit_vmap,
            "elbos": jnp.stack(elbos), "beta_loc": beta_loc, "beta_log_scale": beta_log_scale,
            "y": y, "densities": dens, "grads": grads}

"""A one-layer causal transformer language model written with jnp/nn as in
JAX tutorials: embeddings, multi-head self-attention with einsum and a
causal mask, layer norm, a GELU MLP, cross-entropy on next tokens, and a
jitted Adam step from example_libraries.optimizers."""


def main(jax):
    jnp, random, nn = jax.numpy, jax.random, jax.nn
    from functools import partial

    from jax.example_libraries import optimizers

    vocab, d_model, n_heads, seq_len = 11, 16, 2, 8
    d_head = d_model // n_heads

    def init_params(key):
        ks = random.split(key, 7)
        scale = 0.2
        return {
            "embed": random.normal(ks[0], (vocab, d_model)) * scale,
            "pos": random.normal(ks[1], (seq_len, d_model)) * scale,
            "qkv": random.normal(ks[2], (d_model, 3, n_heads, d_head)) * scale,
            "out": random.normal(ks[3], (n_heads, d_head, d_model)) * scale,
            "mlp_in": random.normal(ks[4], (d_model, 4 * d_model)) * scale,
            "mlp_out": random.normal(ks[5], (4 * d_model, d_model)) * scale,
            "ln1": (jnp.ones(d_model), jnp.zeros(d_model)),
            "ln2": (jnp.ones(d_model), jnp.zeros(d_model)),
            "unembed": random.normal(ks[6], (d_model, vocab)) * scale,
        }

    def layer_norm(x, params, eps=1e-5):
        gamma, beta = params
        mean = x.mean(-1, keepdims=True)
        var = x.var(-1, keepdims=True)
        return gamma * (x - mean) / jnp.sqrt(var + eps) + beta

    def attention(params, x):
        q, k, v = jnp.einsum("td,dchk->cthk", x, params["qkv"])
        logits = jnp.einsum("thk,shk->hts", q, k) / jnp.sqrt(d_head)
        mask = jnp.tril(jnp.ones((seq_len, seq_len), dtype=bool))
        logits = jnp.where(mask[None], logits, -1e9)
        weights = nn.softmax(logits, axis=-1)
        heads = jnp.einsum("hts,shk->thk", weights, v)
        return jnp.einsum("thk,hkd->td", heads, params["out"]), weights

    def forward(params, tokens):
        x = params["embed"][tokens] + params["pos"]
        attn, weights = attention(params, layer_norm(x, params["ln1"]))
        x = x + attn
        h = nn.gelu(layer_norm(x, params["ln2"]) @ params["mlp_in"])
        x = x + h @ params["mlp_out"]
        return x @ params["unembed"], weights

    def loss_fn(params, batch):
        inputs, targets = batch[:, :-1], batch[:, 1:]
        logits, _ = jax.vmap(partial(forward, params))(inputs)
        logp = nn.log_softmax(logits)
        nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
        return nll.mean()

    # sequences counting up modulo vocab from random starts
    starts = random.randint(random.PRNGKey(1), (6,), 0, vocab)
    batch = (starts[:, None] + jnp.arange(seq_len + 1)) % vocab

    opt_init, opt_update, get_params = optimizers.adam(3e-2)
    state = opt_init(init_params(random.PRNGKey(0)))

    @jax.jit
    def step(i, state, batch):
        value, grads = jax.value_and_grad(loss_fn)(get_params(state), batch)
        return opt_update(i, grads, state), value

    losses = []
    for i in range(6):
        state, value = step(i, state, batch)
        losses.append(value)
    params = get_params(state)
    logits, weights = forward(params, batch[0, :-1])
    return {
        "losses": jnp.stack(losses),
        "pred": jnp.argmax(logits, -1),
        "attn_row": weights[0, 3],
        "attn_sums": weights.sum(-1)[:, :3],
        "n_params": sum(p.size for p in jax.tree_util.tree_leaves(params)),
        "dot_attention": nn.dot_product_attention(
            params["embed"][:4, None, :8], params["embed"][4:9, None, :8],
            params["embed"][4:9, None, 8:]),
    }

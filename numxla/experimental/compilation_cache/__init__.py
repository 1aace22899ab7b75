"""``jax.experimental.compilation_cache``: see ``compilation_cache.compilation_cache``."""

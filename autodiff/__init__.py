"""numxla's transforms: ``jvp``, ``vjp``, ``grad``, ``value_and_grad``, ``vmap``.

Reverse-mode rules use XLA's own ops (the VJP of ``batch_norm_training`` is
``batch_norm_grad``; of a max ``reduce_window``, ``select_and_scatter``).
This package is built by a later issue; it is empty for now.
"""
__all__: list[str] = []

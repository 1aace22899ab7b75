"""The op families the generator draws from: name -> (weight, rule).

A rule takes the :class:`tests.fuzz.generator.Gen` and emits one op (plus
the conversions and reshapes its operands need).  ``--exclude`` and
``--only`` on the command line filter by these names.
"""
from __future__ import annotations

from . import rules_compute as c
from . import rules_control as cf
from . import rules_elementwise as e
from . import rules_reduce as r
from . import rules_shape as s

FAMILIES = {
    # element-wise
    "unary": (4.0, e.gen_unary),
    "binary": (5.0, e.gen_binary),
    "compare": (1.5, e.gen_compare),
    "select": (1.0, e.gen_select),
    "clamp": (0.7, e.gen_clamp),
    "complex": (0.4, e.gen_complex),
    "convert": (1.5, e.gen_convert),
    "bitcast": (0.7, e.gen_bitcast),
    "reduce_precision": (0.4, e.gen_reduce_precision),
    # shape ops
    "reshape": (1.2, s.gen_reshape),
    "transpose": (1.2, s.gen_transpose),
    "broadcast_in_dim": (1.2, s.gen_broadcast_in_dim),
    "slice": (1.0, s.gen_slice),
    "pad": (1.0, s.gen_pad),
    "concatenate": (0.8, s.gen_concatenate),
    "rev": (0.6, s.gen_rev),
    "iota": (0.4, s.gen_iota),
    "dynamic_slice": (0.8, s.gen_dynamic_slice),
    "dynamic_update_slice": (0.8, s.gen_dynamic_update_slice),
    # reductions, windows, sorting
    "reduce": (1.5, r.gen_reduce),
    "argmax": (0.5, r.gen_argmax),
    "reduce_window": (1.0, r.gen_reduce_window),
    "cumulative": (0.5, r.gen_cumulative),
    "select_and_scatter": (0.3, r.gen_select_and_scatter_add),
    "sort": (0.8, r.gen_sort),
    "top_k": (0.4, r.gen_top_k),
    # dot, conv, gather, scatter
    "dot_general": (1.0, c.gen_dot_general),
    "conv": (0.7, c.gen_conv),
    "gather": (0.8, c.gen_gather),
    "scatter": (0.8, c.gen_scatter),
    # control flow
    "while_loop": (0.5, cf.gen_while),
    "fori_loop": (0.3, cf.gen_fori_loop),
    "cond": (0.5, cf.gen_cond),
}

"""Single-constraint (1-best) MIRA for dependency parsing, McDonald et al. (2005),
Section 2.3.1 (Crammer and Singer 2003): the smallest change of w that gives
the gold tree a margin over the predicted tree at least as large as the
Hamming loss, optionally with the update clipped at C; averaged as in
McDonald et al. (2005), Figure 3.

For k = 1 the quadratic program has the closed form
    tau = max(0, (L - w.x) / ||x||^2),   w += min(tau, C) x,
with x = phi(gold) - phi(pred). The k-best version needs a small QP solver
(Hildreth's algorithm, Censor and Zenios 1997) over the k constraints; it
would live in this module next to ``single_constraint_tau`` as
``hildreth(...)`` and replace the closed form in ``MIRA.step_size``.
"""
from libc.math cimport INFINITY, isnan
from libc.stdint cimport uint64_t

from .online cimport OnlineLearner
from .weight_table cimport WeightTable


cpdef double single_constraint_tau(double loss, double margin, double sq_norm,
                                   double C) noexcept:
    """Closed-form solution of the 1-constraint MIRA QP (0 if ||x||^2 == 0)."""
    cdef double tau
    if sq_norm <= 0.0:
        return 0.0
    tau = (loss - margin) / sq_norm
    if tau < 0.0:
        return 0.0
    if tau > C:
        return C
    return tau


cdef class MIRA(OnlineLearner):
    """1-best MIRA: tau = max(0, (n_wrong - w.x) / ||x||^2), clipped at C."""

    cdef readonly double C

    def __init__(self, double C=INFINITY, bint averaged=True):
        if isnan(C) or C <= 0.0:
            raise ValueError(f"MIRA: C must be > 0 (float('inf') for no clipping), got {C}")
        OnlineLearner.__init__(self, averaged)
        self.C = C

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss):
        cdef double margin = table.dot(idx, val)
        loss[0] = max(0.0, n_wrong - margin)
        return single_constraint_tau(<double>n_wrong, margin, sq_norm, self.C)

    def __reduce__(self):
        return (MIRA, (self.C, self.averaged))

    def __repr__(self):
        return f"MIRA(C={self.C}, averaged={self.averaged})"

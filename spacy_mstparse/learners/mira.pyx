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
``hildreth(...)`` and replace the closed form in ``MIRA._solve``.
"""
from libc.math cimport INFINITY, isnan
from libc.stdint cimport uint64_t

from .sparse cimport sparse_sq_norm
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


cdef class MIRA:
    """1-best MIRA: tau = max(0, (n_wrong - w.x) / ||x||^2), clipped at C."""

    cdef readonly int batch_size
    cdef readonly bint loss_augmented
    cdef public bint averaged
    cdef readonly double C

    def __init__(self, double C=INFINITY, bint averaged=True):
        if isnan(C) or C <= 0.0:
            raise ValueError(f"MIRA: C must be > 0 (float('inf') for no clipping), got {C}")
        self.C = C
        self.batch_size = 1
        self.loss_augmented = False
        self.averaged = averaged

    cdef double _solve(self, double loss, double margin, double sq_norm):
        return single_constraint_tau(loss, margin, sq_norm, self.C)

    def step(self, WeightTable table, list batch):
        """One update per sentence (w += tau x), then tick."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong
        cdef long total_wrong = 0
        cdef long n_updates = 0
        cdef double sq, margin, tau, tau_sum = 0.0, hinge_sum = 0.0
        for item in batch:
            idx, val, n_wrong = item[0], item[1], item[2]
            total_wrong += n_wrong
            sq = sparse_sq_norm(val)
            if sq > 0.0:
                margin = table.dot(idx, val)
                hinge_sum += max(0.0, n_wrong - margin)
                tau = self._solve(<double>n_wrong, margin, sq)
                if tau > 0.0:
                    table.add(idx, val, tau)
                    n_updates += 1
                    tau_sum += tau
            table.tick()
        n = len(batch)
        return {
            "n_sentences": n,
            "n_wrong": total_wrong,
            "n_updates": n_updates,
            "tau": tau_sum / n if n else 0.0,
            "hinge": hinge_sum / n if n else 0.0,
        }

    def __repr__(self):
        return f"MIRA(C={self.C}, averaged={self.averaged})"

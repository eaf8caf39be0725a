"""Passive-Aggressive learning for dependency parsing: PA, PA-I and PA-II of
Crammer et al. (2006) as adapted by Nguyen et al. (2007), Algorithm 1, with
the averaging of McDonald et al. (2005).

With x = phi(gold) - phi(pred) and the loss
    l = max(0, sqrt(n_wrong) - w.x),
the step size is
    PA:    tau = l / ||x||^2
    PA-I:  tau = min(C, l / ||x||^2)
    PA-II: tau = l / (||x||^2 + 1 / (2C))
and w += tau x.
"""
from libc.math cimport isfinite, sqrt
from libc.stdint cimport uint64_t

from .sparse cimport sparse_sq_norm
from .weight_table cimport WeightTable

VARIANTS = ("PA", "PA-I", "PA-II")


cpdef double pa_tau(int kind, double loss, double sq_norm, double C) noexcept:
    """tau for variant ``kind`` (0 = PA, 1 = PA-I, 2 = PA-II); 0 if ||x||^2 == 0."""
    cdef double tau
    if sq_norm <= 0.0 or loss <= 0.0:
        return 0.0
    if kind == 2:
        return loss / (sq_norm + 1.0 / (2.0 * C))
    tau = loss / sq_norm
    if kind == 1 and tau > C:
        return C
    return tau


cdef class PassiveAggressive:
    """PA / PA-I / PA-II (Nguyen et al. 2007, Algorithm 1)."""

    cdef readonly int batch_size
    cdef readonly bint loss_augmented
    cdef public bint averaged
    cdef readonly str variant
    cdef readonly double C
    cdef int _kind

    def __init__(self, str variant="PA-I", double C=0.05, bint averaged=True):
        if variant not in VARIANTS:
            raise ValueError(
                f"PassiveAggressive: unknown variant {variant!r}, expected one of {VARIANTS}")
        if not isfinite(C) or C <= 0.0:
            raise ValueError(f"PassiveAggressive: C must be finite and > 0, got {C}")
        self.variant = variant
        self._kind = VARIANTS.index(variant)
        self.C = C
        self.batch_size = 1
        self.loss_augmented = False
        self.averaged = averaged

    def step(self, WeightTable table, list batch):
        """One update per sentence (w += tau x), then tick."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong
        cdef long total_wrong = 0
        cdef long n_updates = 0
        cdef double sq, loss, tau, tau_sum = 0.0, loss_sum = 0.0
        for item in batch:
            idx, val, n_wrong = item[0], item[1], item[2]
            total_wrong += n_wrong
            sq = sparse_sq_norm(val)
            if sq > 0.0:
                loss = sqrt(<double>n_wrong) - table.dot(idx, val)
                if loss > 0.0:
                    loss_sum += loss
                    tau = pa_tau(self._kind, loss, sq, self.C)
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
            "loss": loss_sum / n if n else 0.0,
        }

    def __repr__(self):
        return f"PassiveAggressive(variant={self.variant!r}, C={self.C}, averaged={self.averaged})"

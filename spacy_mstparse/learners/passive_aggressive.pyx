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

from .online cimport OnlineLearner
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


cdef class PassiveAggressive(OnlineLearner):
    """PA / PA-I / PA-II (Nguyen et al. 2007, Algorithm 1)."""

    cdef readonly str variant
    cdef readonly double C
    cdef int _kind

    def __init__(self, str variant="PA-I", double C=0.05, bint averaged=True):
        if variant not in VARIANTS:
            raise ValueError(
                f"PassiveAggressive: unknown variant {variant!r}, expected one of {VARIANTS}")
        if not isfinite(C) or C <= 0.0:
            raise ValueError(f"PassiveAggressive: C must be finite and > 0, got {C}")
        OnlineLearner.__init__(self, averaged)
        self.variant = variant
        self._kind = VARIANTS.index(variant)
        self.C = C

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss):
        cdef double l = sqrt(<double>n_wrong) - table.dot(idx, val)
        loss[0] = l if l > 0.0 else 0.0
        return pa_tau(self._kind, loss[0], sq_norm, self.C)

    def __reduce__(self):
        return (PassiveAggressive, (self.variant, self.C, self.averaged))

    def __repr__(self):
        return f"PassiveAggressive(variant={self.variant!r}, C={self.C}, averaged={self.averaged})"

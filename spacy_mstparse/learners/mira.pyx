"""MIRA for dependency parsing, McDonald, Crammer & Pereira (2005), Section
2.3.1 (Crammer and Singer 2003): the smallest change of w that gives the gold
tree a margin over each of the k best trees under the current weights at
least as large as that tree's Hamming loss, optionally with every dual
variable clipped at C; averaged as in McDonald et al. (2005), Figure 3.

With one constraint (k = 1, or a non-projective decoder, which gives only
the best tree) the quadratic program has the closed form

    tau = max(0, (L - w.x) / ||x||^2),   w += min(tau, C) x,

with x = phi(gold) - phi(pred). With k constraints the component passes
one list of (x_i, L_i) per sentence and the dual is solved by Hildreth's
algorithm (``hildreth.pyx``): w += sum_i alpha_i x_i.
"""
from libc.math cimport INFINITY, isnan
from libc.stdint cimport uint64_t

import numpy as np

from .hildreth cimport hildreth_solve
from .online cimport OnlineLearner
from .sparse cimport sparse_dot
from .weight_table cimport WeightTable

DEF HILDRETH_MAX_ITER = 10000
DEF HILDRETH_EPS = 1e-8


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


def k_constraint_alphas(WeightTable table, list constraints, double C):
    """Dual variables of the k-constraint MIRA QP over ``constraints`` (a list
    of ``(idx, val, loss)``) by Hildreth's algorithm, each clipped at ``C``;
    and the largest margin loss. Used by MIRA and the sparseptron's debiasing."""
    cdef int k = len(constraints)
    G = np.empty((k, k), dtype=np.float64)
    b = np.empty(k, dtype=np.float64)
    alpha = np.zeros(k, dtype=np.float64)
    cdef double[:, ::1] g = G
    cdef double[::1] bv = b
    cdef double[::1] av = alpha
    cdef int i, j
    cdef double loss = 0.0
    for i in range(k):
        bv[i] = constraints[i][2] - table.dot(constraints[i][0], constraints[i][1])
        loss = max(loss, bv[i])
        for j in range(i + 1):
            g[i, j] = sparse_dot(constraints[i][0], constraints[i][1],
                                 constraints[j][0], constraints[j][1])
            g[j, i] = g[i, j]
    with nogil:
        hildreth_solve(&g[0, 0], &bv[0], k, C, &av[0], HILDRETH_MAX_ITER, HILDRETH_EPS)
    return alpha, loss


cdef class MIRA(OnlineLearner):
    """MIRA over the k best trees (k = 1: the closed form; k > 1: Hildreth).

    ``k_best`` (= k) tells the parser how many trees to decode; a step item
    is either one ``(idx, val, n_wrong)`` or a list of them (one per tree).
    """

    cdef readonly double C
    cdef readonly int k

    def __init__(self, double C=INFINITY, int k=1, bint averaged=True):
        if isnan(C) or C <= 0.0:
            raise ValueError(f"MIRA: C must be > 0 (float('inf') for no clipping), got {C}")
        if k < 1:
            raise ValueError(f"MIRA: k must be >= 1, got {k}")
        OnlineLearner.__init__(self, averaged)
        self.C = C
        self.k = k
        self.k_best = k

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss):
        cdef double margin = table.dot(idx, val)
        loss[0] = max(0.0, n_wrong - margin)
        return single_constraint_tau(<double>n_wrong, margin, sq_norm, self.C)

    cdef double sentence_step(self, WeightTable table, object item, double* loss,
                              long* n_wrong) except -1.0:
        """One sentence: an item that is a list of constraints (the k best
        trees) is solved jointly by Hildreth's algorithm; a single one by the
        closed form of ``OnlineLearner``."""
        if not isinstance(item, list):
            return OnlineLearner.sentence_step(self, table, item, loss, n_wrong)
        cdef double tau
        cdef long ignored
        constraints = [c for c in item if c[0].shape[0] > 0]
        if len(constraints) <= 1:
            tau = OnlineLearner.sentence_step(
                self, table, constraints[0] if constraints else _EMPTY, loss, &ignored)
        else:
            alpha, loss[0] = self.solve(table, constraints)
            for c, a in zip(constraints, alpha):
                if a > 0.0:
                    table.add(c[0], c[1], a)
            tau = alpha.sum()
        # wrong heads of the best tree (the first item), whatever was updated
        n_wrong[0] = item[0][2] if item else 0
        return tau

    def solve(self, WeightTable table, list constraints):
        """Dual variables of the k-constraint QP and the largest margin loss."""
        return k_constraint_alphas(table, constraints, self.C)

    def __reduce__(self):
        return (MIRA, (self.C, self.k, self.averaged))

    def __repr__(self):
        return f"MIRA(C={self.C}, k={self.k}, averaged={self.averaged})"


_EMPTY = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float64), 0)

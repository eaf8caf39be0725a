"""Exact arc marginals of projective trees with sibling (second-order) scores.

The distribution is p(tree) proportional to exp(score(tree) / T) with
score(tree) the sum of its arc scores ``arc[h, c]`` and of its sibling
factors, McDonald & Pereira (2006)'s factorization as in
``eisner_second_order``: for every head h and each side of h, its dependents
c1, c2, ... from h outwards add ``sib[h, h, c1] + sib[h, c1, c2] + ...``,
and every word h >= 1 adds on each side the stop factor of Koo & Collins
(2010): ``sib[h, c, h]`` for its outermost dependent c there, or
``sib[h, h, h]`` / ``sib[h, 0, h]`` when it has no right / left dependent
(the root has none). Single root (one word attached to node 0), projective
trees only.

This is the sum-product (inside-outside) version of McDonald & Pereira's
second-order Eisner chart (the chart of ``eisner_second_order``, cells CR,
CL, IR, IL and the sibling cell SB), in log space: the inside pass replaces
the decoder's max by log-sum-exp (the stop factors sit in the complete
cells: CR[s, s] / CL[s, s] are the no-dependent stops, and the CR / CL rules
add the outermost dependent's), and the outside pass is its reverse-mode
derivative, so every cell carries d log Z / d cell, the probability that
the cell's item is in the tree (a number in [0, 1]; no outside scores to
overflow), as in ``marginals.projective_marginals``. Arc s -> t (s < t) is
in a tree exactly when the item IR[s, t] is, so its marginal is IR[s, t]'s
gradient (IL for leftward arcs, the root sum for root arcs). Pure C loops
without the GIL, O(n^3) time, O(n^2) memory (the sibling scores are read
from the caller's (n+1)^3 float32 array).

With ``sib=None`` the distribution is first order and the marginals equal
``projective_marginals(arc, T, single_root=True)``.
"""
from libc.math cimport INFINITY, exp, isfinite, log
from libc.stdlib cimport free

import numpy as np

from .marginals cimport (
    LOG_NEGLIGIBLE,
    MARG_NO_MEMORY,
    MARG_NO_TREE,
    MARG_OK,
    MARG_OVERFLOW,
    chart_workspace_c,
    log_sum_exp,
)

from .marginals import checked_scores, raise_for_code


cdef inline double _sib(const float* sib, int N, int h, int s, int c,
                        double inv_t) noexcept nogil:
    if sib == NULL:
        return 0.0
    return <double>sib[(<Py_ssize_t>h * N + s) * N + c] * inv_t


cdef inline double _share(double x) noexcept nogil:
    """exp(x), 0 below LOG_NEGLIGIBLE: a term's share of the cell it is part of
    (at the low temperatures fitted on treebanks most shares are negligible)."""
    return exp(x) if x > LOG_NEGLIGIBLE else 0.0


cdef int second_order_marginals_c(const float* arc, const float* sib, int n,
                                  double temperature, double* marginals,
                                  double* log_z) noexcept nogil:
    cdef int N, s, t, r, w, m, rc
    cdef size_t NN
    cdef double inv_t = 1.0 / temperature
    cdef double X, g, p, a, lz
    cdef double* A      # arc scores / T (double)
    cdef double* CR     # complete span s..t headed by s
    cdef double* CL     # complete span s..t headed by t
    cdef double* IR     # incomplete, arc s -> t
    cdef double* IL     # incomplete, arc t -> s
    cdef double* SB     # s and t adjacent siblings of a head outside [s, t]
    cdef double* ST     # [h*N + x]: stop factor sib[h, x, h] / T, contiguous
    cdef double* buf
    cdef double* G      # the gradients d log Z / d cell, same layout
    cdef double* gCR
    cdef double* gCL
    cdef double* gIR
    cdef double* gIL
    cdef double* gSB
    if not temperature > 0.0:
        return MARG_NO_MEMORY
    rc = chart_workspace_c(arc, n, temperature, 7, 5, marginals, log_z, &A, &G)
    if rc != MARG_OK or A == NULL:
        return rc
    N = n + 1
    NN = <size_t>N * <size_t>N
    CR = A + NN
    CL = A + 2 * NN
    IR = A + 3 * NN
    IL = A + 4 * NN
    SB = A + 5 * NN
    ST = A + 6 * NN
    buf = A + 7 * NN
    gCR = G
    gCL = G + NN
    gIR = G + 2 * NN
    gIL = G + 3 * NN
    gSB = G + 4 * NN
    for s in range(1, N):       # row 0, the root's, stays unused
        for r in range(N):
            ST[s * N + r] = _sib(sib, N, s, r, s, inv_t)
    # s has no right / left dependent: its stop factor.
    for s in range(1, N):
        CR[s * N + s] = ST[s * N + s]
        CL[s * N + s] = ST[s * N]

    # Inside, over the words 1..n by increasing width (as the decoder).
    for w in range(1, n):
        for s in range(1, N - w):
            t = s + w
            for r in range(s, t):
                buf[r - s] = CR[s * N + r] + CL[(r + 1) * N + t]
            SB[s * N + t] = log_sum_exp(buf, w)
            # IR[s, t]: t is s's first right child, or follows sibling r
            # (-inf at once for a forbidden arc, e.g. one the arc filter left out).
            IR[s * N + t] = -INFINITY
            if A[s * N + t] != -INFINITY:
                buf[0] = CL[(s + 1) * N + t] + _sib(sib, N, s, s, t, inv_t)
                for r in range(s + 1, t):
                    buf[r - s] = IR[s * N + r] + SB[r * N + t] + _sib(sib, N, s, r, t, inv_t)
                IR[s * N + t] = log_sum_exp(buf, w) + A[s * N + t]
            # IL[s, t]: s is t's first left child, or precedes sibling r.
            IL[s * N + t] = -INFINITY
            if A[t * N + s] != -INFINITY:
                buf[0] = CR[s * N + t - 1] + _sib(sib, N, t, t, s, inv_t)
                for r in range(s + 1, t):
                    buf[r - s] = SB[s * N + r] + IL[r * N + t] + _sib(sib, N, t, r, s, inv_t)
                IL[s * N + t] = log_sum_exp(buf, w) + A[t * N + s]
            # CR / CL: r is the head's outermost dependent (its stop factor).
            for r in range(s + 1, t + 1):
                buf[r - s - 1] = IR[s * N + r] + CR[r * N + t] + ST[s * N + r]
            CR[s * N + t] = log_sum_exp(buf, w)
            for r in range(s, t):
                buf[r - s] = CL[s * N + r] + IL[r * N + t] + ST[t * N + r]
            CL[s * N + t] = log_sum_exp(buf, w)

    # The root's single child m.
    for m in range(1, N):
        buf[m - 1] = A[m] + _sib(sib, N, 0, 0, m, inv_t) + CL[1 * N + m] + CR[m * N + n]
    lz = log_sum_exp(buf, n)
    if lz == -INFINITY:
        free(A)
        free(G)
        return MARG_NO_TREE
    if not isfinite(lz):
        free(A)
        free(G)
        return MARG_OVERFLOW
    log_z[0] = lz
    for m in range(1, N):
        p = exp(buf[m - 1] - lz)
        marginals[m] = min(p, 1.0)
        gCL[1 * N + m] += p
        gCR[m * N + n] += p

    # Outside: the reverse-mode derivative of the inside pass, by decreasing
    # width and, within a span, in the reverse order of the inside pass.
    for w in range(n - 1, 0, -1):
        for s in range(1, N - w):
            t = s + w
            g = gCL[s * N + t]
            X = CL[s * N + t]
            if g != 0.0 and X != -INFINITY:
                for r in range(s, t):
                    p = g * _share(CL[s * N + r] + IL[r * N + t] + ST[t * N + r] - X)
                    gCL[s * N + r] += p
                    gIL[r * N + t] += p
            g = gCR[s * N + t]
            X = CR[s * N + t]
            if g != 0.0 and X != -INFINITY:
                for r in range(s + 1, t + 1):
                    p = g * _share(IR[s * N + r] + CR[r * N + t] + ST[s * N + r] - X)
                    gIR[s * N + r] += p
                    gCR[r * N + t] += p
            # IR[s, t] and IL[s, t] are complete: every use is wider or was
            # just undone. (sums of probabilities can round a hair above 1)
            marginals[s * N + t] = min(gIR[s * N + t], 1.0)
            marginals[t * N + s] = min(gIL[s * N + t], 1.0)
            g = gIL[s * N + t]
            X = IL[s * N + t]
            if g != 0.0 and X != -INFINITY:
                a = A[t * N + s] - X
                p = g * _share(CR[s * N + t - 1] + _sib(sib, N, t, t, s, inv_t) + a)
                gCR[s * N + t - 1] += p
                for r in range(s + 1, t):
                    p = g * _share(SB[s * N + r] + IL[r * N + t] + _sib(sib, N, t, r, s, inv_t) + a)
                    gSB[s * N + r] += p
                    gIL[r * N + t] += p
            g = gIR[s * N + t]
            X = IR[s * N + t]
            if g != 0.0 and X != -INFINITY:
                a = A[s * N + t] - X
                p = g * _share(CL[(s + 1) * N + t] + _sib(sib, N, s, s, t, inv_t) + a)
                gCL[(s + 1) * N + t] += p
                for r in range(s + 1, t):
                    p = g * _share(IR[s * N + r] + SB[r * N + t] + _sib(sib, N, s, r, t, inv_t) + a)
                    gIR[s * N + r] += p
                    gSB[r * N + t] += p
            g = gSB[s * N + t]
            X = SB[s * N + t]
            if g != 0.0 and X != -INFINITY:
                for r in range(s, t):
                    p = g * _share(CR[s * N + r] + CL[(r + 1) * N + t] - X)
                    gCR[s * N + r] += p
                    gCL[(r + 1) * N + t] += p
    free(A)
    free(G)
    return MARG_OK


def second_order_marginals(scores, sib=None, temperature=1.0):
    """Arc marginals and log Z over projective single-root trees scored by
    arcs plus siblings (McDonald & Pereira 2006).

    scores: (n+1) x (n+1) arc scores ``scores[h, c]`` (float32; index 0 the
        root; -inf forbids an arc; column 0 and the diagonal ignored).
    sib: None (first order) or (n+1)^3 sibling scores ``sib[h, s, c]`` as in
        ``eisner_k_best`` (s == h: c is h's first child on its side), with
        the stop factors ``sib[h, c, h]``, ``sib[h, h, h]``, ``sib[h, 0, h]``
        (module docstring); -inf forbids the sibling pair (or stop); NaN /
        +inf are refused.
    temperature: T > 0, p(tree) proportional to exp(score(tree) / T).

    Returns ``(marginals, log_z)`` as ``projective_marginals``: float64
    (n+1, n+1), ``marginals[h, c] = p(h -> c)``, each word's column summing
    to 1, and log Z. Raises ValueError if every tree is forbidden or the
    scaled scores overflow.
    """
    name = "second_order_marginals"
    arr, T = checked_scores(scores, temperature, name)
    cdef int N = arr.shape[0]
    cdef int n = N - 1
    cdef const float[:, :, ::1] sv
    cdef const float* sp = NULL
    if sib is not None:
        sib_arr = np.ascontiguousarray(sib, dtype=np.float32)
        if sib_arr.shape != (N, N, N):
            raise ValueError(f"{name}: sib must have shape {(N, N, N)}, got {sib_arr.shape}")
        bad = np.isnan(sib_arr) | (sib_arr == np.inf)
        if bad.any():
            h, s, c = (int(x) for x in np.argwhere(bad)[0])
            raise ValueError(f"{name}: sib[{h}, {s}, {c}] is {sib_arr[h, s, c]}; sibling "
                             "scores must be finite, or -inf for a forbidden pair")
        if N > 0:
            sv = sib_arr
            sp = &sv[0, 0, 0]
    cdef const float[:, ::1] view = arr
    cdef double t = T
    cdef double lz = 0.0
    cdef int rc
    out = np.empty((N, N), dtype=np.float64)
    cdef double[:, ::1] ov = out
    with nogil:
        rc = second_order_marginals_c(&view[0, 0], sp, n, t, &ov[0, 0], &lz)
    raise_for_code(rc, name, n, t)
    return out, float(lz)

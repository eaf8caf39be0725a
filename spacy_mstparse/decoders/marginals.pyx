"""Exact arc marginals and log partition functions of first-order dependency trees.

Under p(tree) proportional to exp(score(tree) / T), score(tree) the sum of
its arc scores, these modules compute log Z = log sum_tree exp(score(tree) / T)
and every arc's marginal probability p(h -> c) = d log Z / d (score[h, c] / T):

- ``projective_marginals``: projective trees, inside-outside over Eisner's
  chart (Eisner 1996; McDonald, Crammer & Pereira 2005's first-order chart).
  The inside pass replaces the decoder's max by a sum; the outside pass is
  its reverse-mode derivative, so every chart cell carries d log Z / d cell,
  the probability that the cell's item is part of the tree, a number in
  [0, 1]. The chart is first computed on weights, each word's column
  divided by its best head's weight (every tree is scaled alike), as sums
  of products without exp in the cubic loops; where Z then leaves the range
  in which every cell that matters is representable (the best tree far
  below the words' best heads, or hundreds of words at a high T), again in
  log space (log-sum-exp). With ``single_root`` the chart covers the words
  1..n and the root's one child r is summed out as
  log sum_r exp(s(0, r) / T + cl[1, r] + cr[r, n]), as in the project's
  Eisner decoder. Pure C loops without the GIL, O(n^3).
- ``nonprojective_marginals`` (all spanning trees, the matrix-tree theorem)
  lives in ``marginals_nonprojective``; the error codes, the score checks
  and the Python entry point's wrapper here serve both.

A score of -inf forbids an arc (probability 0); if every tree uses a
forbidden arc, ValueError. Conventions (see ARCHITECTURE.md): scores[h, c] is
the arc h -> c in a row-major (n+1) x (n+1) float32 matrix, index 0 the
artificial root, column 0 and the diagonal never read. Everything after
reading the scores is double precision.
"""
from libc.math cimport INFINITY, exp, isfinite, log
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

import numpy as np

# The range of the scaled projective chart's Z (each column's largest weight
# 1, so a tree weighs at most 1) where it is used. Above 1e-280, every tree
# that matters (weight over 1e-15 Z) has all its partial products over
# 1e-295, clear of double precision's subnormal numbers (below 2.2e-308);
# below 1e280, far from overflow (a cell that overflows makes Z infinite or
# NaN, which is out of range too).
cdef double SCALED_MIN_Z = 1e-280
cdef double SCALED_MAX_Z = 1e280
# A return code of the scaled chart only: out of range, use the log chart.
cdef int MARG_OUT_OF_RANGE = -100


cdef int scaled_scores_c(const float* scores, int N, double temperature,
                        double* A) noexcept nogil:
    """A = scores / T (double); column 0 and the diagonal become -inf."""
    cdef int h, c
    cdef double v
    for h in range(N):
        for c in range(N):
            if c == 0 or c == h:
                A[h * N + c] = -INFINITY
            else:
                v = <double>scores[h * N + c] / temperature
                if v != v or v == INFINITY:
                    return MARG_OVERFLOW
                A[h * N + c] = v
    return MARG_OK


cdef int chart_workspace_c(const float* scores, int n, double temperature,
                           int charts, int grads, double* marginals, double* log_z,
                           double** A, double** G) noexcept nogil:
    cdef int N, rc
    cdef size_t NN
    A[0] = NULL
    G[0] = NULL
    if n < 0:
        return MARG_NO_MEMORY
    N = n + 1
    NN = <size_t>N * <size_t>N
    memset(marginals, 0, NN * sizeof(double))
    if n == 0:
        log_z[0] = 0.0
        return MARG_OK
    A[0] = <double*>malloc((charts * NN + N) * sizeof(double))
    G[0] = <double*>calloc(grads * NN, sizeof(double))
    if A[0] != NULL and G[0] != NULL:
        rc = scaled_scores_c(scores, N, temperature, A[0])
        if rc == MARG_OK:
            return MARG_OK
    else:
        rc = MARG_NO_MEMORY
    free(A[0])
    free(G[0])
    A[0] = NULL
    G[0] = NULL
    return rc


# ---------------------------------------------------------------------------
# projective: inside-outside over Eisner's chart


cdef struct ProjectiveChart:
    # cells (a chart of N x N doubles each; *_t the transpose, for rows read
    # along their other index), as logs or as weights
    double* cr      # cr[s*N+t]: the complete span s..t headed by s
    double* cr_t    # cr_t[t*N+s] = cr[s*N+t]
    double* cl      # cl[s*N+t]: the complete span s..t headed by t
    double* cl_t
    double* ir      # ir[s*N+t]: the incomplete span with the arc s -> t
    double* il_t    # il_t[t*N+s]: the incomplete span with the arc t -> s
    double* sp      # sp[s*N+t]: the sum over splits r of cr[s, r] and cl[r+1, t]
    # gradients d log Z / d cell; a cell's total is the sum of its row-major
    # and transposed accumulators
    double* gcr
    double* gcr_t
    double* gcl
    double* gcl_t
    double* gir
    double* gil_t


cdef inline ProjectiveChart projective_chart(double* A, double* grads, int N,
                                             double single) noexcept nogil:
    """The cells in chart_workspace_c's memory (A: the scores, then 7
    charts; grads: 6), the one-word spans set to ``single`` (1 as a weight,
    0 as a log)."""
    cdef ProjectiveChart ch
    cdef size_t NN = <size_t>N * <size_t>N
    cdef int s
    ch.cr, ch.cr_t, ch.cl, ch.cl_t = A + NN, A + 2 * NN, A + 3 * NN, A + 4 * NN
    ch.ir, ch.il_t, ch.sp = A + 5 * NN, A + 6 * NN, A + 7 * NN
    ch.gcr, ch.gcr_t, ch.gcl = grads, grads + NN, grads + 2 * NN
    ch.gcl_t, ch.gir, ch.gil_t = grads + 3 * NN, grads + 4 * NN, grads + 5 * NN
    for s in range(N):
        ch.cr[s * N + s] = single
        ch.cl[s * N + s] = single
        ch.cr_t[s * N + s] = single
        ch.cl_t[s * N + s] = single
    return ch


cdef int projective_marginals_c(const float* scores, int n, double temperature,
                                bint single_root, double* marginals,
                                double* log_z) noexcept nogil:
    """The scaled chart where its numbers stay in range, else the log chart."""
    cdef int rc = _projective_scaled_c(scores, n, temperature, single_root, marginals, log_z)
    if rc == MARG_OUT_OF_RANGE:
        rc = _projective_log_c(scores, n, temperature, single_root, marginals, log_z)
    return rc


cdef int _projective_scaled_c(const float* scores, int n, double temperature,
                              bint single_root, double* marginals,
                              double* log_z) noexcept nogil:
    """Inside-outside over Eisner's chart on weights instead of logs: every
    column (the arcs into one word) is divided by its largest weight, which
    scales every tree by the same factor (each word has one head), so the
    weights are at most 1 and a chart cell is a plain sum of products, with
    no exp or log in the O(n^3) loops. The cells are those of the log chart
    below, exponentiated; the outside pass is the same derivative. Returns
    MARG_OUT_OF_RANGE (the caller then uses the log chart) when Z leaves
    [SCALED_MIN_Z, SCALED_MAX_Z] (very long sentences, very peaked
    distributions)."""
    cdef int N, s, t, r, w, start, rc
    cdef double X, g, p, z, shift = 0.0, top
    cdef double* A
    cdef double* grads
    cdef ProjectiveChart ch
    rc = chart_workspace_c(scores, n, temperature, 8, 6, marginals, log_z, &A, &grads)
    if rc != MARG_OK or A == NULL:
        return rc
    N = n + 1
    ch = projective_chart(A, grads, N, 1.0)
    start = 1 if single_root else 0
    # Weights, each column divided by its largest one.
    for t in range(1, N):
        top = -INFINITY
        for s in range(N):
            if A[s * N + t] > top:
                top = A[s * N + t]
        if top == -INFINITY:
            free(A)
            free(grads)
            return MARG_OUT_OF_RANGE   # no head for word t: the log chart says so
        shift += top
        for s in range(N):
            A[s * N + t] = exp(A[s * N + t] - top)

    for w in range(1, N):
        for s in range(start, N - w):
            t = s + w
            X = 0.0
            for r in range(s, t):
                X += ch.cr[s * N + r] * ch.cl_t[t * N + r + 1]
            ch.sp[s * N + t] = X
            ch.ir[s * N + t] = X * A[s * N + t]
            ch.il_t[t * N + s] = X * A[t * N + s]
            X = 0.0
            for r in range(s + 1, t + 1):
                X += ch.ir[s * N + r] * ch.cr_t[t * N + r]
            ch.cr[s * N + t] = X
            ch.cr_t[t * N + s] = X
            X = 0.0
            if s > 0:
                for r in range(s, t):
                    X += ch.cl[s * N + r] * ch.il_t[t * N + r]
            ch.cl[s * N + t] = X
            ch.cl_t[t * N + s] = X

    if single_root:
        z = 0.0
        for r in range(1, N):
            z += A[r] * ch.cl[1 * N + r] * ch.cr[r * N + n]
    else:
        z = ch.cr[n]
    if not (SCALED_MIN_Z <= z <= SCALED_MAX_Z):
        free(A)
        free(grads)
        return MARG_OUT_OF_RANGE
    if single_root:
        for r in range(1, N):
            p = A[r] * ch.cl[1 * N + r] * ch.cr[r * N + n] / z
            marginals[r] = min(p, 1.0)
            ch.gcl[1 * N + r] += p
            ch.gcr_t[n * N + r] += p
    else:
        ch.gcr[n] = 1.0
    log_z[0] = log(z) + shift

    for w in range(N - 1, 0, -1):
        for s in range(start, N - w):
            t = s + w
            X = ch.cl[s * N + t]
            g = ch.gcl[s * N + t] + ch.gcl_t[t * N + s]
            if g != 0.0 and X != 0.0:
                g /= X
                for r in range(s, t):
                    p = g * ch.cl[s * N + r] * ch.il_t[t * N + r]
                    ch.gcl[s * N + r] += p
                    ch.gil_t[t * N + r] += p
            X = ch.cr[s * N + t]
            g = ch.gcr[s * N + t] + ch.gcr_t[t * N + s]
            if g != 0.0 and X != 0.0:
                g /= X
                for r in range(s + 1, t + 1):
                    p = g * ch.ir[s * N + r] * ch.cr_t[t * N + r]
                    ch.gir[s * N + r] += p
                    ch.gcr_t[t * N + r] += p
            marginals[s * N + t] = min(ch.gir[s * N + t], 1.0)
            if s > 0:
                marginals[t * N + s] = min(ch.gil_t[t * N + s], 1.0)
            X = ch.sp[s * N + t]
            g = ch.gir[s * N + t] + ch.gil_t[t * N + s]
            if g != 0.0 and X != 0.0:
                g /= X
                for r in range(s, t):
                    p = g * ch.cr[s * N + r] * ch.cl_t[t * N + r + 1]
                    ch.gcr[s * N + r] += p
                    ch.gcl_t[t * N + r + 1] += p
    free(A)
    free(grads)
    return MARG_OK


cdef int _projective_log_c(const float* scores, int n, double temperature,
                           bint single_root, double* marginals,
                           double* log_z) noexcept nogil:
    cdef int N, s, t, r, w, start, rc
    cdef size_t NN
    cdef double X, g, p, lz, x
    cdef double* A
    cdef double* grads
    cdef ProjectiveChart ch
    cdef double* buf
    rc = chart_workspace_c(scores, n, temperature, 8, 6, marginals, log_z, &A, &grads)
    if rc != MARG_OK or A == NULL:
        return rc
    N = n + 1
    NN = <size_t>N * <size_t>N
    buf = A + 8 * NN
    ch = projective_chart(A, grads, N, 0.0)

    # Inside, by increasing span width. In single-root mode the root (node 0)
    # is handled after the chart.
    start = 1 if single_root else 0
    for w in range(1, N):
        for s in range(start, N - w):
            t = s + w
            for r in range(s, t):
                buf[r - s] = ch.cr[s * N + r] + ch.cl_t[t * N + r + 1]
            X = log_sum_exp(buf, w)
            ch.sp[s * N + t] = X
            ch.ir[s * N + t] = X + A[s * N + t]
            # No arc may enter the root (A's column 0 is -inf).
            ch.il_t[t * N + s] = X + A[t * N + s]
            for r in range(s + 1, t + 1):
                buf[r - s - 1] = ch.ir[s * N + r] + ch.cr_t[t * N + r]
            X = log_sum_exp(buf, w)
            ch.cr[s * N + t] = X
            ch.cr_t[t * N + s] = X
            if s == 0:
                X = -INFINITY
            else:
                for r in range(s, t):
                    buf[r - s] = ch.cl[s * N + r] + ch.il_t[t * N + r]
                X = log_sum_exp(buf, w)
            ch.cl[s * N + t] = X
            ch.cl_t[t * N + s] = X

    # log Z, and the gradient of the top item(s).
    if single_root:
        for r in range(1, N):
            buf[r - 1] = A[r] + ch.cl[1 * N + r] + ch.cr[r * N + n]
        lz = log_sum_exp(buf, n)
        if lz != -INFINITY and isfinite(lz):
            for r in range(1, N):
                p = exp(buf[r - 1] - lz)
                marginals[r] = min(p, 1.0)
                ch.gcl[1 * N + r] += p
                ch.gcr_t[n * N + r] += p
    else:
        lz = ch.cr[n]
        ch.gcr[n] = 1.0
    if lz == -INFINITY:
        free(A)
        free(grads)
        return MARG_NO_TREE
    if not isfinite(lz):
        free(A)
        free(grads)
        return MARG_OVERFLOW
    log_z[0] = lz

    # Outside = reverse-mode derivative of the inside pass, by decreasing
    # width. A cell's gradient only receives contributions from wider spans,
    # except CL[s, t] -> IL[s, t] and CR[s, t] -> IR[s, t], which come first.
    for w in range(N - 1, 0, -1):
        for s in range(start, N - w):
            t = s + w
            X = ch.cl[s * N + t]
            g = ch.gcl[s * N + t] + ch.gcl_t[t * N + s]
            if g != 0.0 and X != -INFINITY:
                for r in range(s, t):
                    x = ch.cl[s * N + r] + ch.il_t[t * N + r] - X
                    if x > LOG_NEGLIGIBLE:
                        p = g * exp(x)
                        ch.gcl[s * N + r] += p
                        ch.gil_t[t * N + r] += p
            X = ch.cr[s * N + t]
            g = ch.gcr[s * N + t] + ch.gcr_t[t * N + s]
            if g != 0.0 and X != -INFINITY:
                for r in range(s + 1, t + 1):
                    x = ch.ir[s * N + r] + ch.cr_t[t * N + r] - X
                    if x > LOG_NEGLIGIBLE:
                        p = g * exp(x)
                        ch.gir[s * N + r] += p
                        ch.gcr_t[t * N + r] += p
            # (sums of probabilities can round a hair above 1)
            marginals[s * N + t] = min(ch.gir[s * N + t], 1.0)
            if s > 0:
                marginals[t * N + s] = min(ch.gil_t[t * N + s], 1.0)
            X = ch.sp[s * N + t]
            g = ch.gir[s * N + t] + ch.gil_t[t * N + s]
            if g != 0.0 and X != -INFINITY:
                for r in range(s, t):
                    x = ch.cr[s * N + r] + ch.cl_t[t * N + r + 1] - X
                    if x > LOG_NEGLIGIBLE:
                        p = g * exp(x)
                        ch.gcr[s * N + r] += p
                        ch.gcl_t[t * N + r + 1] += p
    free(A)
    free(grads)
    return MARG_OK


# ---------------------------------------------------------------------------
# Python entry points


def checked_scores(scores, temperature, name):
    """(float32 C-contiguous scores, temperature as float), or ValueError
    naming the first bad entry: scores must be a square (n+1) x (n+1) matrix,
    finite or -inf outside column 0 and the diagonal; T finite and > 0."""
    arr = np.ascontiguousarray(scores, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(
            f"{name}: scores must be a square (n+1) x (n+1) matrix (row/column 0 = "
            f"root, n >= 0), got an array of shape {arr.shape}"
        )
    T = float(temperature)
    if not (T > 0.0 and T < INFINITY):
        raise ValueError(f"{name}: temperature must be a finite number > 0, got {temperature!r}")
    used = arr.copy()
    used[:, 0] = 0.0
    np.fill_diagonal(used, 0.0)
    bad = np.isnan(used) | (used == np.inf)
    if bad.any():
        h, c = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}: scores[{h}, {c}] is {arr[h, c]} (after conversion to float32); "
            "arc scores must be finite, or -inf for a forbidden arc"
        )
    return arr, T


def raise_for_code(int rc, str name, int n, double T, bint single_root=True):
    """Raise the Python error of a MARG_* code (nothing for MARG_OK)."""
    if rc == MARG_NO_MEMORY:
        raise MemoryError(f"{name}: could not allocate work memory for n={n}")
    if rc == MARG_NO_TREE:
        kind = "single-root " if single_root else ""
        raise ValueError(
            f"{name}: every {kind}tree over the {n} words uses a forbidden (-inf) arc, "
            "so no tree has positive probability"
        )
    if rc == MARG_OVERFLOW:
        raise ValueError(
            f"{name}: scores / temperature (temperature={T!r}) overflow double precision"
        )
    if rc == MARG_PRECISION:
        raise FloatingPointError(
            f"{name}: the matrix-tree marginals would be inaccurate at "
            f"temperature={T!r} (n={n}): estimated rounding error above 1e-6, as "
            "the distribution is too peaked for the determinant in double "
            "precision; use a larger temperature, or projective_marginals"
        )


cdef object call_marginals(marginals_fn fn, object scores, object temperature,
                  bint single_root, str name):
    arr, T = checked_scores(scores, temperature, name)
    cdef const float[:, ::1] view = arr
    cdef int n = arr.shape[0] - 1
    cdef int rc
    cdef double t = T
    cdef double lz = 0.0
    out = np.empty((n + 1, n + 1), dtype=np.float64)
    cdef double[:, ::1] ov = out
    with nogil:
        rc = fn(&view[0, 0], n, t, single_root, &ov[0, 0], &lz)
    raise_for_code(rc, name, n, t, single_root)
    return out, float(lz)


def projective_marginals(scores, temperature=1.0, single_root=True):
    """Arc marginals and log partition function over projective trees.

    scores: (n+1) x (n+1) arc scores (converted to float32), ``scores[h, c]``
        for h -> c, index 0 the root; -inf forbids an arc. Column 0 and the
        diagonal are ignored.
    temperature: T > 0, p(tree) proportional to exp(score(tree) / T).
    single_root: exactly one word attached to the root (default), as eisner.

    Returns ``(marginals, log_z)``: float64 (n+1, n+1) array with
    ``marginals[h, c] = p(h -> c)`` (column 0 and the diagonal 0, each word's
    column sums to 1), and log Z as a Python float. d log Z / d scores[h, c]
    = marginals[h, c] / T. Inside-outside over Eisner's chart (on scaled
    weights, in log space where they leave their range).
    Raises ValueError if every tree uses a forbidden arc.
    """
    return call_marginals(projective_marginals_c, scores, temperature, single_root,
                 "projective_marginals")

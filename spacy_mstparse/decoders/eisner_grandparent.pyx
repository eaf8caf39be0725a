"""Exact projective decoding with sibling and grandparent factors: the
"model 1" chart of Koo & Collins (2010, "Efficient third-order dependency
parsers"), whose parts are grand-siblings (g, h, s, c); here a part scores
``sib[h, s, c] + grand[g, h, c]`` (McDonald & Pereira 2006 siblings plus
Carreras 2007 / Koo & Collins 2010 grandparents).

A tree's score is the sum of its arc scores ``arc[h, c]``, its sibling
scores (for each head and side, the dependents from the head outwards c1,
c2, ...: ``sib[h, h, c1] + sib[h, c1, c2] + ...``, as second-order Eisner),
the stop factors of Koo & Collins (2010) as second-order Eisner (every word
h >= 1 and side: ``sib[h, c, h]`` for the outermost dependent c there, or
``sib[h, h, h]`` / ``sib[h, 0, h]`` when h has no right / left dependent)
and its grandparent scores ``grand[g, h, c]`` for every arc h -> c whose
head h has the head g (the single root child has none).

Chart (spans of the words 1..n; every span carries the head's head g,
which lies outside it, as Koo & Collins' g-spans):

- ``C[g, h, e]``: complete, headed by h (head g), covering h..e (either
  side): all of h's dependents on that side, so it carries h's stop factor
  there: ``C[g, h, e] = max_m I[g, h, m] + C[h, m, e] + sib[h, m, h]`` (m the
  outermost); the empty spans are h's no-dependent stops, ``C[g, h, h] =
  sib[h, h, h]`` on the right, ``sib[h, 0, h]`` on the left (two cells:
  see ``_ci``);
- ``I[g, h, m]``: incomplete, arc h -> m: ``arc[h, m] + grand[g, h, m]`` plus
  either ``sib[h, h, m] + C[h, m, h +- 1]`` (m is h's first child on that
  side) or ``I[g, h, s] + S[h, s, m] + sib[h, s, m]`` (s the previous one);
- ``S[h, s, m]``: s and m adjacent dependents of h, s nearer to h:
  ``C[h, s, r] + C[h, m, r +- 1]`` over the split r.

The root's one child m is chosen at the end: ``arc[0, m] + sib[0, 0, m] +
C[0, m, 1] + C[0, m, n]``. Unpruned this is O(n^4) time and O(n^3) memory;
the grandparent index only runs over the allowed heads of h (finite arc
scores), so with K heads kept per word (``pruning.keep_best_heads``) the
chart has O(K n^2) cells and costs O(K n^3) at most.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

import numpy as np

from .trees import NoTreeError


cdef struct Chart:
    int N
    int K
    const float* arc
    const float* sib
    const float* grand
    int* nh       # [c]: allowed heads of c (the root: one pseudo head, -1)
    int* hl       # [c*K + j]: the j-th allowed head of c
    int* slot     # [g*N + c]: j with hl[c*K + j] == g, or -1
    double* stop  # [h*N + x]: sib[h, x, h], word h's stop factor (0 without sib)
    double* C     # [(h*K + gs)*N + e]
    double* I     # [(h*K + gs)*N + m]
    double* S     # [(m*K + hs)*N + s]
    int* Cbp      # m
    int* Ibp      # previous sibling s (h: first child)
    int* Sbp      # split r
    int* heads


cdef inline Py_ssize_t _at(const Chart* ch, int x, int j, int y) noexcept nogil:
    return (<Py_ssize_t>x * ch.K + j) * ch.N + y


cdef inline double _sib(const Chart* ch, int h, int s, int c) noexcept nogil:
    if ch.sib == NULL:
        return 0.0
    return ch.sib[(<Py_ssize_t>h * ch.N + s) * ch.N + c]


cdef inline double _grand(const Chart* ch, int g, int h, int c) noexcept nogil:
    if g < 0 or ch.grand == NULL:
        return 0.0
    return ch.grand[(<Py_ssize_t>g * ch.N + h) * ch.N + c]


cdef inline Py_ssize_t _ci(const Chart* ch, int h, int j, int e, bint right) noexcept nogil:
    """Index of C[g, h, e] (j: g's slot among h's heads) on h's right (e >= h)
    or left (e <= h) side. Left spans are stored one place down (e - 1 >= 0),
    so the right and left empty spans (e == h) get cells of their own."""
    return _at(ch, h, j, e - 1 + right)


cdef void _fill_s(Chart* ch, int s, int m) noexcept nogil:
    """S[h, s, m] for every head h of both s and m on the far side of s."""
    cdef int N = ch.N, j, h, hs_s, r, lo, hi, best_r
    cdef double best, v, a, b
    cdef bint right = m > s
    for j in range(ch.nh[m]):
        h = ch.hl[m * ch.K + j]
        if h < 0 or (right and h >= s) or (not right and h <= s):
            continue
        hs_s = ch.slot[h * N + s]
        if hs_s < 0:
            continue
        best = -INFINITY
        best_r = -1
        if right:
            lo, hi = s, m - 1
        else:
            lo, hi = m, s - 1
        for r in range(lo, hi + 1):
            if right:   # s's right side next to m's left side
                a = ch.C[_ci(ch, s, hs_s, r, True)]
                b = ch.C[_ci(ch, m, j, r + 1, False)]
            else:       # m's right side next to s's left side
                a = ch.C[_ci(ch, m, j, r, True)]
                b = ch.C[_ci(ch, s, hs_s, r + 1, False)]
            v = a + b
            if v > best:
                best = v
                best_r = r
        ch.S[_at(ch, m, j, s)] = best
        ch.Sbp[_at(ch, m, j, s)] = best_r


cdef void _fill_i(Chart* ch, int h, int m) noexcept nogil:
    """I[g, h, m] for every head g of h (the arc h -> m must be allowed)."""
    cdef int N = ch.N, gs, g, s, hm, step, best_s
    cdef double base, best, v, first
    if ch.slot[h * N + m] < 0:
        return
    hm = ch.slot[h * N + m]
    step = 1 if m > h else -1
    for gs in range(ch.nh[h]):
        g = ch.hl[h * ch.K + gs]
        base = ch.arc[h * N + m] + _grand(ch, g, h, m)
        if base == -INFINITY:
            continue
        best = -INFINITY
        best_s = -1
        first = _sib(ch, h, h, m) + ch.C[_ci(ch, m, hm, h + step, m < h)]
        if first > best:
            best = first
            best_s = h
        s = h + step
        while s != m:
            if ch.slot[h * N + s] >= 0:
                v = ch.I[_at(ch, h, gs, s)] + ch.S[_at(ch, m, hm, s)] + _sib(ch, h, s, m)
                if v > best:
                    best = v
                    best_s = s
            s += step
        if best > -INFINITY:
            ch.I[_at(ch, h, gs, m)] = base + best
            ch.Ibp[_at(ch, h, gs, m)] = best_s


cdef void _fill_c(Chart* ch, int h, int e) noexcept nogil:
    """C[g, h, e] for every head g of h; m: h's outermost dependent on
    that side (its stop factor)."""
    cdef int N = ch.N, gs, m, step, best_m, hm
    cdef double best, v
    cdef bint right = e > h
    step = 1 if right else -1
    for gs in range(ch.nh[h]):
        best = -INFINITY
        best_m = -1
        m = h + step
        while True:
            hm = ch.slot[h * N + m]
            if hm >= 0:
                v = ch.I[_at(ch, h, gs, m)] + ch.C[_ci(ch, m, hm, e, right)] + ch.stop[h * N + m]
                if v > best:
                    best = v
                    best_m = m
            if m == e:
                break
            m += step
        ch.C[_ci(ch, h, gs, e, right)] = best
        ch.Cbp[_ci(ch, h, gs, e, right)] = best_m


cdef void _back_s(Chart* ch, int h, int s, int m) noexcept nogil:
    cdef int N = ch.N
    cdef int hm = ch.slot[h * N + m], hs = ch.slot[h * N + s]
    cdef int r = ch.Sbp[_at(ch, m, hm, s)]
    if m > s:
        _back_c(ch, s, hs, r)
        _back_c(ch, m, hm, r + 1)
    else:
        _back_c(ch, m, hm, r)
        _back_c(ch, s, hs, r + 1)


cdef void _back_i(Chart* ch, int h, int gs, int m) noexcept nogil:
    cdef int N = ch.N
    cdef int hm = ch.slot[h * N + m]
    cdef int s = ch.Ibp[_at(ch, h, gs, m)]
    ch.heads[m] = h
    if s == h:
        _back_c(ch, m, hm, h + 1 if m > h else h - 1)
    else:
        _back_i(ch, h, gs, s)
        _back_s(ch, h, s, m)


cdef void _back_c(Chart* ch, int h, int gs, int e) noexcept nogil:
    cdef int m
    if h == e:
        return
    m = ch.Cbp[_ci(ch, h, gs, e, e > h)]
    _back_i(ch, h, gs, m)
    _back_c(ch, m, ch.slot[h * ch.N + m], e)


cdef int eisner_grandparent_decode(const float* arc, const float* sib, const float* grand,
                                   int n, int* heads, double* tree_score) noexcept nogil:
    cdef Chart ch
    cdef int N = n + 1, c, g, j, K = 1, w, a, b, m, best_m
    cdef Py_ssize_t size, i
    cdef double best, v
    ch.N = N
    ch.arc, ch.sib, ch.grand, ch.heads = arc, sib, grand, heads
    ch.nh = <int*>malloc(N * sizeof(int))
    ch.slot = <int*>malloc(<size_t>N * N * sizeof(int))
    ch.stop = <double*>malloc(<size_t>N * N * sizeof(double))
    if ch.nh == NULL or ch.slot == NULL or ch.stop == NULL:
        free(ch.nh); free(ch.slot); free(ch.stop)
        return -1
    for c in range(1, N):       # row 0, the root's, stays unused
        for j in range(N):
            ch.stop[c * N + j] = _sib(&ch, c, j, c)
    ch.nh[0] = 1
    for c in range(1, N):
        ch.nh[c] = 0
        for g in range(N):
            if g != c and arc[g * N + c] > -INFINITY:
                ch.nh[c] += 1
        if ch.nh[c] > K:
            K = ch.nh[c]
    ch.K = K
    size = <Py_ssize_t>N * K * N
    ch.hl = <int*>malloc(<size_t>N * K * sizeof(int))
    ch.C = <double*>malloc(size * sizeof(double))
    ch.I = <double*>malloc(size * sizeof(double))
    ch.S = <double*>malloc(size * sizeof(double))
    ch.Cbp = <int*>malloc(size * sizeof(int))
    ch.Ibp = <int*>malloc(size * sizeof(int))
    ch.Sbp = <int*>malloc(size * sizeof(int))
    cdef int status = 0
    if (ch.hl == NULL or ch.C == NULL or ch.I == NULL or ch.S == NULL or ch.Cbp == NULL
            or ch.Ibp == NULL or ch.Sbp == NULL):
        status = -1
    else:
        for i in range(<Py_ssize_t>N * N):
            ch.slot[i] = -1
        ch.hl[0] = -1
        for c in range(1, N):
            j = 0
            for g in range(N):
                if g != c and arc[g * N + c] > -INFINITY:
                    ch.hl[c * K + j] = g
                    ch.slot[g * N + c] = j
                    j += 1
        for i in range(size):
            ch.C[i] = -INFINITY
            ch.I[i] = -INFINITY
            ch.S[i] = -INFINITY
        for c in range(1, N):
            # c has no right / left dependent: its stop factors
            for j in range(ch.nh[c]):
                ch.C[_ci(&ch, c, j, c, True)] = ch.stop[c * N + c]
                ch.C[_ci(&ch, c, j, c, False)] = ch.stop[c * N]
        for w in range(1, n):
            for a in range(1, N - w):
                b = a + w
                _fill_s(&ch, a, b)
                _fill_s(&ch, b, a)
                _fill_i(&ch, a, b)
                _fill_i(&ch, b, a)
                _fill_c(&ch, a, b)
                _fill_c(&ch, b, a)
        best = -INFINITY
        best_m = -1
        for m in range(1, N):
            j = ch.slot[m]          # slot of the root among m's heads (g = 0)
            if j < 0:
                continue
            v = (arc[m] + _sib(&ch, 0, 0, m) + ch.C[_ci(&ch, m, j, 1, False)]
                 + ch.C[_ci(&ch, m, j, n, True)])
            if v > best:
                best = v
                best_m = m
        if best_m < 0:
            status = 0
        else:
            status = 1
            heads[0] = -1
            heads[best_m] = 0
            j = ch.slot[best_m]
            _back_c(&ch, best_m, j, 1)
            _back_c(&ch, best_m, j, n)
            tree_score[0] = best
    free(ch.nh); free(ch.slot); free(ch.stop); free(ch.hl); free(ch.C); free(ch.I); free(ch.S)
    free(ch.Cbp); free(ch.Ibp); free(ch.Sbp)
    return status


def checked_cube(scores, N, name):
    """``scores`` as a C-contiguous float32 (N, N, N) array (None stays None)."""
    if scores is None:
        return None
    out = np.ascontiguousarray(scores, dtype=np.float32)
    if out.shape != (N, N, N):
        raise ValueError(f"{name} must have shape {(N, N, N)}, got {out.shape}")
    return out


def eisner_grandparent(arc, sib=None, grand=None):
    """Best projective single-root tree (int32 heads, heads[0] = -1) under
    arc, sibling and grandparent scores (see the module docstring); -inf
    forbids. Raises ``NoTreeError`` when every projective tree is forbidden."""
    cdef float[:, ::1] a = np.ascontiguousarray(arc, dtype=np.float32)
    cdef int N = a.shape[0]
    if a.shape[1] != N or N < 2:
        raise ValueError(f"arc must be a square matrix of at least 2 x 2, got {np.shape(arc)}")
    sib_arr = checked_cube(sib, N, "sib")
    grand_arr = checked_cube(grand, N, "grand")
    cdef float[:, :, ::1] sv
    cdef float[:, :, ::1] gv
    cdef const float* sp = NULL
    cdef const float* gp = NULL
    if sib_arr is not None:
        sv = sib_arr
        sp = &sv[0, 0, 0]
    if grand_arr is not None:
        gv = grand_arr
        gp = &gv[0, 0, 0]
    heads = np.full(N, -1, dtype=np.int32)
    cdef int[::1] hv = heads
    cdef double score = 0.0
    cdef int status
    with nogil:
        status = eisner_grandparent_decode(&a[0, 0], sp, gp, N - 1, &hv[0], &score)
    if status < 0:
        raise MemoryError()
    if status == 0:
        raise NoTreeError("no projective single-root tree avoids the forbidden arcs")
    return heads


def grandparent_tree_score(arc, sib, grand, heads):
    """Score of a tree under arc, sibling and stop (``sib``, may be None) and
    grandparent (may be None) scores, as the decoder counts it (float64):
    ``Factors.tree_score``."""
    from .dispatch import Factors   # dispatch cimports this module

    return Factors(arc, sib, grand).tree_score(heads)

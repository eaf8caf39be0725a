"""First-order projective dependency decoding with Eisner's O(n^3) algorithm.

Follows Eisner (1996) as used for first-order MST parsing by McDonald,
Crammer & Pereira (2005, "Online large-margin training of dependency
parsers"). The chart holds four tables over spans [s, t] (s < t):

- ``ir[s, t]``: incomplete span, arc s -> t, words strictly inside not done;
- ``il[s, t]``: incomplete span, arc t -> s;
- ``cr[s, t]``: complete span headed by s, covering s..t;
- ``cl[s, t]``: complete span headed by t, covering s..t.

Tables read along columns in the inner loops are also kept transposed (``cr``,
``cl``), or only transposed (``il``), so every inner loop walks contiguous
memory.

With ``single_root=False`` this is the classic algorithm over nodes 0..n, so
the root may take several children. With ``single_root=True`` the chart is
built over the words 1..n only and the single root child r is chosen
exactly as ``argmax_r s(0, r) + cl[1, r] + cr[r, n]``.

Forbidden arcs: a score of -inf forbids the arc. The chart needs no test for
it: a span that can only be built with a forbidden arc scores -inf and never
wins a max against a finite span, so whenever some projective tree avoids
every forbidden arc the best chart item is finite and its back-pointers use
only allowed arcs. When the best item is -inf no such tree exists and the
decoder reports it (``DECODE_NO_TREE``, a ``NoTreeError`` in Python) instead
of returning a tree.

Conventions (see ARCHITECTURE.md): ``scores[h*(n+1)+c]`` is the score of the
arc h -> c, index 0 is the artificial root, ``heads[0] = -1``. The chart is
kept in double precision.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

from .call_decoder cimport DECODE_NO_MEMORY, DECODE_NO_TREE, DECODE_OK, call_decoder


cdef struct Chart:
    int N
    double* cr
    double* cl
    double* ir
    int* bp_cr
    int* bp_cl
    int* bp_ir
    int* bp_il


# Backtracking: every call covers a strictly smaller span, so the recursion
# depth is O(n).
cdef void _back_cr(const Chart* ch, int* heads, int s, int t) noexcept nogil:
    cdef int r
    if s == t:
        return
    r = ch.bp_cr[s * ch.N + t]
    _back_ir(ch, heads, s, r)
    _back_cr(ch, heads, r, t)


cdef void _back_cl(const Chart* ch, int* heads, int s, int t) noexcept nogil:
    cdef int r
    if s == t:
        return
    r = ch.bp_cl[s * ch.N + t]
    _back_cl(ch, heads, s, r)
    _back_il(ch, heads, r, t)


cdef void _back_ir(const Chart* ch, int* heads, int s, int t) noexcept nogil:
    cdef int r = ch.bp_ir[s * ch.N + t]
    heads[t] = s
    _back_cr(ch, heads, s, r)
    _back_cl(ch, heads, r + 1, t)


cdef void _back_il(const Chart* ch, int* heads, int s, int t) noexcept nogil:
    cdef int r = ch.bp_il[s * ch.N + t]
    heads[s] = t
    _back_cr(ch, heads, s, r)
    _back_cl(ch, heads, r + 1, t)


cdef double _finish(const Chart* ch, const float* scores, int n, int* heads,
                    bint single_root) noexcept nogil:
    """Pick the root child (single_root), backtrack; return the best tree's score."""
    cdef int N = n + 1, r, best_r = 1
    cdef double top, v
    if single_root:
        top = -INFINITY
        for r in range(1, N):
            v = <double>scores[r] + ch.cl[1 * N + r] + ch.cr[r * N + n]
            if v > top:
                top = v
                best_r = r
        if top > -INFINITY:
            heads[best_r] = 0
            _back_cl(ch, heads, 1, best_r)
            _back_cr(ch, heads, best_r, n)
    else:
        top = ch.cr[n]   # cr[0, n]
        if top > -INFINITY:
            _back_cr(ch, heads, 0, n)
    return top


cdef int eisner_decode(const float* scores, int n, int* heads,
                       bint single_root) noexcept nogil:
    cdef int N, s, t, r, w, start, best_r
    cdef size_t NN
    cdef double best, v, top
    cdef double* buf
    cdef int* bp
    cdef double* cr_t   # cr_t[t*N+s] = cr[s*N+t]
    cdef double* cl_t   # cl_t[t*N+s] = cl[s*N+t]
    cdef double* il_t   # il_t[t*N+s] = il[s, t]; il is only read by column
    cdef Chart ch
    if n < 0:
        return DECODE_NO_MEMORY
    heads[0] = -1
    if n == 0:
        return DECODE_OK
    N = n + 1
    NN = <size_t>N * <size_t>N
    buf = <double*>malloc(6 * NN * sizeof(double))
    bp = <int*>malloc(4 * NN * sizeof(int))
    if buf == NULL or bp == NULL:
        free(buf)
        free(bp)
        return DECODE_NO_MEMORY
    ch.N = N
    ch.cr = buf
    ch.cl = buf + NN
    ch.ir = buf + 2 * NN
    cr_t = buf + 3 * NN
    cl_t = buf + 4 * NN
    il_t = buf + 5 * NN
    ch.bp_cr = bp
    ch.bp_cl = bp + NN
    ch.bp_ir = bp + 2 * NN
    ch.bp_il = bp + 3 * NN
    for s in range(N):
        ch.cr[s * N + s] = 0.0
        ch.cl[s * N + s] = 0.0
        cr_t[s * N + s] = 0.0
        cl_t[s * N + s] = 0.0
    # In single-root mode the root (node 0) is handled after the chart.
    start = 1 if single_root else 0
    for w in range(1, N):
        for s in range(start, N - w):
            t = s + w
            # Incomplete spans: both directions share the best split point,
            # max over s <= r < t of cr[s, r] + cl[r+1, t].
            best = -INFINITY
            best_r = s
            for r in range(s, t):
                v = ch.cr[s * N + r] + cl_t[t * N + r + 1]
                if v > best:
                    best = v
                    best_r = r
            ch.ir[s * N + t] = best + <double>scores[s * N + t]
            ch.bp_ir[s * N + t] = best_r
            ch.bp_il[s * N + t] = best_r
            if s == 0:
                # No arc may enter the root.
                il_t[t * N] = -INFINITY
            else:
                il_t[t * N + s] = best + <double>scores[t * N + s]
            # Complete span headed by s: s -> r, then r's complete span to t;
            # max over s < r <= t of ir[s, r] + cr[r, t].
            best = -INFINITY
            best_r = t
            for r in range(s + 1, t + 1):
                v = ch.ir[s * N + r] + cr_t[t * N + r]
                if v > best:
                    best = v
                    best_r = r
            ch.cr[s * N + t] = best
            cr_t[t * N + s] = best
            ch.bp_cr[s * N + t] = best_r
            # Complete span headed by t: r's complete span from s, then t -> r;
            # max over s <= r < t of cl[s, r] + il[r, t].
            if s == 0:
                ch.cl[t] = -INFINITY
                cl_t[t * N] = -INFINITY
                ch.bp_cl[t] = 0
            else:
                best = -INFINITY
                best_r = s
                for r in range(s, t):
                    v = ch.cl[s * N + r] + il_t[t * N + r]
                    if v > best:
                        best = v
                        best_r = r
                ch.cl[s * N + t] = best
                cl_t[t * N + s] = best
                ch.bp_cl[s * N + t] = best_r
    top = _finish(&ch, scores, n, heads, single_root)
    free(buf)
    free(bp)
    # top = -inf: every tree uses a forbidden arc.
    return DECODE_OK if top > -INFINITY else DECODE_NO_TREE


def eisner(scores, single_root=True):
    """Best projective tree for a (n+1) x (n+1) arc score matrix.

    scores[h, c] is the score of the arc h -> c; index 0 is the root. Returns
    an int32 array ``heads`` of length n+1 with ``heads[0] = -1``. With
    ``single_root=True`` exactly one word is attached to the root.

    A score of -inf forbids the arc; raises ``NoTreeError`` (a ValueError)
    when every projective tree uses a forbidden arc.
    """
    return call_decoder(eisner_decode, scores, single_root, "eisner", "projective ")

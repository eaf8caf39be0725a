"""Exact projective decoding with sibling (second-order) scores and k-best
lists: McDonald & Pereira (2006)'s second-order Eisner algorithm, with every
chart cell holding its k best items (Huang & Chiang 2005, Algorithm 1 with
the "(i+1)(j+1) <= k" pruning of the pair grid).

A tree's score is the sum of its arc scores ``arc[h, c]`` plus, for every
head h and each side of h, the sibling scores of its dependents on that side
taken from the head outwards c1, c2, ...: ``sib[h, h, c1]`` (c1 is the first
child: "no sibling" marker) + ``sib[h, c1, c2]`` + ``sib[h, c2, c3]`` + ...
plus the STOP factors of Koo & Collins (2010) (TurboParser's valency
parts), for every word h >= 1 and each side: ``sib[h, c, h]`` when c is h's
outermost dependent on that side, or, when h has none there,
``sib[h, h, h]`` (no right dependent) / ``sib[h, 0, h]`` (no left
dependent). These cells are never sibling pairs; the root (h = 0, one
child) has no stop factors (``sib[0, x, 0]`` is never read).
With ``sib=None`` all sibling scores are 0 and this is first-order k-best
Eisner (one decoder, the variant is just the scores passed).

Chart over the words 1..n (spans [s, t], s <= t), with the single root child
m chosen at the end as ``arc[0, m] + sib[0, 0, m] + CL[1, m] + CR[m, n]``:

- ``CR[s, t]``: complete, headed by s, covering s..t: all of s's right
  dependents, so it carries s's right stop factor: ``CR[s, s] =
  sib[s, s, s]``, ``CR[s, t] = IR[s, r] + CR[r, t] + sib[s, r, s]`` (r the
  outermost one);
- ``CL[s, t]``: complete, headed by t, mirrored: ``CL[t, t] = sib[t, 0, t]``,
  ``CL[s, t] = CL[s, r] + IL[r, t] + sib[t, r, t]``;
- ``IR[s, t]``: incomplete, arc s -> t: either t is s's first right child
  (``CL[s+1, t]``) or its previous right child is r (``IR[s, r] + SB[r, t]``);
- ``IL[s, t]``: incomplete, arc t -> s, mirrored (``CR[s, t-1]`` or
  ``SB[s, r] + IL[r, t]``);
- ``SB[s, t]``: s and t are adjacent siblings of a head outside [s, t]:
  ``CR[s, r] + CL[r+1, t]``.

Each cell keeps up to k items sorted by score with back-pointers (rule,
split, rank of the left part, rank of the right part). Two sorted lists of
length k combine into at most k useful pairs (i, j) with (i+1)(j+1) <= k, so
k-best costs about k log k times the 1-best chart. Ties keep the earlier
item. Memory is O(k n^2); the sibling score array is (n+1)^3 float32.

Forbidden arcs and sibling pairs: a score of -inf (in ``arc`` or ``sib``)
forbids what it scores (a -inf stop cell forbids that outermost dependent,
or having no dependent on that side). A combination whose arc and sibling
(or stop) score add up to -inf is never pushed and a -inf base cell is left
empty, so no cell ever holds a -inf item, the lists hold only
allowed trees (fewer than k if fewer exist), and when the root list is empty
no allowed projective tree exists (``NoTreeError`` in Python).
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

from .factors cimport float_data

import numpy as np

from .trees import NoTreeError

# Cell kinds.
DEF K_CR = 0
DEF K_CL = 1
DEF K_IR = 2
DEF K_IL = 3
DEF K_SB = 4
DEF N_KINDS = 5


cdef struct KChart:
    int N          # n + 1
    int k
    double* score  # [kind][s][t][e]
    int* count     # [kind][s][t]
    int* bp        # [kind][s][t][e][4]: rule, r, rank a, rank b
    # a copy of the finished cells' lists by column, [kind][t][s][e]: the
    # rules read the cells (r, t) of every split r, which are contiguous here
    double* col_score
    int* col_count


cdef inline Py_ssize_t _cell(const KChart* ch, int kind, int s, int t) noexcept nogil:
    return (<Py_ssize_t>kind * ch.N + s) * ch.N + t


cdef inline Py_ssize_t _col(const KChart* ch, int kind, int s, int t) noexcept nogil:
    return (<Py_ssize_t>kind * ch.N + t) * ch.N + s


cdef inline void _finish(KChart* ch, int kind, int s, int t) noexcept nogil:
    """Copy the list of cell (kind, s, t) to the column copy."""
    cdef Py_ssize_t cell = _cell(ch, kind, s, t), col = _col(ch, kind, s, t)
    cdef int e, cnt = ch.count[cell]
    ch.col_count[col] = cnt
    for e in range(cnt):
        ch.col_score[col * ch.k + e] = ch.score[cell * ch.k + e]


cdef inline void _push(KChart* ch, Py_ssize_t cell, double v, int rule, int r,
                       int a, int b) noexcept nogil:
    """Insert an item into a cell's sorted top-k list (if it makes the cut)."""
    cdef int k = ch.k
    cdef int cnt = ch.count[cell]
    cdef double* sc = ch.score + cell * k
    cdef int* bp = ch.bp + cell * k * 4
    cdef int pos, q
    if cnt == k and v <= sc[k - 1]:
        return
    pos = cnt if cnt < k else k - 1
    while pos > 0 and sc[pos - 1] < v:
        pos -= 1
    q = (cnt if cnt < k else k - 1)
    while q > pos:
        sc[q] = sc[q - 1]
        bp[4 * q] = bp[4 * (q - 1)]
        bp[4 * q + 1] = bp[4 * (q - 1) + 1]
        bp[4 * q + 2] = bp[4 * (q - 1) + 2]
        bp[4 * q + 3] = bp[4 * (q - 1) + 3]
        q -= 1
    sc[pos] = v
    bp[4 * pos] = rule
    bp[4 * pos + 1] = r
    bp[4 * pos + 2] = a
    bp[4 * pos + 3] = b
    if cnt < k:
        ch.count[cell] = cnt + 1


cdef inline void _combine(KChart* ch, Py_ssize_t out, Py_ssize_t left, Py_ssize_t right_col,
                          double extra, int rule, int r) noexcept nogil:
    """Push the useful pairs left[i] + right[j] + extra into cell ``out``:
    ``left`` a cell's sorted list, ``right_col`` a column copy's."""
    cdef int k = ch.k
    cdef int na = ch.count[left], nb = ch.col_count[right_col]
    cdef const double* A = ch.score + left * k
    cdef const double* B = ch.col_score + right_col * k
    cdef int i, j
    cdef double v
    cdef const double* worst = ch.score + out * k + (k - 1)
    if extra == -INFINITY or nb == 0:
        return      # a forbidden arc or sibling pair, or nothing to pair with
    for i in range(na):
        if ch.count[out] == k and A[i] + B[0] + extra <= worst[0]:
            return
        for j in range(nb):
            if (i + 1) * (j + 1) > k:
                break
            v = A[i] + B[j] + extra
            if ch.count[out] == k and v <= worst[0]:
                break
            _push(ch, out, v, rule, r, i, j)


cdef void _back(const KChart* ch, int kind, int s, int t, int e, int* heads) noexcept nogil:
    """Write the arcs of item e of cell (kind, s, t) into heads. Every call
    covers a strictly smaller span or moves from an I cell to its parts, so
    the depth is O(n)."""
    cdef Py_ssize_t cell
    cdef const int* bp
    cdef int rule, r, a, b
    if s == t:
        return
    cell = _cell(ch, kind, s, t)
    bp = ch.bp + (cell * ch.k + e) * 4
    rule = bp[0]; r = bp[1]; a = bp[2]; b = bp[3]
    if kind == K_CR:
        _back(ch, K_IR, s, r, a, heads)
        _back(ch, K_CR, r, t, b, heads)
    elif kind == K_CL:
        _back(ch, K_CL, s, r, a, heads)
        _back(ch, K_IL, r, t, b, heads)
    elif kind == K_SB:
        _back(ch, K_CR, s, r, a, heads)
        _back(ch, K_CL, r + 1, t, b, heads)
    elif kind == K_IR:
        heads[t] = s
        if rule == 0:
            _back(ch, K_CL, s + 1, t, b, heads)
        else:
            _back(ch, K_IR, s, r, a, heads)
            _back(ch, K_SB, r, t, b, heads)
    else:  # K_IL
        heads[s] = t
        if rule == 0:
            _back(ch, K_CR, s, t - 1, a, heads)
        else:
            _back(ch, K_SB, s, r, a, heads)
            _back(ch, K_IL, r, t, b, heads)


cdef int eisner_second_order_decode(const float* arc, const float* sib, int n, int k,
                                    int* heads, double* tree_scores) noexcept nogil:
    """The k best projective single-root trees. ``heads`` receives up to k rows
    of n+1 ints, ``tree_scores`` their scores (best first). ``sib`` may be
    NULL (first order); -inf scores forbid. Returns the number of trees found
    (0 when every tree is forbidden, n >= 1), or -1 when memory could not be
    allocated."""
    cdef int N = n + 1
    cdef int w, s, t, r, m, e, i
    cdef Py_ssize_t n_cells = <Py_ssize_t>N_KINDS * N * N
    cdef Py_ssize_t c_out, root_cell
    cdef double extra
    cdef KChart ch
    cdef double* root_score
    cdef int* root_bp
    cdef int root_count
    cdef double* stop     # [h*N + x]: sib[h, x, h], contiguous for the chart
    if n == 0:
        return 0
    ch.N = N
    ch.k = k
    ch.score = <double*>malloc(n_cells * k * sizeof(double))
    ch.count = <int*>malloc(n_cells * sizeof(int))
    ch.bp = <int*>malloc(n_cells * k * 4 * sizeof(int))
    ch.col_score = <double*>malloc(n_cells * k * sizeof(double))
    ch.col_count = <int*>malloc(n_cells * sizeof(int))
    stop = <double*>malloc(<size_t>N * N * sizeof(double))
    if ch.score is NULL or ch.count is NULL or ch.bp is NULL or stop is NULL \
            or ch.col_score is NULL or ch.col_count is NULL:
        free(ch.score); free(ch.count); free(ch.bp); free(stop)
        free(ch.col_score); free(ch.col_count)
        return -1
    for i in range(n_cells):
        ch.count[i] = 0
        ch.col_count[i] = 0
    for s in range(1, N):       # row 0, the root's, stays unused
        for r in range(N):
            stop[s * N + r] = sib[(s * N + r) * N + s] if sib is not NULL else 0.0
    for s in range(1, N):
        # CR[s, s] / CL[s, s]: s has no right / left dependent, scored by its
        # stop factor (a -inf one leaves the cell empty). IR[s, s] / IL[s, s]
        # are otherwise unused: they hold the zero placeholder item that the
        # first-child rules combine with (never expanded by _back).
        if stop[s * N + s] > -INFINITY:
            _push(&ch, _cell(&ch, K_CR, s, s), stop[s * N + s], 0, s, 0, 0)
        if stop[s * N] > -INFINITY:
            _push(&ch, _cell(&ch, K_CL, s, s), stop[s * N], 0, s, 0, 0)
        _push(&ch, _cell(&ch, K_IR, s, s), 0.0, 0, s, 0, 0)
        _push(&ch, _cell(&ch, K_IL, s, s), 0.0, 0, s, 0, 0)
        _finish(&ch, K_CR, s, s); _finish(&ch, K_CL, s, s); _finish(&ch, K_IL, s, s)
    # Every rule pairs a cell of the row s (primary lists) with cells (r, t)
    # of the column t (their copies), which each span's cells are copied to
    # once finished: SB and IL before CL reads IL[s, t], CR and CL at the end.
    for w in range(1, n):
        for s in range(1, N - w):
            t = s + w
            # SB[s, t]: s's right subtree next to t's left subtree.
            c_out = _cell(&ch, K_SB, s, t)
            for r in range(s, t):
                _combine(&ch, c_out, _cell(&ch, K_CR, s, r), _col(&ch, K_CL, r + 1, t), 0.0, 0, r)
            # IR[s, t]: arc s -> t (none if the arc is forbidden or pruned: -inf).
            c_out = _cell(&ch, K_IR, s, t)
            if arc[s * N + t] > -INFINITY:
                extra = arc[s * N + t] + (sib[(s * N + s) * N + t] if sib is not NULL else 0.0)
                _combine(&ch, c_out, _cell(&ch, K_IR, s, s), _col(&ch, K_CL, s + 1, t),
                      extra, 0, s)
                for r in range(s + 1, t):
                    extra = arc[s * N + t] + (sib[(s * N + r) * N + t] if sib is not NULL else 0.0)
                    _combine(&ch, c_out, _cell(&ch, K_IR, s, r), _col(&ch, K_SB, r, t),
                          extra, 1, r)
            # IL[s, t]: arc t -> s.
            c_out = _cell(&ch, K_IL, s, t)
            if arc[t * N + s] > -INFINITY:
                extra = arc[t * N + s] + (sib[(t * N + t) * N + s] if sib is not NULL else 0.0)
                _combine(&ch, c_out, _cell(&ch, K_CR, s, t - 1), _col(&ch, K_IL, t, t),
                      extra, 0, t)
                for r in range(s + 1, t):
                    extra = arc[t * N + s] + (sib[(t * N + r) * N + s] if sib is not NULL else 0.0)
                    _combine(&ch, c_out, _cell(&ch, K_SB, s, r), _col(&ch, K_IL, r, t),
                          extra, 1, r)
            _finish(&ch, K_SB, s, t); _finish(&ch, K_IL, s, t)
            # CR[s, t] and CL[s, t], with the stop factor of the head's
            # outermost dependent r.
            c_out = _cell(&ch, K_CR, s, t)
            for r in range(s + 1, t + 1):
                _combine(&ch, c_out, _cell(&ch, K_IR, s, r), _col(&ch, K_CR, r, t),
                      stop[s * N + r], 0, r)
            c_out = _cell(&ch, K_CL, s, t)
            for r in range(s, t):
                _combine(&ch, c_out, _cell(&ch, K_CL, s, r), _col(&ch, K_IL, r, t),
                      stop[t * N + r], 0, r)
            _finish(&ch, K_CR, s, t); _finish(&ch, K_CL, s, t)
    # The root's single child m. Cell (K_CR, 0, 0) is unused by the chart
    # (row 0 is the root): borrow it for the root list.
    root_cell = _cell(&ch, K_CR, 0, 0)
    ch.count[root_cell] = 0
    for m in range(1, N):
        extra = arc[m] + (sib[m] if sib is not NULL else 0.0)   # arc[0, m], sib[0, 0, m]
        _combine(&ch, root_cell, _cell(&ch, K_CL, 1, m), _col(&ch, K_CR, m, n), extra, 0, m)
    root_count = ch.count[root_cell]
    root_score = ch.score + root_cell * k
    root_bp = ch.bp + root_cell * k * 4
    for e in range(root_count):
        m = root_bp[4 * e + 1]
        for i in range(N):
            heads[e * N + i] = -1
        heads[e * N + m] = 0
        _back(&ch, K_CL, 1, m, root_bp[4 * e + 2], heads + e * N)
        _back(&ch, K_CR, m, n, root_bp[4 * e + 3], heads + e * N)
        tree_scores[e] = root_score[e]
    free(ch.score); free(ch.count); free(ch.bp); free(stop)
    free(ch.col_score); free(ch.col_count)
    return root_count


def _checked_scores(scores, sib):
    arc = np.ascontiguousarray(scores, dtype=np.float32)
    if arc.ndim != 2 or arc.shape[0] != arc.shape[1] or arc.shape[0] < 1:
        raise ValueError(
            f"scores must be a square (n+1) x (n+1) matrix, got an array of shape {arc.shape}"
        )
    N = arc.shape[0]
    if sib is not None:
        sib = np.ascontiguousarray(sib, dtype=np.float32)
        if sib.shape != (N, N, N):
            raise ValueError(f"sib must have shape {(N, N, N)}, got {sib.shape}")
    return arc, sib


def eisner_k_best(scores, sib=None, int k=5):
    """The k best projective single-root trees under arc (and sibling) scores.

    scores: (n+1) x (n+1) arc scores, ``scores[h, c]``; index 0 is the root.
    sib: None (first order) or (n+1)^3 sibling scores ``sib[h, s, c]``, with
        ``s == h`` for the first child of h on that side (read only where s is
        h or lies strictly between h and c), and the stop factors of every
        word h >= 1: ``sib[h, c, h]`` (c is h's outermost dependent on its
        side), ``sib[h, h, h]`` / ``sib[h, 0, h]`` (no right / left
        dependent); see the module docstring.
    Returns ``(heads, tree_scores)``: int32 (m, n+1) with ``heads[:, 0] = -1``
    and float64 (m,), best first, m = min(k, number of trees).

    A score of -inf (arc or sibling) forbids the arc (sibling pair): only
    trees avoiding them are listed (m counts those); raises ``NoTreeError``
    (a ValueError) when there is none.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    arc, sib_arr = _checked_scores(scores, sib)
    cdef int N = arc.shape[0]
    cdef int n = N - 1
    heads = np.full((k, N), -1, dtype=np.int32)
    tree_scores = np.zeros(k, dtype=np.float64)
    if n == 0:
        return heads[:0], tree_scores[:0]
    cdef const float[:, ::1] a = arc
    cdef const float* sp = float_data(sib_arr)
    cdef int[:, ::1] hv = heads
    cdef double[::1] tv = tree_scores
    cdef int found
    with nogil:
        found = eisner_second_order_decode(&a[0, 0], sp, n, k, &hv[0, 0], &tv[0])
    if found < 0:
        raise MemoryError(f"eisner_k_best: could not allocate the chart for n={n}, k={k}")
    if found == 0:
        raise NoTreeError(
            "eisner_k_best: no tree satisfies the constraints: every single-root projective "
            "tree uses a forbidden arc or sibling pair (score -inf)"
        )
    return heads[:found], tree_scores[:found]


def eisner_second_order(scores, sib=None):
    """Best projective single-root tree under arc plus sibling scores
    (McDonald & Pereira 2006). Returns int32 heads with ``heads[0] = -1``.
    -inf scores forbid; raises ``NoTreeError`` when no tree avoids them."""
    arc, _ = _checked_scores(scores, sib)
    if arc.shape[0] == 1:
        return np.full(1, -1, dtype=np.int32)
    heads, _ = eisner_k_best(arc, sib, 1)
    return heads[0].copy()


def second_order_tree_score(scores, sib, heads):
    """Score of a tree: its arcs plus, for every head and side, the sibling
    factors of its dependents from the head outwards and (words only) the
    stop factor of the outermost one (the decoder's model): ``Factors.tree_score``."""
    from .dispatch import Factors   # dispatch cimports this module

    return Factors(scores, sib).tree_score(heads)

"""The k best non-projective dependency trees (k best spanning arborescences).

Follows Camerini, Fratta & Maffioli (1980), "The k best spanning
arborescences of a network", as presented for dependency parsing by Hall
(2007), "K-best spanning tree parsing" (ACL).

The trees still to be listed are split into disjoint subproblems, each a score
matrix in which some arcs are forbidden (-inf) and some fixed (every other
head of the word -inf). A subproblem holds its best tree A and its next best
tree's score with the arc e of A that it lacks (NEXT). Each round takes the
subproblem whose next tree scores highest, outputs that tree (the best tree
of the subproblem with e forbidden, a Chu-Liu-Edmonds run) and splits the
subproblem in two: e fixed (best tree still A) and e forbidden (best tree the
one just output); NEXT is then computed for both. Every tree is listed once,
in order of score.

NEXT runs in one O(n^2) contraction (``cle_solve`` of chu_liu_edmonds.pyx):
the second best tree is one arc swap away from A in one of the graphs of the
contraction (the multigraph at that level), so every cell keeps the second
best original arc behind it, and every settled node's swaps are scored (see
the docstring of chu_liu_edmonds.pyx). For this the contraction must rebuild
exactly A, so it breaks ties towards A's arcs; if rounding ever makes it end
in another tree of the same score, NEXT falls back to n plain runs (best tree
without each arc of A). Total: O(k n^2) time, O(k n^2) memory.

single_root=True is exact by the same penalty as ``chu_liu_edmonds``: a
constant M larger than any difference between two tree scores is subtracted
from every root arc, so all trees with one root child come before all trees
with several, in their own order; the listing stops at the first tree with
several root children. Ties: trees of equal score come out in an arbitrary
but deterministic order; all trees listed are distinct.

Conventions (see ARCHITECTURE.md): ``scores[h*(n+1)+c]`` is the score of the
arc h -> c, index 0 is the artificial root, ``heads[0] = -1``.
"""
from operator import index

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import numpy as np

from .call_decoder cimport no_tree_error
from .chu_liu_edmonds cimport CLENext, CLEWork, cle_solve, cle_work_free, cle_work_init, fill_scores


cdef struct Slots:
    # One subproblem per slot.
    double* mat      # [slot][N*N] score matrix with its forbidden arcs
    int* tree        # [slot][N] its best tree
    double* tree_w   # that tree's score in mat
    double* value    # score of its next best tree; -inf: none
    int* e_src       # the arc of tree missing from the next best tree
    int* e_dst


cdef inline double _weight(const double* M, const int* tree, int N) noexcept nogil:
    cdef int c
    cdef double s = 0.0
    for c in range(1, N):
        s += M[tree[c] * N + c]
    return s


cdef inline int _n_root(const int* tree, int N) noexcept nogil:
    cdef int c, r = 0
    for c in range(1, N):
        if tree[c] == 0:
            r += 1
    return r


cdef inline int _best(CLEWork* wk, const double* M, int* heads) noexcept nogil:
    memcpy(wk.W, M, <size_t>wk.N * wk.N * sizeof(double))
    return cle_solve(wk, heads, NULL, NULL)


cdef void _next(CLEWork* wk, Slots* S, int i, int* scratch, bint reference) noexcept nogil:
    """Score and missing arc of the next best tree of slot i."""
    cdef int N = wk.N, c, rc
    cdef size_t NN = <size_t>N * N
    cdef const double* M = S.mat + i * NN
    cdef const int* tree = S.tree + <size_t>i * N
    cdef CLENext nx
    cdef bint same
    cdef double w
    S.value[i] = -INFINITY
    S.e_src[i] = -1
    S.e_dst[i] = -1
    if not reference:
        memcpy(wk.W, M, NN * sizeof(double))
        rc = cle_solve(wk, scratch, tree, &nx)
        same = rc == 0
        c = 1
        while same and c < N:
            same = scratch[c] == tree[c]
            c += 1
        if same:
            if nx.delta < INFINITY:
                S.value[i] = S.tree_w[i] - nx.delta
                S.e_src[i] = nx.e_src
                S.e_dst[i] = nx.e_dst
            return
    # The definition: the best tree without each arc of the best tree.
    for c in range(1, N):
        memcpy(wk.W, M, NN * sizeof(double))
        wk.W[tree[c] * N + c] = -INFINITY
        if cle_solve(wk, scratch, NULL, NULL) == 0:
            w = _weight(M, scratch, N)
            if w > S.value[i]:
                S.value[i] = w
                S.e_src[i] = tree[c]
                S.e_dst[i] = c


cdef int _k_best_decode(const float* scores, int n, int k, bint single_root, int* heads,
                        double* tree_scores, bint reference) noexcept nogil:
    cdef int N = n + 1, found = 0, n_slots, i, j, c, h, rc, es, ed
    cdef size_t NN = <size_t>N * N
    cdef double best
    cdef double* Mi
    cdef double* Mj
    cdef int* tj
    cdef CLEWork wk
    cdef Slots S
    cdef int* scratch
    if n < 0 or k < 1:
        return -1
    if n == 0:
        heads[0] = -1
        tree_scores[0] = 0.0
        return 1
    if cle_work_init(&wk, n, True) != 0:
        return -1
    S.mat = <double*>malloc(k * NN * sizeof(double))
    S.tree = <int*>malloc((<size_t>k * N + N) * sizeof(int))
    S.tree_w = <double*>malloc(3 * <size_t>k * sizeof(double))
    S.e_src = <int*>malloc(2 * <size_t>k * sizeof(int))
    if S.mat == NULL or S.tree == NULL or S.tree_w == NULL or S.e_src == NULL:
        free(S.mat)
        free(S.tree)
        free(S.tree_w)
        free(S.e_src)
        cle_work_free(&wk)
        return -1
    S.value = S.tree_w + k
    S.e_dst = S.e_src + k
    scratch = S.tree + <size_t>k * N

    if fill_scores(S.mat, scores, N, single_root):
        rc = _best(&wk, S.mat, S.tree)
        if rc == 0 and (not single_root or _n_root(S.tree, N) == 1):
            S.tree_w[0] = _weight(S.mat, S.tree, N)
            found = 1
            if k > 1:
                _next(&wk, &S, 0, scratch, reference)
    n_slots = found
    while 0 < found < k:
        i = -1
        best = -INFINITY
        for j in range(n_slots):
            if S.value[j] > best:
                best = S.value[j]
                i = j
        if i < 0:
            break
        es = S.e_src[i]
        ed = S.e_dst[i]
        Mi = S.mat + i * NN
        j = n_slots
        Mj = S.mat + j * NN
        tj = S.tree + <size_t>j * N
        # Subproblem i splits into "arc es -> ed forbidden" (new slot j, its
        # best tree is the next one to output) and "arc es -> ed kept" (slot i,
        # best tree unchanged).
        memcpy(Mj, Mi, NN * sizeof(double))
        Mj[es * N + ed] = -INFINITY
        rc = _best(&wk, Mj, tj)
        if rc == 0 and single_root and _n_root(tj, N) != 1:
            break   # every tree left has several root children
        if rc == 0 and found + 1 == k:
            found += 1
            break   # the last tree: no need to split further
        for h in range(N):
            if h != es:
                Mi[h * N + ed] = -INFINITY
        if rc == 0:
            S.tree_w[j] = _weight(Mj, tj, N)
            n_slots += 1
            found += 1
            _next(&wk, &S, j, scratch, reference)
        _next(&wk, &S, i, scratch, reference)
    # Output: the slots' trees in the order found (slot j was created by the
    # j-th output), with their scores under the original scores.
    for j in range(found):
        tj = S.tree + <size_t>j * N
        best = 0.0
        for c in range(N):
            heads[<size_t>j * N + c] = tj[c]
            if c > 0:
                best += <double>scores[tj[c] * N + c]
        heads[<size_t>j * N] = -1
        tree_scores[j] = best
    free(S.mat)
    free(S.tree)
    free(S.tree_w)
    free(S.e_src)
    cle_work_free(&wk)
    return found


cdef int chu_liu_edmonds_k_best_decode(const float* scores, int n, int k,
                                       bint single_root, int* heads,
                                       double* tree_scores) noexcept nogil:
    return _k_best_decode(scores, n, k, single_root, heads, tree_scores, False)


def _number_of_trees(n, single_root):
    if n == 0:
        return 1
    return n ** (n - 1) if single_root else (n + 1) ** (n - 1)


def _run(scores, k, single_root, bint reference, str name):
    k = index(k)
    if k < 1:
        raise ValueError(f"{name}: k must be >= 1, got {k}")
    arr = np.ascontiguousarray(scores, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(
            "scores must be a square (n+1) x (n+1) matrix (row/column 0 = "
            f"root, n >= 0), got an array of shape {arr.shape}"
        )
    cdef const float[:, ::1] view = arr
    cdef int n = <int>view.shape[0] - 1
    cdef bint sr = bool(single_root)
    cdef int m = <int>min(k, _number_of_trees(n, sr))
    heads = np.full((m, n + 1), -1, dtype=np.int32)
    tree_scores = np.zeros(m, dtype=np.float64)
    cdef int[:, ::1] hv = heads
    cdef double[::1] tv = tree_scores
    cdef int found
    with nogil:
        found = _k_best_decode(&view[0, 0], n, m, sr, &hv[0, 0], &tv[0], reference)
    if found < 0:
        raise MemoryError(f"{name}: could not allocate work memory for n={n}, k={m}")
    if found == 0:
        raise no_tree_error(name, sr, "")
    return heads[:found], tree_scores[:found]


def chu_liu_edmonds_k_best(scores, k, single_root=True):
    """The k best (possibly non-projective) trees for a (n+1) x (n+1) score matrix.

    scores[h, c] is the score of the arc h -> c; index 0 is the root; -inf
    forbids the arc. With ``single_root=True`` only trees with exactly one
    word attached to the root are listed.

    Returns ``(heads, tree_scores)``: int32 (m, n+1) with ``heads[:, 0] = -1``
    and float64 (m,), best first, distinct trees, m = min(k, number of trees
    that avoid the forbidden arcs); ``heads[0]`` scores as ``chu_liu_edmonds``.
    Raises ``NoTreeError`` (a ValueError) when no tree avoids them.
    """
    return _run(scores, k, single_root, False, "chu_liu_edmonds_k_best")


def _chu_liu_edmonds_k_best_reference(scores, k, single_root=True):
    """Same list, with every next best tree found by definition (n
    Chu-Liu-Edmonds runs each, O(k n^3)); a check on the fast NEXT and the
    path it falls back to."""
    return _run(scores, k, single_root, True, "chu_liu_edmonds_k_best")

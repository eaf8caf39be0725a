"""Non-projective first-order dependency decoding with Chu-Liu-Edmonds.

Finds the maximum spanning arborescence rooted at node 0 (Chu & Liu 1965,
Edmonds 1967), as in McDonald, Pereira, Ribarov & Hajic (2005), "Non-projective
dependency parsing using spanning tree algorithms".

Implementation: iterative contraction on a dense (n+1) x (n+1) matrix of
double scores. Every node keeps its best incoming arc; while these arcs contain
a cycle, the cycle is contracted into one of its nodes (the representative):

- arc v -> cycle gets the score max_c s(v, c) - s(best_head(c), c),
- arc cycle -> v gets the score max_c s(c, v),

and each matrix cell remembers which original arc it stands for. After a
contraction only the representative needs a new best incoming arc (other
nodes whose best head was in the cycle now point at the representative, with
the same score), so the whole decode is O(n^2). The tree is rebuilt by
undoing the contractions in reverse order: in each cycle, the node whose
component receives the arc chosen one level up loses its cycle arc, the
others keep theirs.

single_root=True is exact: a constant M = 1 + 2 n (max - min) (taken over all
usable finite arc scores) is subtracted from every root arc. A tree with k
root children loses k*M, and two trees' original scores differ by at most
n (max - min) < M, so every tree with >= 2 root children scores below every
tree with one root child, while trees with one root child keep their order.

Forbidden arcs: a score of -inf forbids the arc. A node whose incoming arcs
are all -inf keeps no best arc (so no cycle ever holds a forbidden arc and no
-inf - (-inf) arises); contraction keeps the existence of a spanning
arborescence, so a forbidden arc is left in the final tree exactly when no
tree avoids them all. That, or (single_root) a best tree with several root
children, is reported as "no tree" (``NoTreeError`` in Python).

``cle_solve`` (C-level, see the .pxd) is the contraction on a prepared
double matrix, shared with the k-best decoder (kbest_spanning_trees.pyx). For
it, it can also (a) prefer the arcs of a given best tree among equal-scoring
choices, a lexicographic tie-break (score, number of preferred arcs) that
makes the result exactly that tree, and (b) find the second best tree in the
same O(n^2) run, following Camerini, Fratta & Maffioli (1980) as presented by
Hall (2007): every cell also keeps the score of the second best original arc
behind it (contraction turns arcs into a multigraph), and when a node x of
the current graph is settled (it lies on a cycle being contracted and keeps
its cycle arc in the best tree A, or it survives to the last graph) every
other arc into x whose source is not below x in A is a one-arc swap giving a
tree; the second best tree is the best such swap over all levels, and is the
best tree without A's original arc into x.

Conventions (see ARCHITECTURE.md): ``scores[h*(n+1)+c]`` is the score of the
arc h -> c, index 0 is the artificial root, ``heads[0] = -1``.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

from .call_decoder cimport DECODE_NO_MEMORY, DECODE_NO_TREE, DECODE_OK, call_decoder


cdef int cle_work_init(CLEWork* wk, int n, bint extras) noexcept nogil:
    cdef int N = n + 1
    cdef size_t NN = <size_t>N * <size_t>N
    wk.N = N
    wk.W = <double*>malloc((NN + N) * sizeof(double))
    wk.src = <int*>malloc(2 * NN * sizeof(int))
    # parent, alive, in_cycle, mark, merged_at, merged_into, entry,
    # cyc_rep, cyc_start (N + 1), cyc_node, cyc_src, cyc_dst (2N each)
    wk.ibuf = <int*>malloc((16 * <size_t>N + 1) * sizeof(int))
    wk.W2 = NULL
    wk.bonus = NULL
    wk.xbuf = NULL
    if extras:
        wk.W2 = <double*>malloc(NN * sizeof(double))
        wk.bonus = <int*>malloc(NN * sizeof(int))
        wk.xbuf = <int*>malloc(7 * <size_t>N * sizeof(int))
    if (wk.W == NULL or wk.src == NULL or wk.ibuf == NULL
            or (extras and (wk.W2 == NULL or wk.bonus == NULL or wk.xbuf == NULL))):
        cle_work_free(wk)
        return -1
    wk.cyc_w = wk.W + NN
    wk.dst = wk.src + NN
    return 0


cdef void cle_work_free(CLEWork* wk) noexcept nogil:
    free(wk.W)
    free(wk.src)
    free(wk.ibuf)
    free(wk.W2)
    free(wk.bonus)
    free(wk.xbuf)
    wk.W = NULL
    wk.src = NULL
    wk.dst = NULL
    wk.ibuf = NULL
    wk.cyc_w = NULL
    wk.W2 = NULL
    wk.bonus = NULL
    wk.xbuf = NULL


cdef inline int _best_head(const double* W, const int* B, const int* alive, int N,
                           int c) noexcept nogil:
    """The live head of c's best incoming arc (0 when all are -inf). With B,
    ties go to the arc standing for more preferred arcs."""
    cdef int h, p = 0, bb = 0
    cdef double best = -INFINITY, val
    if B == NULL:
        for h in range(N):
            if h != c and alive[h] and W[h * N + c] > best:
                best = W[h * N + c]
                p = h
    else:
        for h in range(N):
            if h == c or not alive[h]:
                continue
            val = W[h * N + c]
            if val > best or (val == best and best > -INFINITY and B[h * N + c] > bb):
                best = val
                bb = B[h * N + c]
                p = h
    return p


cdef void _subtree_intervals(const int* tree, int N, int* tin, int* tend, int* first,
                             int* sib, int* stack) noexcept nogil:
    """Preorder numbers of a tree: the subtree of u is tin[u] <= tin[a] < tend[u]."""
    cdef int u, c, top, t = 0
    for u in range(N):
        first[u] = -1
    for c in range(N - 1, 0, -1):
        sib[c] = first[tree[c]]
        first[tree[c]] = c
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        u = stack[top]
        tin[u] = t
        t += 1
        c = first[u]
        while c != -1:
            stack[top] = c
            top += 1
            c = sib[c]
    # Subtree sizes, children before parents (reverse preorder); stack
    # becomes the node at each preorder position.
    for u in range(N):
        stack[tin[u]] = u
        tend[u] = 1
    for t in range(N - 1, 0, -1):
        u = stack[t]
        tend[tree[u]] += tend[u]
    for u in range(N):
        tend[u] += tin[u]


cdef inline void _best_swap(const CLEWork* wk, const int* alive, const int* tin,
                            const int* tend, int x, int sb, CLENext* nxt) noexcept nogil:
    """Next-best candidates at node x of the current graph, whose arc in the best
    tree is the cell sb -> x: the second best original arc behind that cell, and
    the best arc from every other live node that is not below x in the tree."""
    cdef int N = wk.N, s, a
    cdef const double* W = wk.W
    cdef int z = wk.dst[sb * N + x]      # where the tree's arc enters x's component
    cdef int lo = tin[z], hi = tend[z]
    cdef double alt = wk.W2[sb * N + x], v
    for s in range(N):
        if s == x or s == sb or not alive[s]:
            continue
        v = W[s * N + x]
        if v > alt:
            a = wk.src[s * N + x]
            if tin[a] < lo or tin[a] >= hi:
                alt = v
    if alt > -INFINITY and W[sb * N + x] - alt < nxt.delta:
        nxt.delta = W[sb * N + x] - alt
        nxt.e_src = wk.src[sb * N + x]
        nxt.e_dst = z


cdef inline int _best_member(const double* W, const int* B, const double* cyc_w,
                             const int* cyc_b, const int* cyc_node, int lo, int hi, int N,
                             int v, bint entering, int rep, double* best, int* bonus,
                             double* second) noexcept nogil:
    """The member m of the cycle (``cyc_node[lo:hi]``) with the best arc
    v -> m (``entering``: W[v, m] less m's cycle arc) or m -> v; ``rep`` if
    all are -inf. Sets ``best`` to that arc's score, ``second`` to the next
    best member's and, with B, ``bonus`` to the arc's preferred-arc count
    (less the cycle arc's, entering), which breaks ties as in ``_best_head``."""
    cdef int i, m, best_m = rep, bon = 0
    cdef double val
    best[0] = -INFINITY
    second[0] = -INFINITY
    bonus[0] = 0
    for i in range(lo, hi):
        m = cyc_node[i]
        if entering:
            val = W[v * N + m] - cyc_w[m]
            if B != NULL:
                bon = B[v * N + m] - cyc_b[m]
        else:
            val = W[m * N + v]
            if B != NULL:
                bon = B[m * N + v]
        if val > best[0] or (B != NULL and val == best[0] and best[0] > -INFINITY
                             and bon > bonus[0]):
            if best[0] > second[0]:
                second[0] = best[0]
            best[0] = val
            bonus[0] = bon
            best_m = m
        elif val > second[0]:
            second[0] = val
    return best_m


cdef int cle_solve(CLEWork* wk, int* heads, const int* prefer,
                   CLENext* nxt) noexcept nogil:
    cdef int N = wk.N
    cdef int h, c, v, m, u, k, rep, best_m, n_contr, n_members, cur, x, p, i, bb
    cdef double best, val, sec
    cdef double* W = wk.W
    cdef int* src = wk.src
    cdef int* dst = wk.dst
    cdef double* cyc_w = wk.cyc_w
    cdef int* B = wk.bonus if prefer != NULL else NULL
    cdef double* W2 = wk.W2 if nxt != NULL else NULL
    cdef int* ibuf = wk.ibuf
    cdef int* parent = ibuf
    cdef int* alive = ibuf + N
    cdef int* in_cycle = ibuf + 2 * N
    cdef int* mark = ibuf + 3 * N
    cdef int* merged_at = ibuf + 4 * N
    cdef int* merged_into = ibuf + 5 * N
    cdef int* entry = ibuf + 6 * N
    cdef int* cyc_rep = ibuf + 7 * N
    cdef int* cyc_start = ibuf + 8 * N       # N + 1 entries
    cdef int* cyc_node = ibuf + 9 * N + 1    # 2N entries
    cdef int* cyc_src = ibuf + 11 * N + 1    # 2N entries
    cdef int* cyc_dst = ibuf + 13 * N + 1    # 2N entries
    cdef int* cyc_b = NULL
    cdef int* tin = NULL
    cdef int* tend = NULL
    heads[0] = -1
    if N == 1:
        return DECODE_OK
    if B != NULL:
        cyc_b = wk.xbuf
    if W2 != NULL:
        tin = wk.xbuf + N
        tend = wk.xbuf + 2 * N
        _subtree_intervals(prefer, N, tin, tend, wk.xbuf + 3 * N, wk.xbuf + 4 * N,
                           wk.xbuf + 5 * N)
        nxt.delta = INFINITY
        nxt.e_src = -1
        nxt.e_dst = -1

    for h in range(N):
        for c in range(N):
            src[h * N + c] = h
            dst[h * N + c] = c
    if B != NULL:
        for h in range(N):
            for c in range(N):
                B[h * N + c] = 1 if (c > 0 and prefer[c] == h) else 0
    if W2 != NULL:
        for i in range(N * N):
            W2[i] = -INFINITY

    for v in range(N):
        alive[v] = 1
        in_cycle[v] = 0
        merged_at[v] = N + 1   # "never merged": larger than any contraction index
        merged_into[v] = v
    parent[0] = -1
    for c in range(1, N):
        parent[c] = _best_head(W, B, alive, N, c)

    n_contr = 0
    n_members = 0
    while True:
        # Find a cycle among the best incoming arcs of the live nodes.
        for v in range(N):
            mark[v] = -1
        u = 0
        for v in range(1, N):
            if not alive[v] or mark[v] != -1:
                continue
            u = v
            while u != 0 and mark[u] == -1:
                mark[u] = v
                u = parent[u]
            if u != 0 and mark[u] == v:
                break       # u lies on a cycle
            u = 0
        if u == 0:
            break

        # Contract the cycle through u into rep = u.
        k = n_contr
        rep = u
        cyc_rep[k] = rep
        cyc_start[k] = n_members
        c = u
        while True:
            in_cycle[c] = 1
            p = parent[c]
            cyc_node[n_members] = c
            cyc_src[n_members] = src[p * N + c]
            cyc_dst[n_members] = dst[p * N + c]
            cyc_w[c] = W[p * N + c]
            if B != NULL:
                cyc_b[c] = B[p * N + c]
            n_members += 1
            c = p
            if c == u:
                break
        cyc_start[k + 1] = n_members

        if W2 != NULL:
            # Members that keep their cycle arc in the best tree are settled
            # here; the entering member is settled one level up.
            for i in range(cyc_start[k], n_members):
                if prefer[cyc_dst[i]] == cyc_src[i]:
                    _best_swap(wk, alive, tin, tend, cyc_node[i], parent[cyc_node[i]], nxt)

        for v in range(N):
            if not alive[v] or in_cycle[v]:
                continue
            # v -> cycle: enter at the member where it pays most.
            best_m = _best_member(W, B, cyc_w, cyc_b, cyc_node, cyc_start[k], n_members, N, v,
                                  True, rep, &best, &bb, &sec)
            if B != NULL:
                if W2 != NULL:
                    val = W2[v * N + best_m] - cyc_w[best_m]
                    W2[v * N + rep] = val if val > sec else sec
                B[v * N + rep] = bb
            W[v * N + rep] = best
            src[v * N + rep] = src[v * N + best_m]
            dst[v * N + rep] = dst[v * N + best_m]
            if v == 0:
                continue
            # cycle -> v: leave from the best member.
            best_m = _best_member(W, B, cyc_w, cyc_b, cyc_node, cyc_start[k], n_members, N, v,
                                  False, rep, &best, &bb, &sec)
            if B != NULL:
                if W2 != NULL:
                    val = W2[best_m * N + v]
                    W2[rep * N + v] = val if val > sec else sec
                B[rep * N + v] = bb
            W[rep * N + v] = best
            src[rep * N + v] = src[best_m * N + v]
            dst[rep * N + v] = dst[best_m * N + v]
            if in_cycle[parent[v]]:
                parent[v] = rep

        for i in range(cyc_start[k], n_members):
            m = cyc_node[i]
            in_cycle[m] = 0
            if m != rep:
                alive[m] = 0
                merged_at[m] = k
                merged_into[m] = rep
        # Only the contracted node needs a new best incoming arc.
        parent[rep] = _best_head(W, B, alive, N, rep)
        n_contr += 1

    # The remaining best arcs form a tree over the live nodes; each stands for
    # an original arc into some original node (entry) of the node's component.
    # A -inf one means that no tree avoids the forbidden arcs.
    for c in range(1, N):
        if alive[c]:
            p = parent[c]
            if W[p * N + c] == -INFINITY:
                return DECODE_NO_TREE
            x = dst[p * N + c]
            heads[x] = src[p * N + c]
            entry[c] = x
            if W2 != NULL:
                _best_swap(wk, alive, tin, tend, c, p, nxt)
    # Undo the contractions, last first.
    for k in range(n_contr - 1, -1, -1):
        x = entry[cyc_rep[k]]
        # The member of cycle k whose component (at the time) holds x.
        cur = x
        while merged_at[cur] < k:
            cur = merged_into[cur]
        for i in range(cyc_start[k], cyc_start[k + 1]):
            m = cyc_node[i]
            if m == cur:
                entry[m] = x
            else:
                heads[cyc_dst[i]] = cyc_src[i]
                entry[m] = cyc_dst[i]
    return DECODE_OK


cdef bint fill_scores(double* W, const float* scores, int N, bint single_root) noexcept nogil:
    """Copy scores into W (column 0 and the diagonal -inf); with single_root
    subtract the separating constant M from the root arcs. Returns False when
    no arc is allowed at all."""
    cdef int h, c
    cdef double val, lo = INFINITY, hi = -INFINITY, M
    for h in range(N):
        for c in range(N):
            if c == 0 or c == h:
                W[h * N + c] = -INFINITY
            else:
                val = <double>scores[h * N + c]
                W[h * N + c] = val
                if val > -INFINITY:
                    if val < lo:
                        lo = val
                    if val > hi:
                        hi = val
    if hi < lo:
        return False
    if single_root:
        M = 1.0 + 2.0 * (N - 1) * (hi - lo)
        for c in range(1, N):
            W[c] -= M
    return True


cdef int chu_liu_edmonds_decode(const float* scores, int n, int* heads,
                                bint single_root) noexcept nogil:
    cdef int c, rc, n_root
    cdef CLEWork wk
    if n < 0:
        return DECODE_NO_MEMORY
    heads[0] = -1
    if n == 0:
        return DECODE_OK
    if cle_work_init(&wk, n, False) != 0:
        return DECODE_NO_MEMORY
    if not fill_scores(wk.W, scores, n + 1, single_root):
        rc = DECODE_NO_TREE
    else:
        rc = cle_solve(&wk, heads, NULL, NULL)
    if rc == DECODE_OK and single_root:
        # Several root children win only when no single-root tree avoids
        # the forbidden arcs (see the module docstring).
        n_root = 0
        for c in range(1, n + 1):
            if heads[c] == 0:
                n_root += 1
        if n_root != 1:
            rc = DECODE_NO_TREE
    cle_work_free(&wk)
    return rc


def chu_liu_edmonds(scores, single_root=True):
    """Best (possibly non-projective) tree for a (n+1) x (n+1) score matrix.

    scores[h, c] is the score of the arc h -> c; index 0 is the root. Returns
    an int32 array ``heads`` of length n+1 with ``heads[0] = -1``. With
    ``single_root=True`` exactly one word is attached to the root.

    A score of -inf forbids the arc; raises ``NoTreeError`` (a ValueError)
    when every tree uses a forbidden arc.
    """
    return call_decoder(chu_liu_edmonds_decode, scores, single_root, "chu_liu_edmonds")

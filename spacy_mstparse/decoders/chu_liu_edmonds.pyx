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
usable arc scores) is subtracted from every root arc. A tree with k root
children loses k*M, and two trees' original scores differ by at most
n (max - min) < M, so every tree with >= 2 root children scores below every
tree with one root child, while trees with one root child keep their order.

Conventions (see ARCHITECTURE.md): ``scores[h*(n+1)+c]`` is the score of the
arc h -> c, index 0 is the artificial root, ``heads[0] = -1``.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

from .call_decoder cimport call_decoder


cdef int chu_liu_edmonds_decode(const float* scores, int n, int* heads,
                                bint single_root) noexcept nogil:
    cdef int N, h, c, v, m, u, k, rep, best_m, n_contr, n_members, cur, x, p, i
    cdef size_t NN
    cdef double best, val, lo, hi, M
    cdef double* W
    cdef int* src
    cdef int* dst
    cdef int* ibuf
    cdef int* parent
    cdef int* alive
    cdef int* in_cycle
    cdef int* mark
    cdef int* merged_at
    cdef int* merged_into
    cdef int* entry
    cdef int* cyc_rep
    cdef int* cyc_start
    cdef int* cyc_node
    cdef int* cyc_src
    cdef int* cyc_dst
    cdef double* cyc_w
    if n < 0:
        return -1
    heads[0] = -1
    if n == 0:
        return 0
    if n == 1:
        heads[1] = 0
        return 0
    N = n + 1
    NN = <size_t>N * <size_t>N
    W = <double*>malloc(NN * sizeof(double) + N * sizeof(double))
    src = <int*>malloc(2 * NN * sizeof(int))
    # parent, alive, in_cycle, mark, merged_at, merged_into, entry,
    # cyc_rep, cyc_start (N + 1), cyc_node, cyc_src, cyc_dst (2N each)
    ibuf = <int*>malloc((16 * <size_t>N + 1) * sizeof(int))
    if W == NULL or src == NULL or ibuf == NULL:
        free(W)
        free(src)
        free(ibuf)
        return -1
    cyc_w = W + NN
    dst = src + NN
    parent = ibuf
    alive = ibuf + N
    in_cycle = ibuf + 2 * N
    mark = ibuf + 3 * N
    merged_at = ibuf + 4 * N
    merged_into = ibuf + 5 * N
    entry = ibuf + 6 * N
    cyc_rep = ibuf + 7 * N
    cyc_start = ibuf + 8 * N       # N + 1 entries
    cyc_node = ibuf + 9 * N + 1    # 2N entries
    cyc_src = ibuf + 11 * N + 1    # 2N entries
    cyc_dst = ibuf + 13 * N + 1    # 2N entries

    # Copy the usable arcs; column 0 and the diagonal are never read.
    lo = INFINITY
    hi = -INFINITY
    for h in range(N):
        for c in range(N):
            if c == 0 or c == h:
                W[h * N + c] = -INFINITY
            else:
                val = <double>scores[h * N + c]
                W[h * N + c] = val
                if val < lo:
                    lo = val
                if val > hi:
                    hi = val
            src[h * N + c] = h
            dst[h * N + c] = c
    if single_root:
        M = 1.0 + 2.0 * n * (hi - lo)
        for c in range(1, N):
            W[c] -= M

    for v in range(N):
        alive[v] = 1
        in_cycle[v] = 0
        merged_at[v] = N + 1   # "never merged": larger than any contraction index
        merged_into[v] = v
    parent[0] = -1
    for c in range(1, N):
        best = -INFINITY
        parent[c] = 0
        for h in range(N):
            if h != c and W[h * N + c] > best:
                best = W[h * N + c]
                parent[c] = h

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
            n_members += 1
            c = p
            if c == u:
                break
        cyc_start[k + 1] = n_members

        for v in range(N):
            if not alive[v] or in_cycle[v]:
                continue
            # v -> cycle: enter at the member where it pays most.
            best = -INFINITY
            best_m = rep
            for i in range(cyc_start[k], n_members):
                m = cyc_node[i]
                val = W[v * N + m] - cyc_w[m]
                if val > best:
                    best = val
                    best_m = m
            W[v * N + rep] = best
            src[v * N + rep] = src[v * N + best_m]
            dst[v * N + rep] = dst[v * N + best_m]
            if v == 0:
                continue
            # cycle -> v: leave from the best member.
            best = -INFINITY
            best_m = rep
            for i in range(cyc_start[k], n_members):
                m = cyc_node[i]
                val = W[m * N + v]
                if val > best:
                    best = val
                    best_m = m
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
        best = -INFINITY
        parent[rep] = 0
        for v in range(N):
            if alive[v] and v != rep and W[v * N + rep] > best:
                best = W[v * N + rep]
                parent[rep] = v
        n_contr += 1

    # The remaining best arcs form a tree over the live nodes; each stands for
    # an original arc into some original node (entry) of the node's component.
    for c in range(1, N):
        if alive[c]:
            p = parent[c]
            x = dst[p * N + c]
            heads[x] = src[p * N + c]
            entry[c] = x
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
    free(W)
    free(src)
    free(ibuf)
    return 0


def chu_liu_edmonds(scores, single_root=True):
    """Best (possibly non-projective) tree for a (n+1) x (n+1) score matrix.

    scores[h, c] is the score of the arc h -> c; index 0 is the root. Returns
    an int32 array ``heads`` of length n+1 with ``heads[0] = -1``. With
    ``single_root=True`` exactly one word is attached to the root.
    """
    return call_decoder(chu_liu_edmonds_decode, scores, single_root, "chu_liu_edmonds")

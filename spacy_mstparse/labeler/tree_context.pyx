"""The tree context the labeler's features read (McDonald, Lerman &
Pereira 2006 label the arcs of a finished tree, so each arc may look at the
rest of it): per word, its numbers of left and right dependents, its
outermost dependents, its adjacent siblings, its rank among its head's
dependents on its side and its previous sibling, left to right."""
from libc.stdint cimport int32_t


cdef void tree_context(int n, const int32_t* heads, int32_t* ctx) noexcept nogil:
    """Fill the (N_CTX + 1, n+1) int32 array ``ctx`` (row-major; the last row
    is scratch) with the tree context of the valid tree ``heads``."""
    cdef int n1 = n + 1, c, h, p, r
    cdef int32_t* left_seen = ctx + N_CTX * n1
    for r in range(N_CTX + 1):
        for c in range(n1):
            ctx[r * n1 + c] = 0 if (r == C_NLEFT or r == C_NRIGHT or r == C_RANK
                                     or r == N_CTX) else -1
    for c in range(1, n1):
        h = heads[c]
        if c < h:
            ctx[C_NLEFT * n1 + h] += 1
            if ctx[C_LEFTMOST * n1 + h] < 0 or c < ctx[C_LEFTMOST * n1 + h]:
                ctx[C_LEFTMOST * n1 + h] = c
        else:
            ctx[C_NRIGHT * n1 + h] += 1
            if c > ctx[C_RIGHTMOST * n1 + h]:
                ctx[C_RIGHTMOST * n1 + h] = c
    for c in range(1, n1):   # left to right: C_LAST[h] is h's previous dependent
        h = heads[c]
        p = ctx[C_LAST * n1 + h]
        ctx[C_PREV * n1 + c] = p
        ctx[C_LAST * n1 + h] = c
        if c < h:
            ctx[C_RANK * n1 + c] = ctx[C_NLEFT * n1 + h] - left_seen[h]
            left_seen[h] += 1
            if p >= 0:       # p < c < h: c is nearer the head
                ctx[C_INNER * n1 + p] = c
                ctx[C_OUTER * n1 + c] = p
        else:
            if p >= 0 and p > h:
                ctx[C_RANK * n1 + c] = ctx[C_RANK * n1 + p] + 1
                ctx[C_INNER * n1 + c] = p
                ctx[C_OUTER * n1 + p] = c
            else:
                ctx[C_RANK * n1 + c] = 1

from libc.math cimport INFINITY
from libc.stdint cimport uint64_t


cdef inline void attach_final_word(const uint64_t* row, int n, const float* arc, int* heads,
                                   const uint64_t* tags, int n_tags) noexcept nogil:
    """Attach word n to the root word when its tag (``row``: tag row 0 of the
    sentence, ``row[n]``) is one of ``tags``, no word depends on it and the
    arc is not ruled out (``arc``: the (n+1, n+1) arc scores, -inf for an arc
    the arc filter or pruning forbids); ``heads``: heads[c] of words 1..n,
    0 = the root word's head."""
    cdef int c, j, root = 0, n_roots = 0
    if n < 2 or n_tags == 0:
        return
    for j in range(n_tags):
        if row[n] == tags[j]:
            break
    else:
        return
    for c in range(1, n + 1):
        if heads[c] == n:
            return
        if heads[c] == 0:
            root = c
            n_roots += 1
    if n_roots == 1 and root != n and arc[root * (n + 1) + n] > -INFINITY:
        heads[n] = root

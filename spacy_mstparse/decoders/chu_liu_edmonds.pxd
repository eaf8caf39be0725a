# Non-projective first-order decoder (maximum spanning arborescence rooted at
# node 0; Chu & Liu 1965, Edmonds 1967; McDonald et al. 2005b). C-level API for
# other Cython modules; see chu_liu_edmonds.pyx.
#
# scores: row-major (n+1) x (n+1), scores[h*(n+1)+c] = score of arc h -> c,
#         index 0 = artificial root (column 0 and the diagonal are never read).
# heads:  length n+1, receives the tree; heads[0] = -1.
# Returns 0 on success, -1 on allocation failure (or n < 0).
cdef int chu_liu_edmonds_decode(const float* scores, int n, int* heads,
                                bint single_root) noexcept nogil

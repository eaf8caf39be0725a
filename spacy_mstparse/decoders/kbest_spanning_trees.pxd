# k best non-projective trees (spanning arborescences rooted at node 0;
# Camerini, Fratta & Maffioli 1980, as in Hall 2007). C-level API for other
# Cython modules; see kbest_spanning_trees.pyx.
#
# scores: row-major (n+1) x (n+1), scores[h*(n+1)+c] = score of arc h -> c,
#         index 0 = artificial root (column 0 and the diagonal are never read);
#         -inf forbids the arc.
# k >= 1; heads: room for k rows of n+1 ints, receives the trees best first
#         (heads[i*(n+1)] = -1); tree_scores: room for k doubles, their scores
#         (sums of the float scores in double precision).
# single_root: only trees with exactly one root child.
# Returns the number of trees written (min(k, number of allowed trees); 1 for
# n = 0), 0 when every tree uses a forbidden arc, -1 on allocation failure.
cdef int chu_liu_edmonds_k_best_decode(const float* scores, int n, int k,
                                       bint single_root, int* heads,
                                       double* tree_scores) noexcept nogil

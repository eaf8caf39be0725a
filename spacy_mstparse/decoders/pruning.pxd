# Arc pruning: keep the k best heads of every word under first-pass scores
# (see pruning.pyx). C-level API for the feature scorers.
#
# scores: row-major (n+1) x (n+1) first-pass scores, scores[h*(n+1)+c].
# keep:   (n+1) x (n+1) flags, set to 1 for the kept arcs h -> c (c >= 1,
#         h != c) and 0 elsewhere. Always kept: the k best heads of c (ties
#         at the k-th score kept too) and the left neighbour c-1 (the root
#         for word 1), so the chain 0 -> 1 -> ... -> n, a projective
#         single-root tree, survives any pruning. k >= n keeps every arc.
cdef void keep_best_heads(const float* scores, int n, int k, unsigned char* keep) noexcept nogil

# Set every arc that keep_best_heads(scores, n, k) drops to -inf, in place.
# Returns -1 if memory could not be allocated.
cdef int prune_arcs(float* scores, int n, int k) noexcept nogil

# Second-order (sibling) projective decoding with k-best lists (McDonald &
# Pereira 2006; Huang & Chiang 2005). C-level API; see eisner_second_order.pyx.
#
# arc: row-major (n+1) x (n+1) arc scores; sib: NULL or (n+1)^3 sibling
# scores sib[(h*(n+1)+s)*(n+1)+c]. heads receives up to k rows of n+1 ints,
# tree_scores their scores, best first. -inf forbids. Returns the number of
# trees found (0: every tree forbidden), or -1 when out of memory.
cdef int eisner_second_order_decode(const float* arc, const float* sib, int n, int k,
                                    int* heads, double* tree_scores) noexcept nogil

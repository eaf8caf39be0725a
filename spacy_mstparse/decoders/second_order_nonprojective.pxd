# Greedy single-arc improvement of a single-root tree under arc (and, when
# sib is not NULL, sibling) scores, in place (McDonald & Pereira 2006);
# returns the number of moves made. See second_order_nonprojective.pyx.
cdef int improve_tree_c(const float* arc, const float* sib, int n, int* heads,
                        int max_moves) noexcept nogil

# Second-order non-projective 1-best (see second_order_nonprojective.pyx): the
# best projective tree climbed, or, when every projective tree is forbidden,
# the best first-order non-projective tree climbed. Into heads (n+1 ints).
# Returns 1, 0 (no tree avoids the -inf scores) or -1 (out of memory).
cdef int approximate_nonprojective_c(const float* arc, const float* sib, int n,
                                     int* heads) noexcept nogil

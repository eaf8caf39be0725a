# Greedy single-arc improvement of a single-root tree under arc (and, when
# sib is not NULL, sibling) scores, in place (McDonald & Pereira 2006);
# returns the number of moves made. See second_order_nonprojective.pyx.
cdef int improve_tree_c(const float* arc, const float* sib, int n, int* heads,
                        int max_moves) noexcept nogil

# Exact projective decoding with sibling and grandparent scores (Koo &
# Collins 2010, model 1 chart; see eisner_grandparent.pyx). C-level API.
#
# arc: row-major (n+1) x (n+1) arc scores; sib: NULL or (n+1)^3 sibling scores
# sib[(h*(n+1)+s)*(n+1)+c] (s == h: first dependent); grand: NULL or (n+1)^3
# grandparent scores grand[(g*(n+1)+h)*(n+1)+c] of the arc h -> c under the arc
# g -> h (arcs from the root have no grandparent factor). -inf forbids; only
# arcs with a finite arc score enter the chart, so a pruned score matrix makes
# it fast. heads receives n+1 ints (heads[0] = -1), tree_score the score.
# Returns 1, 0 (every projective single-root tree forbidden) or -1 (no memory).
cdef int eisner_grandparent_decode(const float* arc, const float* sib, const float* grand,
                                   int n, int* heads, double* tree_score) noexcept nogil

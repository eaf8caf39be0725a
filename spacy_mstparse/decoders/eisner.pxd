# First-order projective decoding (Eisner 1996, as used by McDonald, Crammer &
# Pereira 2005). C-level API for other Cython modules; see eisner.pyx.
#
# scores: row-major (n+1) x (n+1), scores[h*(n+1)+c] = score of arc h -> c,
#         index 0 = artificial root (column 0 and the diagonal are never read).
# heads:  length n+1, receives the tree; heads[0] = -1.
# A score of -inf forbids the arc.
# Returns 0 on success, -1 on allocation failure (or n < 0), 1 when every
# projective tree (with one root child if single_root) uses a forbidden arc
# (heads is then not a tree). See DECODE_* in call_decoder.pxd.
cdef int eisner_decode(const float* scores, int n, int* heads,
                       bint single_root) noexcept nogil

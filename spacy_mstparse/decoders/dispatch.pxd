# The one decode entry of the graph parser: a sentence's factor scores in one
# struct, the decoder chosen by a code, k best trees out. C-level API; see
# dispatch.pyx. The factors: CFactors (factors.pxd).
from .factors cimport CFactors

cdef enum DecoderCode:
    EISNER = 0
    CHU_LIU_EDMONDS = 1

cdef enum:
    DECODE_NOT_SERVED = -2   # decode_c's answer for a combination serves_c refuses

# Whether decode_c serves this decoder at this order (any k >= 1).
cdef bint serves_c(int decoder, int order) noexcept nogil

# Up to k trees, best first, into heads (k rows of n+1 ints, heads[row*(n+1)]
# = -1) and, unless scores is NULL, their tree_score_c into scores. Returns
# the number of trees, 0 when no tree of the search space avoids the -inf
# scores, -1 when out of memory, DECODE_NOT_SERVED.
cdef int decode_c(const CFactors* f, int decoder, int k, int* heads,
                  double* scores) noexcept nogil

# Loss augmentation: + 1 on every arc into a word whose gold head is known
# (gold[c] >= 0) except the gold arc, in place.
cdef void add_hamming_loss_c(float* arc, int n, const int* gold) noexcept nogil

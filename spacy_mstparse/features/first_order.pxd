from libc.stdint cimport int32_t, uint64_t

from .arc_filter cimport ArcFilter
from .distance cimport direction_distance
from .sentence cimport Sentence
from .weights cimport Weights


cdef inline int dd_code(int h, int c) noexcept nogil:
    """Direction (child right or left of head) and distance bin, as 1..14:
    the code every first-order feature is conjoined with."""
    return 1 + direction_distance(h, c)


cdef inline uint64_t direction_code(int dd) noexcept nogil:
    """The direction-only code (16 = child left of head, 17 = right) of a
    direction/distance code, used under ``direction_backoff``."""
    return 16 + (1 if dd > 7 else 0)


cdef class FirstOrderFeatures:
    cdef readonly uint64_t n_buckets
    cdef readonly int n_tagsets
    cdef readonly bint use_morph
    cdef readonly bint direction_backoff
    cdef readonly bint cluster_row
    cdef uint64_t mask
    cdef readonly ArcFilter arc_filter   # None: every arc is scored

    cdef int unigram_bases(self, Sentence s, int i, bint as_head, uint64_t* out) noexcept nogil
    cdef void unigram_sums(self, Sentence s, int i, bint as_head, const Weights* w,
                           uint64_t* buf, uint64_t* ids, double* sums) noexcept nogil
    cdef void token_parts(self, Sentence s, int i, uint64_t* out) noexcept nogil
    cdef int pair_bases(self, Sentence s, int h, int c, const uint64_t* between,
                        const int* n_between, uint64_t* out,
                        const uint64_t* parts=*) noexcept nogil
    cdef int capacity(self, Sentence s) noexcept nogil
    cdef double first_pass_score(self, Sentence s, int h, int c, const Weights* w,
                                 const double* head_sum, const double* child_sum) noexcept nogil
    # Bucket ids of a tree's arcs (training); tree_capacity bounds their number.
    cdef int tree_capacity(self, Sentence s) noexcept nogil
    cdef int arcs_features_into(self, Sentence s, const int32_t* heads,
                                uint64_t* out) noexcept nogil
    cdef int score_into(self, Sentence s, const Weights* w, float scale,
                        float* out, int keep=*, bint first_pass_only=*) noexcept nogil

from libc.stdint cimport int32_t, uint64_t

from .arc_emitters cimport ArcFeatureSpec
from .arc_filter cimport ArcFilter
from .sentence cimport Sentence
from .weights cimport Weights


cdef class FirstOrderFeatures:
    cdef readonly uint64_t n_buckets
    cdef readonly int n_tagsets
    cdef ArcFeatureSpec spec              # use_morph, direction_backoff, cluster_row, mask
    cdef readonly ArcFilter arc_filter   # None: every arc is scored

    cdef void unigram_sums(self, Sentence s, int i, bint as_head, const Weights* w,
                           uint64_t* buf, uint64_t* ids, double* sums) noexcept nogil
    cdef double first_pass_score(self, Sentence s, int h, int c, const Weights* w,
                                 const double* head_sum, const double* child_sum) noexcept nogil
    # Bucket ids of a tree's arcs (training); tree_capacity bounds their number.
    cdef int tree_capacity(self, Sentence s) noexcept nogil
    cdef int arcs_features_into(self, Sentence s, const int32_t* heads,
                                uint64_t* out) noexcept nogil
    cdef int score_into(self, Sentence s, const Weights* w, float scale,
                        float* out, int keep=*, bint first_pass_only=*) noexcept nogil

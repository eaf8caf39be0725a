from libc.stdint cimport uint64_t

from .arc_standard cimport State


cdef struct Sent:
    int n
    const uint64_t* word   # [0..n] lower-cased form id after the rare-word cut-off
    const uint64_t* tag    # [0..n] POS tag id
    const float* dl        # [0..n] average number of left dependents (valence)
    const float* dr        # [0..n] average number of right dependents


cdef enum:
    G_1W = 1
    G_2W = 2
    G_3W = 4
    G_DEP = 8
    G_WD = 16
    G_IC = 32
    G_WD_BINNED = 64   # word distance as bin indicators instead of values


cdef int max_features(int n) noexcept nogil

cdef int extract(const Sent* x, const State* s, int groups, const uint64_t* pairs,
                 int n_pairs, uint64_t* ids, float* vals, uint64_t* scratch) noexcept nogil

from libc.stdint cimport int32_t, uint64_t

from ..features.sentence cimport Sentence

# Most feature rows of one arc (labeler version 2 / version 1), transition
# rows per dependent, and dependents read per bag.
cdef enum:
    MAX_FEATS = 128
    V1_MAX_FEATS = 64
    N_TRANS = 3
    MAX_BAG = 6

# What each labeler version uses (bits; ``arc_labeler.VERSION_FLAGS``).
cdef enum Flag:
    F_CONTEXT = 1    # sibling / head-context arc features
    F_CHAIN = 2      # Markov chain over the labels of a head's dependents (Viterbi)
    F_RESTRICT = 4   # labels seen for (head tag, child tag, direction)
    F_DEP_WORDS = 8  # words of the child's outermost dependents, head word + rank
    F_DEP_BAGS = 16  # words of all the child's dependents and of its siblings


# The weight rows of a feature table of ``n_labels`` columns: a feature hash
# masked to the table's rows, times the row width.
cdef struct RowTable:
    uint64_t mask
    int n_labels


cdef int arc_feature_rows(Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                          int flags, int limit, bint use_morph, RowTable table,
                          uint64_t* out, int32_t* kinds) noexcept nogil
cdef int transition_feature_rows(Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                                 int prev_label, RowTable table, uint64_t* out) noexcept nogil

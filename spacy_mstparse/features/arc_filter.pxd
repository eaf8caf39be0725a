# The arc filter (arc_filter.pyx): arcs longer than their (head tag, child
# tag, direction) ever were in training are not scored. C-level API for the
# first-order scorer.
from libc.stdint cimport uint8_t, uint64_t

from .distance cimport distance_bin
from .sentence cimport Sentence


cdef class ArcFilter:
    cdef readonly int n_tags
    cdef object _tags        # uint64 (n_tags,): the tag ids with rows, sorted
    cdef object _limits      # uint8 (n_tags + 1, n_tags + 1, 2)
    cdef const uint64_t[::1] tags_view
    cdef const uint8_t[::1] limits_view   # _limits flattened

    # The filter's row of every tag of the sentence's first tag row into
    # ``rows`` (s.n + 1 ints; n_tags for a tag the filter has not seen).
    cdef void tag_rows(self, Sentence s, int* rows) noexcept nogil


cdef inline bint arc_allowed(const uint8_t* limits, int stride, const int* rows,
                             int h, int c) noexcept nogil:
    """Whether h -> c is scored: c's left neighbour always (so a projective
    tree always remains), any other arc if its distance bin is below the
    limit of its head row, child row and direction. ``stride``: n_tags + 1."""
    if h == c - 1:
        return True
    return distance_bin(h, c) < limits[(rows[h] * stride + rows[c]) * 2 + (c > h)]

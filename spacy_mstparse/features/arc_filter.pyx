"""The arc filter: hard limits on dependency length by tag pair, learned
from the training trees (Eisner & Smith 2005, "Parsing with soft and hard
constraints on dependency length").

For every (head tag, child tag, direction) of the first tag row the filter
keeps the longest distance bin (``distance.pxd``: 1, 2, 3, 4, 5, 6-10, more
than 10) of a training arc, and allows ``SLACK`` bins beyond it; a pair
never seen as an arc is allowed the first ``SLACK`` bins. In prediction
longer arcs are not scored (-inf), which spares their features: on the UD
treebanks measured a fifth to a half of all arcs, with no loss of
attachment accuracy (BENCHMARKS.md, "Speed"). Training scores every arc
(trained under the filter, the first-order EWT model came out 0.05 UAS
lower on dev). The left neighbour of every word stays allowed, so the
chain 0 -> 1 -> ... -> n, a projective tree, always survives. Tags the
filter did not see in training (and tags beyond the ``MAX_TAGS`` most
frequent) limit nothing.
"""
from libc.stdint cimport uint8_t, uint64_t

import numpy

from .distance cimport N_DISTANCE_BINS

SLACK = 1          # distance bins allowed beyond the longest seen
MAX_TAGS = 254     # tags with their own rows (the most frequent)
NO_LIMIT = 255


cdef class ArcFilter:
    """Distance limits per (head tag, child tag, direction).

    tags: uint64 sorted unique tag ids (the first tag row's values).
    limits: uint8 (len(tags) + 1, len(tags) + 1, 2): for head row, child
        row and direction (1: child right of head), the number of distance
        bins allowed; the last row and column (tags not in ``tags``) 255.
    """

    def __init__(self, tags, limits):
        tags = numpy.ascontiguousarray(tags, dtype="uint64").reshape(-1)
        limits = numpy.ascontiguousarray(limits, dtype="uint8")
        t = tags.shape[0]
        if t > MAX_TAGS or limits.shape != (t + 1, t + 1, 2):
            raise ValueError(f"arc filter arrays do not match: {t} tags, limits {limits.shape}")
        if t > 1 and not bool(numpy.all(tags[1:] > tags[:-1])):
            raise ValueError("arc filter tags must be sorted and unique")
        self.n_tags = t
        self._tags, self._limits = tags, limits
        self.tags_view = tags if t else numpy.zeros(1, dtype="uint64")
        self.limits_view = limits.reshape(-1)

    def __reduce__(self):
        return (ArcFilter, (self._tags, self._limits))

    @classmethod
    def fit(cls, items, int slack=SLACK):
        """The filter of the training trees ``items``: (Sentence, heads)
        pairs (heads[c] < 0: c's head unknown, skipped); ``slack`` distance
        bins allowed beyond the longest seen."""
        if slack < 0:
            raise ValueError(f"slack must be >= 0, got {slack}")
        cdef Sentence s
        cdef int c, h
        counts = {}
        arcs = []
        for s, heads in items:
            tags = s.tag_values(0)
            for c in range(1, s.n + 1):
                counts[int(tags[c])] = counts.get(int(tags[c]), 0) + 1
                h = heads[c]
                if 0 <= h <= s.n and h != c:
                    arcs.append((int(tags[h]), int(tags[c]), c > h, distance_bin(h, c)))
            counts[int(tags[0])] = counts.get(int(tags[0]), 0) + 1
        kept = sorted(counts, key=lambda tag: (-counts[tag], tag))[:MAX_TAGS]
        tag_ids = numpy.array(sorted(kept), dtype="uint64")
        row = {int(tag): i for i, tag in enumerate(tag_ids.tolist())}
        t = len(tag_ids)
        longest = numpy.full((t + 1, t + 1, 2), -1, dtype="int32")
        for head, child, right, bin_ in arcs:
            i, j = row.get(head, t), row.get(child, t)
            if bin_ > longest[i, j, int(right)]:
                longest[i, j, int(right)] = bin_
        limits = numpy.minimum(longest + 1 + slack, N_DISTANCE_BINS).astype("uint8")
        limits[t, :, :] = NO_LIMIT
        limits[:, t, :] = NO_LIMIT
        return cls(tag_ids, limits)

    @classmethod
    def unlimited(cls):
        """The filter that allows every arc (no tags)."""
        return cls(numpy.zeros(0, dtype="uint64"), numpy.full((1, 1, 2), NO_LIMIT, dtype="uint8"))

    def arrays(self):
        """{"tags", "limits"} as ``__init__`` takes them."""
        return {"tags": self._tags, "limits": self._limits}

    def allowed(self, Sentence s):
        """Boolean (n+1) x (n+1) matrix: the arcs h -> c (c >= 1, h != c) the
        filter lets ``s`` have."""
        cdef int N = s.n + 1, h, c
        rows_arr = numpy.zeros(N, dtype="int32")
        cdef int[::1] rows = rows_arr
        out = numpy.zeros((N, N), dtype=bool)
        self.tag_rows(s, &rows[0])
        for h in range(N):
            for c in range(1, N):
                if h != c:
                    out[h, c] = arc_allowed(&self.limits_view[0], self.n_tags + 1,
                                            &rows[0], h, c)
        return out

    cdef void tag_rows(self, Sentence s, int* rows) noexcept nogil:
        cdef const uint64_t* tags = s.tag_row(0)
        cdef int i, lo, hi, mid
        for i in range(s.n + 1):
            lo, hi = 0, self.n_tags
            while lo < hi:
                mid = (lo + hi) // 2
                if self.tags_view[mid] < tags[i]:
                    lo = mid + 1
                else:
                    hi = mid
            rows[i] = lo if lo < self.n_tags and self.tags_view[lo] == tags[i] else self.n_tags

"""Label restrictions of the labeler (version 2): the labels seen in
training for each key (the labeler's key is the arc's head tag, child tag
and direction); a key never seen allows every label. As MSTParser's labeler
restricts each arc to the labels its POS pair took in training (McDonald,
Lerman & Pereira 2006)."""
from libc.stdint cimport uint8_t, uint64_t

import numpy


cdef class LabelRestrictions:
    """A sorted table of keys, each with a row of allowed labels."""

    def __init__(self, int n_labels, keys=None, allowed=None):
        self.n_labels = n_labels
        if keys is None:
            keys = numpy.zeros(0, dtype="uint64")
            allowed = numpy.zeros((0, n_labels), dtype="uint8")
        keys = numpy.ascontiguousarray(keys, dtype="uint64")
        allowed = numpy.ascontiguousarray(allowed, dtype="uint8").reshape(-1, n_labels)
        if keys.ndim != 1 or allowed.shape[0] != keys.shape[0]:
            raise ValueError("restriction keys and rows do not match")
        if keys.shape[0] > 1 and not bool(numpy.all(keys[1:] > keys[:-1])):
            raise ValueError("restriction keys must be sorted and unique")
        self._keys, self._allowed = keys, allowed
        if keys.shape[0] == 0:  # memoryviews need one element to point at
            self.keys_view = numpy.zeros(1, dtype="uint64")
            self.allowed_view = numpy.zeros((1, n_labels), dtype="uint8")
        else:
            self.keys_view = keys
            self.allowed_view = allowed
        self.n_keys = keys.shape[0]

    @classmethod
    def from_seen(cls, int n_labels, seen):
        """The table of ``seen``: {key: the label ids seen with it}."""
        keys = numpy.array(sorted(seen), dtype="uint64")
        allowed = numpy.zeros((keys.shape[0], n_labels), dtype="uint8")
        for i, key in enumerate(keys.tolist()):
            allowed[i, sorted(seen[key])] = 1
        return cls(n_labels, keys, allowed)

    def arrays(self):
        """(keys, allowed) as ``__init__`` takes them."""
        return self._keys, self._allowed

    cdef const uint8_t* allowed_row(self, uint64_t key) noexcept nogil:
        cdef Py_ssize_t lo = 0, hi = self.n_keys, mid
        while lo < hi:
            mid = (lo + hi) // 2
            if self.keys_view[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n_keys and self.keys_view[lo] == key:
            return &self.allowed_view[lo, 0]
        return NULL

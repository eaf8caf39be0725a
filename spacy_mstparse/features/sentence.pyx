"""Per-sentence integer arrays that the feature extractors read.

A ``Sentence`` holds, for the artificial root (index 0) and the words 1..n of
one sentence, the ids the feature templates of McDonald et al. (2005) use:
lower-cased word, 5-character prefix (and whether the word is longer than
five characters), the tag rows (UPOS and/or XPOS, and supertags or word
clusters when the features read them) padded with
begin/end-of-sentence markers, and the morphological features (FEATS,
Nguyen et al. 2007) as a CSR list.
"""
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, uint64_t

import numpy

from .hashing import string_id as get_string_id

ROOT_WORD = get_string_id("<mst-root>")
ROOT_TAG = get_string_id("<mst-root-tag>")
BOS_TAG = get_string_id("<mst-bos>")
EOS_TAG = get_string_id("<mst-eos>")


cdef class Sentence:
    """Integer view of one sentence. Build it with ``Sentence(...)`` from arrays
    that include the root at position 0 (see ``features.doc_arrays``)."""

    def __init__(self, const uint64_t[:] words, const uint64_t[:] prefixes,
                 const char[:] is_long, const uint64_t[:, :] tags,
                 const int32_t[:] morph_start, const uint64_t[:] morph):
        cdef int n = words.shape[0] - 1
        cdef int n_tagsets = tags.shape[0]
        if n < 0:
            raise ValueError("A Sentence needs at least the root position")
        if prefixes.shape[0] != n + 1 or is_long.shape[0] != n + 1:
            raise ValueError("words, prefixes and is_long must have the same length")
        if tags.shape[1] != n + 1 or n_tagsets < 1:
            raise ValueError(f"tags must have shape (n_tagsets >= 1, {n + 1})")
        if morph_start.shape[0] != n + 2:
            raise ValueError(f"morph_start must have length {n + 2}")
        self.mem = Pool()
        self.n = n
        self.n_tagsets = n_tagsets
        self.word = <uint64_t*>self.mem.alloc(n + 1, sizeof(uint64_t))
        self.prefix = <uint64_t*>self.mem.alloc(n + 1, sizeof(uint64_t))
        self.is_long = <char*>self.mem.alloc(n + 1, sizeof(char))
        self.tags = <uint64_t*>self.mem.alloc(n_tagsets * (n + 3), sizeof(uint64_t))
        self.morph_start = <int32_t*>self.mem.alloc(n + 2, sizeof(int32_t))
        self.morph = <uint64_t*>self.mem.alloc(max(1, morph.shape[0]), sizeof(uint64_t))
        cdef int i, t
        cdef uint64_t* row
        for i in range(n + 1):
            self.word[i] = words[i]
            self.prefix[i] = prefixes[i]
            self.is_long[i] = is_long[i]
        for t in range(n_tagsets):
            row = self.tag_row(t)
            row[-1] = BOS_TAG
            for i in range(n + 1):
                row[i] = tags[t, i]
            row[n + 1] = EOS_TAG
        for i in range(n + 2):
            self.morph_start[i] = morph_start[i]
        for i in range(morph.shape[0]):
            self.morph[i] = morph[i]

    def __len__(self):
        return self.n

    def key(self):
        """A hash of the sentence's words and tag rows: the same for every
        encoding of the same sentence (the 1-slack SSVM's cache key)."""
        cdef Py_ssize_t i
        words = tuple(self.word[i] for i in range(self.n + 1))
        tags = tuple(self.tags[i] for i in range(self.n_tagsets * (self.n + 3)))
        return hash((words, tags))

    def tag_values(self, int t):
        """Tag row ``t`` as a uint64 array of n+1 ids (entry 0: the root)."""
        if not 0 <= t < self.n_tagsets:
            raise IndexError(f"tag row {t} of {self.n_tagsets}")
        cdef const uint64_t* row = self.tag_row(t)
        return numpy.array([row[i] for i in range(self.n + 1)], dtype="uint64")

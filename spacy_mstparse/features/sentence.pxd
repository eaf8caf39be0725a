from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, uint64_t


cdef class Sentence:
    cdef Pool mem
    cdef readonly int n
    cdef readonly int n_tagsets
    cdef uint64_t* word       # [0..n]: lower-case form id (0 = root)
    cdef uint64_t* prefix     # [0..n]: id of the 5-character prefix
    cdef char* is_long        # [0..n]: word longer than 5 characters
    cdef uint64_t* tags       # n_tagsets rows of n+3 ids: BOS, root, words, EOS
    cdef int32_t* morph_start # [0..n+1]: CSR offsets into morph
    cdef uint64_t* morph      # morphological feature ids (Feature=Value)

    cdef inline uint64_t* tag_row(self, int t) noexcept nogil:
        # Pointer such that row[-1] is BOS, row[0] the root, row[n+1] EOS.
        return self.tags + t * (self.n + 3) + 1

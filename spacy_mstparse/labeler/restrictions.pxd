from libc.stdint cimport uint8_t, uint64_t


cdef class LabelRestrictions:
    cdef readonly int n_labels
    cdef object _keys          # uint64 sorted, unique keys
    cdef object _allowed       # uint8 (n_keys, n_labels)
    cdef const uint64_t[::1] keys_view
    cdef const uint8_t[:, ::1] allowed_view
    cdef readonly Py_ssize_t n_keys

    # The allowed-label row (n_labels bytes, 1 = allowed) of key, NULL if the
    # key was never seen (every label allowed).
    cdef const uint8_t* allowed_row(self, uint64_t key) noexcept nogil

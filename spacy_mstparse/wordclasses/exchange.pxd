# The exchange state of one level of the divisive word clustering: the word
# bigram counts (CSR, both directions), each word's class, and the dense
# class-bigram counts that a move changes incrementally.
from libc.stdint cimport int64_t


cdef class ExchangeState:
    cdef readonly Py_ssize_t n_words, n_classes
    # right contexts of word w: words right_word[right_ptr[w]:right_ptr[w+1]]
    # with counts right_count[...] (the bigram (w, v)); left contexts alike
    cdef const int64_t[::1] right_ptr, right_word, right_count
    cdef const int64_t[::1] left_ptr, left_word, left_count
    cdef int64_t[::1] self_count     # N(w, w)
    cdef int64_t[::1] as_left        # bigrams with w on the left
    cdef int64_t[::1] as_right       # bigrams with w on the right
    cdef int64_t[::1] word_class
    cdef int64_t[:, ::1] bigram      # N(c, d), n_classes x n_classes
    cdef int64_t[::1] left_total     # N(c, .)
    cdef int64_t[::1] right_total    # N(., d)
    # scratch: the counts of w's neighbours by class, and which classes are set
    cdef int64_t[::1] right_by_class, left_by_class
    cdef int64_t[::1] right_touched, left_touched
    cdef Py_ssize_t n_right_touched, n_left_touched

    cdef void gather(self, Py_ssize_t w) noexcept nogil
    cdef void clear(self) noexcept nogil
    cdef double gathered_delta(self, Py_ssize_t w, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef void gathered_move(self, Py_ssize_t w, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef Py_ssize_t sibling_pass(self, const int64_t[::1] order) noexcept nogil

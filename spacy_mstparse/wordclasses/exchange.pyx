"""The exchange step of word clustering, with incremental move deltas.

Kneser & Ney (1993) and Martin, Liermann & Ney (1998) cluster words by
moving one word at a time to the class that most increases the class-bigram
log-likelihood; up to terms that do not depend on the classes it is

    F = sum_{c,d} N(c,d) log N(c,d) - sum_c N(c,.) log N(c,.) - sum_d N(.,d) log N(.,d)

(the form Uszkoreit & Brants 2008 optimise too), N(c,d) the number of
bigrams whose left word is in class c and whose right word is in class d.

Moving word w from class a to class b changes only rows a, b and columns
a, b of N, and only in the cells of the classes of w's neighbours: with
r(x) (l(x)) the bigrams from w to (into w from) words of class x, counted
with w still in a, and s = N(w, w),

    N(a,x) -= r(x),  N(b,x) += r(x),  N(x,a) -= l(x),  N(x,b) += l(x)   (x not a, b)
    N(a,a) -= r(a) + l(a) - s        N(a,b) += l(a) - s - r(b)
    N(b,a) += r(a) - s - l(b)        N(b,b) += r(b) + l(b) + s

and N(a,.), N(b,.), N(.,a), N(.,b) change by w's own counts. A move's delta
of F is therefore summed over those cells alone, in O(neighbours of w).

``ExchangeState`` holds one level of the divisive clustering
(``divisive.py``): a pass moves each word, in a given order, to the other
child of its parent class (class ``c ^ 1``) when that raises F.
"""
from libc.math cimport log
from libc.stdint cimport int64_t

import numpy

# A move must raise F by more than this (guards against moving back and
# forth on rounding noise).
cdef double MIN_GAIN_C = 1e-7
MIN_GAIN = MIN_GAIN_C


cdef inline double xlogx(int64_t n) noexcept nogil:
    return n * log(<double>n) if n > 0 else 0.0


cdef inline double cell_change(int64_t old, int64_t change) noexcept nogil:
    return xlogx(old + change) - xlogx(old)


def _int64(values, name):
    array = numpy.ascontiguousarray(values, dtype=numpy.int64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a vector")
    return array


cdef class ExchangeState:
    """Word bigram counts in both directions as CSR arrays (``right_ptr``,
    ``right_word``, ``right_count``: the words following each word and how
    often; ``left_*``: the words preceding it), and the class of each word
    among ``n_classes`` classes (``set_classes``)."""

    def __init__(self, right_ptr, right_word, right_count, left_ptr, left_word, left_count):
        self.right_ptr = _int64(right_ptr, "right_ptr")
        self.right_word = _int64(right_word, "right_word")
        self.right_count = _int64(right_count, "right_count")
        self.left_ptr = _int64(left_ptr, "left_ptr")
        self.left_word = _int64(left_word, "left_word")
        self.left_count = _int64(left_count, "left_count")
        n = self.right_ptr.shape[0] - 1
        if n < 0 or self.left_ptr.shape[0] != n + 1:
            raise ValueError("right_ptr and left_ptr need one entry per word plus one")
        self.n_words = n
        right_ptr = numpy.asarray(self.right_ptr)
        right_word = numpy.asarray(self.right_word)
        right_count = numpy.asarray(self.right_count)
        rows = numpy.repeat(numpy.arange(n, dtype=numpy.int64), numpy.diff(right_ptr))
        self.as_left = numpy.bincount(rows, weights=right_count, minlength=n).astype(numpy.int64)
        left_rows = numpy.repeat(numpy.arange(n, dtype=numpy.int64),
                                 numpy.diff(numpy.asarray(self.left_ptr)))
        self.as_right = numpy.bincount(left_rows, weights=numpy.asarray(self.left_count),
                                       minlength=n).astype(numpy.int64)
        self.self_count = numpy.bincount(rows[right_word == rows], weights=right_count[right_word == rows],
                                         minlength=n).astype(numpy.int64)
        self.word_class = numpy.zeros(n, dtype=numpy.int64)
        self.set_classes(numpy.zeros(n, dtype=numpy.int64), 1)

    def set_classes(self, classes, Py_ssize_t n_classes):
        """Give each word a class in [0, n_classes) and count the class bigrams."""
        classes = _int64(classes, "classes")
        if classes.shape[0] != self.n_words:
            raise ValueError(f"expected {self.n_words} classes, got {classes.shape[0]}")
        if n_classes < 1 or (self.n_words and (classes.min() < 0 or classes.max() >= n_classes)):
            raise ValueError(f"classes must lie in [0, {n_classes})")
        self.n_classes = n_classes
        self.word_class = classes.copy()
        rows = numpy.repeat(classes, numpy.diff(numpy.asarray(self.right_ptr)))
        cols = classes[numpy.asarray(self.right_word)]
        flat = numpy.bincount(rows * n_classes + cols, weights=numpy.asarray(self.right_count),
                              minlength=n_classes * n_classes)
        self.bigram = flat.astype(numpy.int64).reshape(n_classes, n_classes)
        self.left_total = numpy.asarray(self.bigram).sum(axis=1)
        self.right_total = numpy.asarray(self.bigram).sum(axis=0)
        self.right_by_class = numpy.zeros(n_classes, dtype=numpy.int64)
        self.left_by_class = numpy.zeros(n_classes, dtype=numpy.int64)
        self.right_touched = numpy.zeros(n_classes, dtype=numpy.int64)
        self.left_touched = numpy.zeros(n_classes, dtype=numpy.int64)
        self.n_right_touched = self.n_left_touched = 0

    @property
    def classes(self):
        """A copy of each word's class."""
        return numpy.asarray(self.word_class).copy()

    @property
    def class_bigrams(self):
        """A copy of the class-bigram counts N(c, d)."""
        return numpy.asarray(self.bigram).copy()

    def objective(self) -> float:
        """F of the current classes, summed over the whole class-bigram matrix."""
        cdef double total = 0.0
        cdef Py_ssize_t c, d
        with nogil:
            for c in range(self.n_classes):
                total -= xlogx(self.left_total[c]) + xlogx(self.right_total[c])
                for d in range(self.n_classes):
                    total += xlogx(self.bigram[c, d])
        return total

    def move_delta(self, Py_ssize_t word, Py_ssize_t to_class) -> float:
        """The change of F if ``word`` moved to ``to_class`` (0.0 for its own class)."""
        self._check(word, to_class)
        cdef Py_ssize_t a = self.word_class[word]
        cdef double delta = 0.0
        if a == to_class:
            return 0.0
        with nogil:
            self.gather(word)
            delta = self.gathered_delta(word, a, to_class)
            self.clear()
        return delta

    def move(self, Py_ssize_t word, Py_ssize_t to_class) -> None:
        """Move ``word`` to ``to_class``, updating the class-bigram counts."""
        self._check(word, to_class)
        cdef Py_ssize_t a = self.word_class[word]
        if a == to_class:
            return
        with nogil:
            self.gather(word)
            self.gathered_move(word, a, to_class)
            self.clear()

    def exchange_pass(self, order) -> int:
        """One pass over the words of ``order``: each moves to its sibling
        class (``class ^ 1``, the other child of its parent) when that raises
        F by more than ``MIN_GAIN``. Returns the number of moves."""
        cdef const int64_t[::1] visit = _int64(order, "order")
        if visit.shape[0] and (numpy.asarray(visit).min() < 0
                               or numpy.asarray(visit).max() >= self.n_words):
            raise ValueError("order holds a word id out of range")
        if self.n_classes % 2:
            raise ValueError("sibling moves need an even number of classes")
        cdef Py_ssize_t moves
        with nogil:
            moves = self.sibling_pass(visit)
        return moves

    def _check(self, Py_ssize_t word, Py_ssize_t to_class):
        if not 0 <= word < self.n_words:
            raise IndexError(f"word {word} out of range [0, {self.n_words})")
        if not 0 <= to_class < self.n_classes:
            raise IndexError(f"class {to_class} out of range [0, {self.n_classes})")

    cdef Py_ssize_t sibling_pass(self, const int64_t[::1] order) noexcept nogil:
        cdef Py_ssize_t i, w, a, b, moves = 0
        for i in range(order.shape[0]):
            w = order[i]
            a = self.word_class[w]
            b = a ^ 1
            self.gather(w)
            if self.gathered_delta(w, a, b) > MIN_GAIN_C:
                self.gathered_move(w, a, b)
                moves += 1
            self.clear()
        return moves

    cdef void gather(self, Py_ssize_t w) noexcept nogil:
        """r(x) and l(x) of w into right_by_class / left_by_class."""
        cdef Py_ssize_t j, x
        for j in range(self.right_ptr[w], self.right_ptr[w + 1]):
            x = self.word_class[self.right_word[j]]
            if self.right_by_class[x] == 0:
                self.right_touched[self.n_right_touched] = x
                self.n_right_touched += 1
            self.right_by_class[x] += self.right_count[j]
        for j in range(self.left_ptr[w], self.left_ptr[w + 1]):
            x = self.word_class[self.left_word[j]]
            if self.left_by_class[x] == 0:
                self.left_touched[self.n_left_touched] = x
                self.n_left_touched += 1
            self.left_by_class[x] += self.left_count[j]

    cdef void clear(self) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.n_right_touched):
            self.right_by_class[self.right_touched[i]] = 0
        for i in range(self.n_left_touched):
            self.left_by_class[self.left_touched[i]] = 0
        self.n_right_touched = self.n_left_touched = 0

    cdef double gathered_delta(self, Py_ssize_t w, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        cdef Py_ssize_t i, x
        cdef int64_t r, l, s = self.self_count[w]
        cdef int64_t ra = self.right_by_class[a], rb = self.right_by_class[b]
        cdef int64_t la = self.left_by_class[a], lb = self.left_by_class[b]
        cdef int64_t n_left = self.as_left[w], n_right = self.as_right[w]
        cdef double delta = 0.0
        for i in range(self.n_right_touched):
            x = self.right_touched[i]
            if x != a and x != b:
                r = self.right_by_class[x]
                delta += cell_change(self.bigram[a, x], -r) + cell_change(self.bigram[b, x], r)
        for i in range(self.n_left_touched):
            x = self.left_touched[i]
            if x != a and x != b:
                l = self.left_by_class[x]
                delta += cell_change(self.bigram[x, a], -l) + cell_change(self.bigram[x, b], l)
        delta += cell_change(self.bigram[a, a], -(ra + la - s))
        delta += cell_change(self.bigram[a, b], la - s - rb)
        delta += cell_change(self.bigram[b, a], ra - s - lb)
        delta += cell_change(self.bigram[b, b], rb + lb + s)
        delta -= cell_change(self.left_total[a], -n_left) + cell_change(self.left_total[b], n_left)
        delta -= cell_change(self.right_total[a], -n_right) + cell_change(self.right_total[b], n_right)
        return delta

    cdef void gathered_move(self, Py_ssize_t w, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        cdef Py_ssize_t i, x
        cdef int64_t r, l, s = self.self_count[w]
        cdef int64_t ra = self.right_by_class[a], rb = self.right_by_class[b]
        cdef int64_t la = self.left_by_class[a], lb = self.left_by_class[b]
        for i in range(self.n_right_touched):
            x = self.right_touched[i]
            if x != a and x != b:
                r = self.right_by_class[x]
                self.bigram[a, x] -= r
                self.bigram[b, x] += r
        for i in range(self.n_left_touched):
            x = self.left_touched[i]
            if x != a and x != b:
                l = self.left_by_class[x]
                self.bigram[x, a] -= l
                self.bigram[x, b] += l
        self.bigram[a, a] -= ra + la - s
        self.bigram[a, b] += la - s - rb
        self.bigram[b, a] += ra - s - lb
        self.bigram[b, b] += rb + lb + s
        self.left_total[a] -= self.as_left[w]
        self.left_total[b] += self.as_left[w]
        self.right_total[a] -= self.as_right[w]
        self.right_total[b] += self.as_right[w]
        self.word_class[w] = b

"""Prediction weights as 8-bit codes into a 256-value codebook.

The hashed arc weight table (2^22 float32 weights, 16 MB) is read at random
for every feature of every candidate arc, so parsing is bound by cache
misses. Stored as one byte per bucket (4 MB) the same reads hit the cache
far more often. The codebook is logarithmic (as mu-law / A-law companding,
and the log-domain weight quantization of Miyashita et al. 2016): 127
magnitudes per sign, spaced geometrically, so every weight keeps its sign
and a bounded relative error (about 5% on EWT models), the large, decisive
weights included. (A 1-d k-means codebook had a lower mean squared error
but large errors on the few largest weights, and lost 0.16 dev UAS against
0.03 for this one; BENCHMARKS.md.) Code 0 stands for an exact 0, so
buckets no feature ever touched stay 0. With at most 255 distinct non-zero
weights the codes are exact. Only prediction reads these:
training updates the float tables. With ``quantize_weights`` the saved
model holds the codes of the non-zero weights and the codebook (arc and
label weights; ``components.serialization.dump_weight_vector``); loading
gives the codebook's values, whose codes are exact.
"""
cimport cython
from libc.math cimport fabs, log, rint
from libc.stdint cimport uint8_t, uint64_t

import math

import numpy

cdef enum:
    CODES = 256           # codebook values (code 0: the exact 0)
N_CODES = CODES
N_LEVELS = 127            # per sign: codes 1..127 positive, 128..254 negative
SMALLEST_PERCENTILE = 0.5  # |w| below this percentile of the non-zero |w| rounds up to it


cdef class QuantizedWeights:
    """8-bit codes (``codes``, uint8, one per bucket) and the ``codebook``
    (float32, 256 values; ``codebook[0] == 0``). Build with ``quantize``."""

    def __init__(self, codes, codebook):
        codes = numpy.ascontiguousarray(codes, dtype="uint8").reshape(-1)
        codebook = numpy.ascontiguousarray(codebook, dtype="float32").reshape(-1)
        if codebook.shape[0] != N_CODES:
            raise ValueError(f"a codebook has {N_CODES} values, got {codebook.shape[0]}")
        self.codes = codes
        self.codebook = codebook

    def __len__(self):
        return self.codes.shape[0]

    @property
    def nbytes(self):
        return self.codes.nbytes + self.codebook.nbytes

    def dequantize(self):
        """The float32 weights the codes stand for."""
        return self.codebook[self.codes]

    cdef Weights view(self) noexcept:
        cdef Weights w
        cdef const uint8_t[::1] codes = self.codes
        cdef const float[::1] book = self.codebook
        w.dense = NULL
        w.codes = &codes[0] if codes.shape[0] else NULL
        w.codebook = &book[0]
        return w

    def __reduce__(self):
        return (QuantizedWeights, (self.codes, self.codebook))


def quantize(weights, levels=N_LEVELS):
    """``QuantizedWeights`` of a float weight vector: 0 stays exactly 0; with
    at most 255 distinct non-zero values (``2 * levels`` with fewer
    ``levels``) the codes are exact; otherwise each non-zero weight keeps its
    sign and its magnitude goes to the nearest (in log scale) of ``levels``
    (2 to 127) levels spaced geometrically from the 0.5th percentile of the
    non-zero magnitudes to the largest one. The values the codes stand for
    quantize to themselves (the exact case). The passes over the table are
    C loops."""
    if not 2 <= levels <= N_LEVELS:
        raise ValueError(f"levels must be 2 to {N_LEVELS}, got {levels!r}")
    w = numpy.ascontiguousarray(weights, dtype="float32").reshape(-1)
    codebook = numpy.zeros(N_CODES, dtype="float32")
    codes = numpy.zeros(w.shape[0], dtype="uint8")
    table = numpy.full(N_CODES, numpy.inf, dtype="float32")
    n_distinct = _distinct_nonzero(w, table, N_CODES - 1 if levels == N_LEVELS else 2 * levels)
    if n_distinct >= 0:
        codebook[1:1 + n_distinct] = table[:n_distinct]
        _exact_codes(w, table, codes)
        return QuantizedWeights(codes, codebook)
    magnitude = numpy.abs(w[w != 0]).astype("float64")
    lo = float(numpy.percentile(magnitude, SMALLEST_PERCENTILE, overwrite_input=True))
    hi = float(magnitude.max())
    del magnitude
    grid = numpy.geomspace(lo, hi, levels)
    codebook[1:1 + levels] = grid
    codebook[1 + levels:1 + 2 * levels] = -grid
    _log_codes(w, lo, math.log(hi / lo) / (levels - 1), levels, codes)
    return QuantizedWeights(codes, codebook)


cdef inline Py_ssize_t _lower_bound(const float* table, float x) noexcept nogil:
    """The number of entries of ``table`` (CODES sorted values, padded
    with +inf) below ``x``: a search of fixed length, without branches."""
    cdef Py_ssize_t pos = 0, half = CODES >> 1
    while half:
        pos += half if table[pos + half - 1] < x else 0
        half >>= 1
    return pos


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _distinct_nonzero(const float[::1] w, float[::1] table,
                                  Py_ssize_t limit) noexcept nogil:
    """The distinct non-zero values of ``w``, sorted, into ``table``
    (CODES entries of +inf): their number, or -1 (stopping there) when
    there are more than ``limit``."""
    cdef Py_ssize_t i, j, low, k = 0
    cdef float x
    for i in range(w.shape[0]):
        x = w[i]
        if x == 0:
            continue
        low = _lower_bound(&table[0], x)
        if table[low] == x:
            continue
        if k == limit:
            return -1
        j = k
        while j > low:
            table[j] = table[j - 1]
            j -= 1
        table[low] = x
        k += 1
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _exact_codes(const float[::1] w, const float[::1] table,
                       uint8_t[::1] codes) noexcept nogil:
    """Code of each weight: 0 for 0, else 1 + its index in ``table`` (the
    sorted non-zero values, padded with +inf to CODES entries)."""
    cdef Py_ssize_t i
    cdef float x
    for i in range(w.shape[0]):
        x = w[i]
        codes[i] = 0 if x == 0 else <uint8_t>(_lower_bound(&table[0], x) + 1)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _log_codes(const float[::1] w, double lo, double step, int levels,
                     uint8_t[::1] codes) noexcept nogil:
    """Code of each weight: 0 for 0, else its sign's block (1.. for
    positive, 1 + levels.. for negative) plus the nearest of the levels
    lo * exp(k * step), k = 0 .. levels - 1, in log scale (magnitudes below
    lo round up to it)."""
    cdef Py_ssize_t i
    cdef float x
    cdef double m, level
    for i in range(w.shape[0]):
        x = w[i]
        if x == 0:
            codes[i] = 0
            continue
        m = fabs(<double>x)
        if m < lo:
            m = lo
        level = rint(log(m / lo) / step)
        if level > levels - 1:
            level = levels - 1
        codes[i] = <uint8_t>((1 if x > 0 else 1 + levels) + <int>level)


cdef int weights_view(object weights, uint64_t n, Weights* out) except -1:
    cdef const float[::1] dense
    if isinstance(weights, QuantizedWeights):
        if <uint64_t>len(weights) != n:
            raise ValueError(f"weights has {len(weights)} entries, expected {n}")
        out[0] = (<QuantizedWeights>weights).view()
        return 0
    dense = weights
    if <uint64_t>dense.shape[0] != n:
        raise ValueError(f"weights has {dense.shape[0]} entries, expected {n}")
    out.dense = &dense[0]
    out.codes = NULL
    out.codebook = NULL
    return 0

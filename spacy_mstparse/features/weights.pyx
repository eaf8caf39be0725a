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
from libc.stdint cimport uint8_t, uint64_t

import numpy

N_CODES = 256
N_LEVELS = 127            # per sign: codes 1..127 positive, 128..254 negative
SMALLEST_PERCENTILE = 0.5  # |w| below this percentile of the non-zero |w| rounds up to it
QUANTIZE_CHUNK = 1 << 20   # entries quantize codes at a time


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
    quantize to themselves (the exact case). The codes are computed
    ``QUANTIZE_CHUNK`` entries at a time, so that the temporary arrays stay
    small next to the table."""
    if not 2 <= levels <= N_LEVELS:
        raise ValueError(f"levels must be 2 to {N_LEVELS}, got {levels!r}")
    w = numpy.ascontiguousarray(weights, dtype="float32").reshape(-1)
    codebook = numpy.zeros(N_CODES, dtype="float32")
    codes = numpy.zeros(w.shape[0], dtype="uint8")
    distinct = numpy.unique(w)
    distinct = distinct[distinct != 0]
    if distinct.shape[0] <= (N_CODES - 1 if levels == N_LEVELS else 2 * levels):
        codebook[1:1 + distinct.shape[0]] = distinct
        for start in range(0, w.shape[0], QUANTIZE_CHUNK):
            part = w[start:start + QUANTIZE_CHUNK]
            code = (numpy.searchsorted(distinct, part) + 1).astype("uint8")
            code[part == 0] = 0
            codes[start:start + QUANTIZE_CHUNK] = code
        return QuantizedWeights(codes, codebook)
    magnitude = numpy.abs(w[w != 0]).astype("float64")
    lo = float(numpy.percentile(magnitude, SMALLEST_PERCENTILE))
    hi = float(magnitude.max())
    del magnitude
    grid = numpy.geomspace(lo, hi, levels)
    step = numpy.log(hi / lo) / (levels - 1)
    codebook[1:1 + levels] = grid
    codebook[1 + levels:1 + 2 * levels] = -grid
    for start in range(0, w.shape[0], QUANTIZE_CHUNK):
        part = w[start:start + QUANTIZE_CHUNK]
        m = numpy.abs(part).astype("float64")
        level = numpy.rint(numpy.log(numpy.maximum(m, lo) / lo) / step)
        level = numpy.clip(level, 0, levels - 1).astype("uint8")
        code = numpy.where(part > 0, 1 + level, 1 + levels + level).astype("uint8")
        code[part == 0] = 0
        codes[start:start + QUANTIZE_CHUNK] = code
    return QuantizedWeights(codes, codebook)


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

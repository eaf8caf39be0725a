# How the feature scorers read a weight table: dense float32, or 8-bit codes
# into a 256-value codebook (weights.pyx). The first-order (first_order.pyx,
# arc_emitters.pxd) and sibling (second_order.pyx) scorers read every weight
# through ``weight_at``.
from libc.stdint cimport uint8_t, uint64_t


cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef struct Weights:
    const float* dense      # float32 table, or NULL when quantized
    const uint8_t* codes    # one code per bucket (when dense is NULL)
    const float* codebook   # the 256 values the codes stand for


cdef inline float weight_at(const Weights* w, uint64_t b) noexcept nogil:
    if w.dense != NULL:
        return w.dense[b]
    return w.codebook[w.codes[b]]


cdef inline void prefetch_weight(const Weights* w, uint64_t b) noexcept nogil:
    if w.dense != NULL:
        __builtin_prefetch(&w.dense[b])
    else:
        __builtin_prefetch(&w.codes[b])


cdef class QuantizedWeights:
    cdef readonly object codes       # uint8 numpy array, one code per bucket
    cdef readonly object codebook    # float32 numpy array of 256 values
    cdef Weights view(self) noexcept


# Point ``out`` at ``weights`` (a float32 array or QuantizedWeights) of
# ``n`` buckets; the caller keeps ``weights`` alive while ``out`` is used.
cdef int weights_view(object weights, uint64_t n, Weights* out) except -1

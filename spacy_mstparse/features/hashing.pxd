"""Integer feature hashing shared by the feature extractors.

Feature keys are tuples of 64-bit attribute ids (spaCy's string hashes) and
small template ids. They are combined with MurmurHash3's 64-bit finaliser,
so no feature string is ever built.
"""
from libc.stdint cimport uint64_t


cdef inline uint64_t fmix64(uint64_t k) noexcept nogil:
    # MurmurHash3 64-bit finaliser (a bijection with good avalanche).
    k ^= k >> 33
    k *= 0xff51afd7ed558ccdULL
    k ^= k >> 33
    k *= 0xc4ceb9fe1a85ec53ULL
    k ^= k >> 33
    return k


cdef inline uint64_t mix(uint64_t a, uint64_t b) noexcept nogil:
    # Order-sensitive combination of two ids.
    return fmix64(a * 0x9E3779B97F4A7C15ULL + b)


cdef inline uint64_t mix3(uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    return mix(mix(a, b), c)

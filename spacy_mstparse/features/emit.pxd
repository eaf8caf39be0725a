# Emitting feature hashes together with their template keys: the extractors
# (arc_emitters.pxd, labeler/label_features.pyx) write each hash through
# ``put`` with the key of its template, so the key of every feature comes
# from the line that hashes it. Keys go to an array (uint8 first-order keys,
# features/templates.pyx; int32 label keys, labeler/templates.pyx) or, when
# scoring, nowhere: Cython compiles one copy of an emitter per ``KeySink``,
# and the scoring copy has no key stores and no tests.
from libc.stdint cimport int32_t, uint8_t, uint64_t

from .hashing cimport mix, mix3


cdef struct NoKeys:
    char unused

ctypedef fused KeySink:
    uint8_t
    int32_t
    NoKeys


cdef inline int put(uint64_t* out, KeySink* keys, int k, uint64_t key,
                    uint64_t h) noexcept nogil:
    """Emit the hash ``h`` of template key ``key`` at ``out[k]`` (and the key
    at ``keys[k]``); returns k + 1."""
    out[k] = h
    if KeySink is not NoKeys:
        keys[k] = <KeySink>key
    return k + 1


cdef inline int put1(uint64_t* out, KeySink* keys, int k, uint64_t key,
                     uint64_t a) noexcept nogil:
    """Emit the hash of template key ``key`` with one attribute id."""
    return put(out, keys, k, key, mix(key, a))


cdef inline int put2(uint64_t* out, KeySink* keys, int k, uint64_t key, uint64_t a,
                     uint64_t b) noexcept nogil:
    """Emit the hash of template key ``key`` with two attribute ids."""
    return put(out, keys, k, key, mix3(key, a, b))

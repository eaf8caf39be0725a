"""Python access to the integer hash combiners of ``hashing.pxd`` (for tests and tools)."""
from libc.stdint cimport uint64_t
from murmurhash.mrmr cimport hash64


def py_fmix64(uint64_t k):
    return fmix64(k)


def py_mix(uint64_t a, uint64_t b):
    return mix(a, b)


def string_id(str text):
    """The 64-bit id of a string, equal to spaCy's ``StringStore`` hash
    (MurmurHash64A of the UTF-8 bytes, seed 1), without importing spaCy."""
    cdef bytes data = text.encode("utf8")
    return hash64(<char*>data, len(data), 1)

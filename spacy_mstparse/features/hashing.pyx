"""Python access to the integer hash combiners of ``hashing.pxd`` (for tests and tools)."""
from libc.stdint cimport uint64_t
from murmurhash.mrmr cimport hash64


def py_fmix64(uint64_t k):
    return fmix64(k)


def py_mix(uint64_t a, uint64_t b):
    return mix(a, b)


def string_id(str text):
    """The 64-bit id of a string, equal to spaCy's ``StringStore`` id
    (MurmurHash64A of the UTF-8 bytes, seed 1; 0 for "") for strings that are
    not among spaCy's predefined symbols (as the parser's markers), without
    importing spaCy."""
    if not text:
        return 0
    cdef bytes data = text.encode("utf8")
    return hash64(<char*>data, len(data), 1)

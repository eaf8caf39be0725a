"""Python access to the integer hash combiners of ``hashing.pxd`` (for tests and tools)."""
from libc.stdint cimport uint64_t


def py_fmix64(uint64_t k):
    return fmix64(k)


def py_mix(uint64_t a, uint64_t b):
    return mix(a, b)

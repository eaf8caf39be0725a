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


# ``mix(base[j], b) & mask`` for j < k into ``out``: the same hashes as
# ``mix``, in a loop the C compiler vectorizes (conjoining a whole arc's
# features with its direction / distance code at once). With GCC on x86-64
# Linux it is compiled for AVX-512 and AVX2 as well, picked at run time.
cdef extern from *:
    """
    #if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) \
        && defined(__GLIBC__) && !defined(__clang__) && !defined(__INTEL_COMPILER)
    #define MST_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
    #else
    #define MST_VECTOR_CLONES
    #endif
    MST_VECTOR_CLONES static void mst_mix_all(const uint64_t* base, int k, uint64_t b,
                                              uint64_t mask, uint64_t* out) {
        for (int j = 0; j < k; j++) {
            uint64_t x = base[j] * 0x9E3779B97F4A7C15ULL + b;
            x ^= x >> 33;
            x *= 0xff51afd7ed558ccdULL;
            x ^= x >> 33;
            x *= 0xc4ceb9fe1a85ec53ULL;
            x ^= x >> 33;
            out[j] = x & mask;
        }
    }
    """
    void mix_all "mst_mix_all" (const uint64_t* base, int k, uint64_t b, uint64_t mask,
                                uint64_t* out) noexcept nogil

# One sentence's factor scores as C pointers, and a tree's score under them,
# shared by the decode entry (dispatch.pyx) and the decoders that rescore
# trees. Header only.
#
# arc: row-major (n+1) x (n+1) float32, arc[h*(n+1)+c]; sib: NULL or (n+1)^3
# sibling and stop scores sib[(h*(n+1)+s)*(n+1)+c] (McDonald & Pereira 2006;
# Koo & Collins 2010); grand: NULL or (n+1)^3 grandparent scores
# grand[(g*(n+1)+h)*(n+1)+c] (Carreras 2007). -inf forbids.
cdef struct CFactors:
    const float* arc
    const float* sib
    const float* grand
    int n


# The data of a C-contiguous float32 array that the caller keeps alive
# (NULL for None): the pointer a score array is handed to C code as.
cdef inline const float* float_data(object arr) except? NULL:
    cdef const float[::1] flat
    if arr is None:
        return NULL
    flat = arr.reshape(-1)
    return &flat[0]


# 1 (arcs), 2 (+ siblings) or 3 (+ grandparents).
cdef inline int factor_order(const CFactors* f) noexcept nogil:
    if f.grand != NULL:
        return 3
    return 2 if f.sib != NULL else 1


cdef inline double _factor_sib(const float* sib, int N, int h, int s, int c) noexcept nogil:
    return sib[(<Py_ssize_t>h * N + s) * N + c]


# A tree's score (heads[0] = -1, every other head in 0..n) as the decoders
# count it, in double precision: its arcs; for every head and side its
# dependents from the head outwards, sib[h, h, c1] + sib[h, c1, c2] + ..., and
# (words only) the stop factor sib[h, last, h], or sib[h, h, h] / sib[h, 0, h]
# with no dependent on the right / left; grand[heads[h], h, c] for every arc
# h -> c below a word h.
cdef inline double tree_score_c(const CFactors* f, const int* heads) noexcept nogil:
    cdef int N = f.n + 1, h, c, prev
    cdef double total = 0.0
    for c in range(1, N):
        total += f.arc[heads[c] * N + c]
    if f.sib != NULL:
        for h in range(N):
            # dependents from the head outwards, then (words only) the stop
            # factor of the outermost one, or sib[h, h, h] / sib[h, 0, h] if none
            prev = h
            for c in range(h + 1, N):
                if heads[c] == h:
                    total += _factor_sib(f.sib, N, h, prev, c)
                    prev = c
            if h > 0:
                total += _factor_sib(f.sib, N, h, prev, h)
            prev = h
            for c in range(h - 1, 0, -1):
                if heads[c] == h:
                    total += _factor_sib(f.sib, N, h, prev, c)
                    prev = c
            if h > 0:
                total += _factor_sib(f.sib, N, h, prev if prev != h else 0, h)
    if f.grand != NULL:
        for c in range(1, N):
            h = heads[c]
            if h > 0:
                total += f.grand[(<Py_ssize_t>heads[h] * N + h) * N + c]
    return total

from libc.stdint cimport int32_t

# Per-word tree context arrays: the rows of the int32 (N_CTX, n+1) array
# ``tree_context`` fills.
cdef enum:
    C_NLEFT = 0
    C_NRIGHT = 1
    C_LEFTMOST = 2
    C_RIGHTMOST = 3
    C_INNER = 4      # adjacent dependent of the same head, on the head's side
    C_OUTER = 5      # adjacent dependent of the same head, away from the head
    C_RANK = 6       # 1 = nearest the head on its side
    C_PREV = 7       # previous dependent of the same head, left to right
    C_LAST = 8       # last (rightmost) dependent of this word
    N_CTX = 9

cdef void tree_context(int n, const int32_t* heads, int32_t* ctx) noexcept nogil

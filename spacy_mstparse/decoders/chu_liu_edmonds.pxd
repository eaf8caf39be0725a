# Non-projective first-order decoder (maximum spanning arborescence rooted at
# node 0; Chu & Liu 1965, Edmonds 1967; McDonald et al. 2005b). C-level API for
# other Cython modules; see chu_liu_edmonds.pyx.
#
# scores: row-major (n+1) x (n+1), scores[h*(n+1)+c] = score of arc h -> c,
#         index 0 = artificial root (column 0 and the diagonal are never read);
#         -inf forbids the arc.
# heads:  length n+1, receives the tree; heads[0] = -1.
# Returns 0 on success, -1 on allocation failure (or n < 0), 1 when every tree
# (with one root child if single_root) uses a forbidden arc (heads is then not
# a tree). See DECODE_* in call_decoder.pxd.
cdef int chu_liu_edmonds_decode(const float* scores, int n, int* heads,
                                bint single_root) noexcept nogil


# The contraction algorithm itself, on a prepared double matrix, shared with
# the k-best decoder (kbest_spanning_trees.pyx).
cdef struct CLEWork:
    int N              # n + 1
    double* W          # N*N scores, filled by the caller before cle_solve
                       # (column 0 and the diagonal -inf); overwritten
    int* src           # N*N: original arc each cell of W stands for
    int* dst
    int* ibuf          # 16N + 1 ints of bookkeeping
    double* cyc_w      # N
    # Only with extras (cle_work_init(..., True)): what cle_solve needs for a
    # preferred tree and for the next-best search.
    double* W2         # N*N: second best original arc behind each cell
    int* bonus         # N*N: tie-break count of preferred arcs behind each cell
    int* xbuf          # 7N ints: cyc_b, subtree intervals of the preferred tree


cdef struct CLENext:
    # Result of the next-best search: the second best tree scores ``delta``
    # less than the best one and is the best tree without the arc
    # e_src -> e_dst. delta = +inf when the best tree is the only one.
    double delta
    int e_src
    int e_dst


# Allocate the work buffers for n words (extras: W2, bonus, xbuf). Returns 0,
# or -1 when memory could not be allocated (nothing is then held).
cdef int cle_work_init(CLEWork* wk, int n, bint extras) noexcept nogil
cdef void cle_work_free(CLEWork* wk) noexcept nogil

# Maximum spanning arborescence of wk.W (any number of root children; the
# caller penalizes root arcs for one root child). heads receives the tree.
# prefer (NULL or a valid tree; needs extras): among equal-scoring choices
# take the arcs of prefer, so that when prefer is a best tree the result is
# exactly prefer (up to rounding: the caller compares).
# nxt (NULL, or with prefer = the best tree; needs extras): also find the
# second best tree (Camerini, Fratta & Maffioli 1980), valid when the result
# equals prefer. Returns 0, or 1 (no tree avoids the -inf arcs; heads is then
# not a tree).
cdef int cle_solve(CLEWork* wk, int* heads, const int* prefer,
                   CLENext* nxt) noexcept nogil

# Fill a work matrix W (N*N) from float scores: column 0 and the diagonal
# -inf; with single_root, subtract from every root arc the constant that puts
# every tree with one root child above every tree with several (see
# chu_liu_edmonds.pyx). Returns False when every arc is -inf.
cdef bint fill_scores(double* W, const float* scores, int N,
                      bint single_root) noexcept nogil

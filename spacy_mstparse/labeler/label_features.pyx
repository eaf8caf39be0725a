"""The arc labeler's features (McDonald, Lerman & Pereira 2006): the weight
rows of the arc features of h -> c and of the transition features between
the labels of a head's adjacent dependents, from the words and tag rows of a
``Sentence`` and the tree context (``tree_context``) of the unlabeled tree.

Arc features (version 1): words and tags of head and child, their pairs,
direction and binned distance, the tags around the child, the head's own
head, the child's valence and outermost dependents' tags, the child's prefix
when it is long, and with ``use_morph`` its morphological features, alone,
with its tag and with the head's tag and the direction (case and verb form
decide many labels), and the head's with the child's tag. Version
2 adds (``Flag``) the adjacent siblings' tags, the child's rank on its side
and the tags around the head (``F_CONTEXT``), words of the child's outermost
dependents (``F_DEP_WORDS``) and bags of the words of its dependents and of
its siblings (``F_DEP_BAGS``). Template ids: ``templates.pxd``.
"""
from libc.stdint cimport int32_t, uint64_t

from ..features.emit cimport KeySink, NoKeys, put
from ..features.hashing cimport mix, mix3
from ..features.sentence cimport Sentence
from .templates cimport *
from .tree_context cimport (C_INNER, C_LAST, C_LEFTMOST, C_NLEFT, C_NRIGHT, C_OUTER, C_PREV,
                            C_RANK, C_RIGHTMOST)


# Side codes of a transition: 3 * side of the previous dependent (0 left of
# the head, 1 right, 2 none: the first dependent) + side of this one.
cdef inline int side_code(int prev, int c, int h) noexcept nogil:
    return 3 * (2 if prev < 0 else (1 if prev > h else 0)) + (1 if c > h else 0)


cdef inline int bin3(int k) noexcept nogil:
    return k if k < 2 else 2


cdef int arc_feature_rows(Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                          int flags, int limit, bint use_morph, RowTable table,
                          uint64_t* out, int32_t* kinds) noexcept nogil:
    """Weight-row offsets of the features of arc heads[c] -> c in ``out``
    (at most ``limit``: the morphological features stop there); with
    ``kinds`` (or NULL), also each feature's template key (``tagset * 64 +
    LabelTemplate``). ``ctx``: the (N_CTX, n+1) tree context; ``flags``:
    the feature groups (``Flag``) besides the version 1 set."""
    # one copy of the emitters writes keys, the other (scoring) none: emit.pxd
    if kinds is NULL:
        return _arc_feature_rows(s, heads, ctx, c, flags, limit, use_morph, table, out,
                                 <NoKeys*>NULL)
    return _arc_feature_rows(s, heads, ctx, c, flags, limit, use_morph, table, out, kinds)


cdef int _arc_feature_rows(Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                           int flags, int limit, bint use_morph, RowTable table,
                           uint64_t* out, KeySink* kinds) noexcept nogil:
    cdef int n1 = s.n + 1
    cdef const int32_t* n_left = ctx + C_NLEFT * n1
    cdef const int32_t* n_right = ctx + C_NRIGHT * n1
    cdef const int32_t* leftmost = ctx + C_LEFTMOST * n1
    cdef const int32_t* rightmost = ctx + C_RIGHTMOST * n1
    cdef int h = heads[c]
    cdef int k = 0, t, m, x, kt
    cdef int dd = (c - h if c > h else h - c)
    dd = dd if dd <= 5 else (6 if dd <= 10 else 7)
    dd = dd + (8 if c > h else 0)
    cdef bint context = flags & F_CONTEXT
    cdef int inner = ctx[C_INNER * n1 + c], outer = ctx[C_OUTER * n1 + c]
    cdef int rank = ctx[C_RANK * n1 + c]
    cdef uint64_t hW = s.word[h], cW = s.word[c], hP, cP, gP, tid, sP
    cdef uint64_t* row
    k = put(out, kinds, k, L_BIAS, L_BIAS)
    k = put(out, kinds, k, L_HW, mix(L_HW, hW))
    k = put(out, kinds, k, L_CW, mix(L_CW, cW))
    k = put(out, kinds, k, L_HWCW, mix3(L_HWCW, hW, cW))
    k = put(out, kinds, k, L_CW_DIR, mix3(L_CW_DIR, cW, c > h))
    k = put(out, kinds, k, L_DD, mix(L_DD, dd))
    if s.is_long[c]:
        k = put(out, kinds, k, L_CX, mix(L_CX, s.prefix[c]))
    for t in range(s.n_tagsets):
        # a tag column's templates hash from 32 t + id; their keys are 64 t + id
        tid = 32 * t
        kt = 64 * t
        row = s.tag_row(t)
        hP = row[h]; cP = row[c]
        gP = row[heads[h]] if h > 0 else row[-1]
        k = put(out, kinds, k, kt + L_HP, mix(tid + L_HP, hP))
        k = put(out, kinds, k, kt + L_CP, mix(tid + L_CP, cP))
        k = put(out, kinds, k, kt + L_HWCP, mix3(tid + L_HWCP, hW, cP))
        k = put(out, kinds, k, kt + L_HPCW, mix3(tid + L_HPCW, hP, cW))
        k = put(out, kinds, k, kt + L_HPCP, mix3(tid + L_HPCP, hP, cP))
        k = put(out, kinds, k, kt + L_HPCP_DD, mix(mix3(tid + L_HPCP_DD, hP, cP), dd))
        k = put(out, kinds, k, kt + L_CP_DIR, mix3(tid + L_CP_DIR, cP, c > h))
        k = put(out, kinds, k, kt + L_CTX_L, mix(mix3(tid + L_CTX_L, row[c - 1], cP), hP))
        k = put(out, kinds, k, kt + L_CTX_R, mix(mix3(tid + L_CTX_R, cP, row[c + 1]), hP))
        k = put(out, kinds, k, kt + L_GP, mix(mix3(tid + L_GP, gP, hP), cP))
        k = put(out, kinds, k, kt + L_VAL,
                 mix(mix3(tid + L_VAL, cP, bin3(n_left[c])), bin3(n_right[c])))
        k = put(out, kinds, k, kt + L_LEFTMOST,
                 mix3(tid + L_LEFTMOST, cP, row[leftmost[c]] if leftmost[c] >= 0 else 0))
        k = put(out, kinds, k, kt + L_RIGHTMOST,
                 mix3(tid + L_RIGHTMOST, cP, row[rightmost[c]] if rightmost[c] >= 0 else 0))
        if context:
            sP = row[inner] if inner >= 0 else 0
            k = put(out, kinds, k, kt + L_SIB_IN, mix(mix3(tid + L_SIB_IN, cP, sP), hP))
            k = put(out, kinds, k, kt + L_SIB_OUT,
                     mix(mix3(tid + L_SIB_OUT, cP, row[outer] if outer >= 0 else 0), hP))
            k = put(out, kinds, k, kt + L_RANK,
                     mix(mix3(tid + L_RANK, hP, cP), 4 * (c > h) + (rank if rank < 3 else 3)))
            k = put(out, kinds, k, kt + L_HCTX,
                     mix(mix3(tid + L_HCTX, row[h - 1], hP), mix(row[h + 1], cP)))
            k = put(out, kinds, k, kt + L_SIB_IN_CW, mix3(tid + L_SIB_IN_CW, cW, sP))
        if flags & F_DEP_WORDS:
            k = put(out, kinds, k, kt + L_LDEP_W,
                     mix3(tid + L_LDEP_W, cP, s.word[leftmost[c]] if leftmost[c] >= 0 else 0))
            k = put(out, kinds, k, kt + L_RDEP_W,
                     mix3(tid + L_RDEP_W, cP, s.word[rightmost[c]] if rightmost[c] >= 0 else 0))
            k = put(out, kinds, k, kt + L_HWCP_DR,
                     mix(mix3(tid + L_HWCP_DR, hW, cP), 4 * (c > h) + (rank if rank < 3 else 3)))
    if flags & F_DEP_BAGS:
        cP = s.tag_row(0)[c]
        x = 0
        m = ctx[C_LAST * n1 + c]      # c's dependents, right to left
        while m >= 0 and x < MAX_BAG:
            k = put(out, kinds, k, L_DEP_BAG, mix3(L_DEP_BAG, cP, s.word[m])); x += 1
            m = ctx[C_PREV * n1 + m]
        x = 0
        m = ctx[C_LAST * n1 + h]      # h's other dependents, right to left
        while m >= 0 and x < MAX_BAG:
            if m != c:
                k = put(out, kinds, k, L_SIB_BAG,
                         mix(mix3(L_SIB_BAG, cP, s.word[m]), 2 * (c > h) + (m > h)))
                x += 1
            m = ctx[C_PREV * n1 + m]
    if use_morph:
        hP = 2 * s.tag_row(0)[h] + (c > h)
        cP = s.tag_row(0)[c]
        for m in range(s.morph_start[c], s.morph_start[c + 1]):
            if k + 3 > limit:
                break
            k = put(out, kinds, k, L_MORPH, mix(L_MORPH, s.morph[m]))
            k = put(out, kinds, k, L_MORPH_HP, mix3(L_MORPH_HP, s.morph[m], hP))
            k = put(out, kinds, k, L_MORPH_CP, mix3(L_MORPH_CP, s.morph[m], cP))
        for m in range(s.morph_start[h], s.morph_start[h + 1]):
            if k >= limit:
                break
            k = put(out, kinds, k, L_HMORPH_CP, mix3(L_HMORPH_CP, s.morph[m], 2 * cP + (c > h)))
    for m in range(k):
        out[m] = (out[m] & table.mask) * <uint64_t>table.n_labels
    return k


cdef int transition_feature_rows(Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                                 int prev_label, RowTable table, uint64_t* out) noexcept nogil:
    """Rows of the transition features into arc heads[c] -> c from the
    previous dependent's label ``prev_label`` (``n_labels`` = none)."""
    cdef int h = heads[c]
    cdef int prev = ctx[C_PREV * (s.n + 1) + c]
    cdef uint64_t key = mix3(T_PREV, prev_label, side_code(prev, c, h))
    cdef uint64_t* row = s.tag_row(0)
    out[0] = key
    out[1] = mix(mix(T_PREV_HP, key), row[h])
    out[2] = mix(mix(T_PREV_CP, key), row[c])
    cdef int m
    for m in range(N_TRANS):
        out[m] = (out[m] & table.mask) * <uint64_t>table.n_labels
    return N_TRANS

"""Hash ids of the labeler's feature templates (``arc_labeler``; McDonald,
Lerman & Pereira 2006's arc features plus the version 2 context features),
with their readable names and the attributes they read in ``templates.pyx``."""

# Hash ids: a template of tag column t hashes with 32 t + its value (those
# values < 32; the templates after L_SIB_BAG read no tag column but the
# first); ``arc_rows``' kinds use 64 t + value (every value < 64).
cdef enum LabelTemplate:
    L_BIAS = 1
    L_HW
    L_CW
    L_HP
    L_CP
    L_HWCP
    L_HPCW
    L_HWCW
    L_HPCP
    L_HPCP_DD
    L_CP_DIR
    L_CW_DIR
    L_DD
    L_CTX_L
    L_CTX_R
    L_GP
    L_VAL
    L_LEFTMOST
    L_RIGHTMOST
    L_CX
    L_MORPH
    # version 2 (CONTEXT)
    L_SIB_IN
    L_SIB_OUT
    L_RANK
    L_HCTX
    L_SIB_IN_CW
    # (DEP_WORDS)
    L_LDEP_W
    L_RDEP_W
    L_HWCP_DR
    # (DEP_BAGS)
    L_DEP_BAG
    L_SIB_BAG
    # (use_morph) the child's FEATS values with the head's tag and the direction,
    # with its own tag; the head's with the child's tag and the direction
    L_MORPH_HP
    L_MORPH_CP
    L_HMORPH_CP

cdef enum TransitionTemplate:
    T_PREV = 101
    T_PREV_HP
    T_PREV_CP

# The template-id space of every feature module (first-order arcs,
# McDonald et al. 2005 Table 1; adjacent siblings, McDonald & Pereira 2006;
# grandparents, Carreras 2007 / Koo & Collins 2010):
# a feature's hash starts from its template id, so ids must never clash.
# arc_emitters.pxd, second_order.pyx and grandparent.pyx cimport these;
# templates.pyx names each first-order template and the attributes it reads.

cdef enum Template:
    T_HWP = 1
    T_HW
    T_HP
    T_HXP
    T_HX
    T_CWP
    T_CW
    T_CP
    T_CXP
    T_CX
    T_WPWP
    T_PWP
    T_WWP
    T_WPP
    T_WPW
    T_WW
    T_PP
    T_XPXP
    T_PXP
    T_XXP
    T_XPP
    T_XPX
    T_XX
    T_BETWEEN
    T_CTX_HR_CL
    T_CTX_HL_CL
    T_CTX_HR_CR
    T_CTX_HL_CR
    T_TRI_CL
    T_TRI_HR
    T_TRI_HL
    T_TRI_CR
    T_MORPH_H
    T_MORPH_C
    T_MORPH_HC
    T_MORPH_HP_CM
    T_MORPH_HM_CP
    N_TEMPLATES

cdef enum:
    # Template ids of tag column t are offset by t times this much.
    TAGSET_STRIDE = 64
    # Tag columns a Sentence may have (UPOS, XPOS, Brown-cluster prefixes):
    # the first-order ids of column 3 would reach the sibling ids.
    MAX_TAGSETS = 3
    # Child unigram templates (T_CWP..T_CX) are the head ones (T_HWP..T_HX) + this.
    CHILD_OFFSET = 5

cdef enum ClusterTemplate:
    # Koo, Carreras & Collins (2008)'s hybrid pairs, when the last tag row
    # holds Brown-cluster prefixes: head cluster + child tag (of column 0),
    # head tag + child cluster, head cluster + child word, head word + child
    # cluster. Above the first-order ids, below TAGSET_STRIDE.
    T_HC_CP = 48
    T_HP_CC
    T_HC_CW
    T_HW_CC

cdef enum SiblingTemplate:
    # Sibling templates: SIB_BASE + tag column * SIB_STRIDE + S_TRIP..S_PW,
    # and S_WW (no tag), all above the first-order ids of both tag columns.
    SIB_BASE = 200
    SIB_STRIDE = 16
    S_TRIP = 1
    S_PP = 2
    S_WP = 3
    S_PW = 4
    # Stop factors (Koo & Collins 2010): head tag + outermost dependent's tag,
    # outermost dependent's tag, head word + outermost dependent's tag ...
    S_STOP_HP = 5
    S_STOP_P = 6
    S_STOP_WP = 7
    S_WW = 250
    # ... and head word + outermost dependent's word (no tag).
    S_STOP_WW = 251

cdef enum GrandTemplate:
    # Grandparent templates: GRAND_BASE + tag column * GRAND_STRIDE + G_TRIP..G_HPCW,
    # and G_WW (no tag), above the sibling ids.
    GRAND_BASE = 300
    GRAND_STRIDE = 16
    G_TRIP = 1
    G_GC = 2
    G_GWC = 3
    G_GCW = 4
    G_GHW = 5
    G_HPCW = 6
    G_WW = 350

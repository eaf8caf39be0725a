"""Readable names of the labeler's feature templates (``templates.pxd``
holds their hash ids), for ``ArcLabeler.explain``."""

# Readable names of the label templates (``explain``); a tag template of the
# second (third) tag column is reported with "/tag2" ("/tag3").
LABEL_TEMPLATE_NAMES = {
    L_BIAS: "bias", L_HW: "h-word", L_CW: "c-word", L_HP: "h-pos", L_CP: "c-pos",
    L_HWCP: "h-word+c-pos", L_HPCW: "h-pos+c-word", L_HWCW: "h-word+c-word",
    L_HPCP: "h-pos+c-pos", L_HPCP_DD: "h-pos+c-pos+dir+dist", L_CP_DIR: "c-pos+dir",
    L_CW_DIR: "c-word+dir", L_DD: "dir+dist", L_CTX_L: "c-pos-1+c-pos+h-pos",
    L_CTX_R: "c-pos+c-pos+1+h-pos", L_GP: "g-pos+h-pos+c-pos",
    L_VAL: "c-pos+n-left+n-right", L_LEFTMOST: "c-pos+leftmost-dep-pos",
    L_RIGHTMOST: "c-pos+rightmost-dep-pos", L_CX: "c-prefix", L_MORPH: "c-morph",
    L_SIB_IN: "c-pos+inner-sib-pos+h-pos", L_SIB_OUT: "c-pos+outer-sib-pos+h-pos",
    L_RANK: "h-pos+c-pos+dir+rank", L_HCTX: "h-pos-1+h-pos+h-pos+1+c-pos",
    L_SIB_IN_CW: "c-word+inner-sib-pos", L_LDEP_W: "c-pos+leftmost-dep-word",
    L_RDEP_W: "c-pos+rightmost-dep-word", L_HWCP_DR: "h-word+c-pos+dir+rank",
    L_DEP_BAG: "c-pos+dep-word", L_SIB_BAG: "c-pos+dir+sib-word",
}
TRANSITION_TEMPLATE_NAMES = {
    T_PREV: "prev-label+sides", T_PREV_HP: "prev-label+sides+h-pos",
    T_PREV_CP: "prev-label+sides+c-pos",
}

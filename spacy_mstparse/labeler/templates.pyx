"""The labeler's template table (``templates.pxd`` holds the hash ids; the
arc features of McDonald, Lerman & Pereira 2006 plus the version 2 context
features): the readable name of each template, for ``ArcLabeler``'s feature
rows, and the attributes it reads, for ``graph.explain``.

Attributes of the arc h -> c, besides the first-order ones
(``features.templates``: ``hw``, ``cw``, ``hp``, ``cp``, ``hp-1``, ``hp+1``,
``cp-1``, ``cp+1``, ``cx``, ``cm``): ``dd`` direction and binned distance,
``dir`` direction, ``gp`` the tag of h's head, ``nl`` / ``nr`` c's number
of left / right dependents (at most 2), ``lp`` / ``rp`` the tag and ``lw`` /
``rw`` the word of c's leftmost / rightmost dependent, ``ip`` / ``op`` the
tag of c's inner / outer sibling, ``rank`` c's rank among h's dependents on
its side (at most 3), ``dw`` the word of each dependent of c and ``sw`` the
side and word of each other dependent of h (one feature each, right to left).
"""

# name and attributes read of each label template; a tag template of the
# second (third) tag column is reported with "/tag2" ("/tag3"), which
# explanations name by what the row holds ("/xpos", "/supertag", "/cluster":
# features.templates.with_row_names).
LABEL_TEMPLATES = {
    L_BIAS: ("bias", ()),
    L_HW: ("h-word", ("hw",)),
    L_CW: ("c-word", ("cw",)),
    L_HP: ("h-pos", ("hp",)),
    L_CP: ("c-pos", ("cp",)),
    L_HWCP: ("h-word+c-pos", ("hw", "cp")),
    L_HPCW: ("h-pos+c-word", ("hp", "cw")),
    L_HWCW: ("h-word+c-word", ("hw", "cw")),
    L_HPCP: ("h-pos+c-pos", ("hp", "cp")),
    L_HPCP_DD: ("h-pos+c-pos+dir+dist", ("hp", "cp", "dd")),
    L_CP_DIR: ("c-pos+dir", ("cp", "dir")),
    L_CW_DIR: ("c-word+dir", ("cw", "dir")),
    L_DD: ("dir+dist", ("dd",)),
    L_CTX_L: ("c-pos-1+c-pos+h-pos", ("cp-1", "cp", "hp")),
    L_CTX_R: ("c-pos+c-pos+1+h-pos", ("cp", "cp+1", "hp")),
    L_GP: ("g-pos+h-pos+c-pos", ("gp", "hp", "cp")),
    L_VAL: ("c-pos+n-left+n-right", ("cp", "nl", "nr")),
    L_LEFTMOST: ("c-pos+leftmost-dep-pos", ("cp", "lp")),
    L_RIGHTMOST: ("c-pos+rightmost-dep-pos", ("cp", "rp")),
    L_CX: ("c-prefix", ("cx",)),
    L_MORPH: ("c-morph", ("cm",)),
    L_SIB_IN: ("c-pos+inner-sib-pos+h-pos", ("cp", "ip", "hp")),
    L_SIB_OUT: ("c-pos+outer-sib-pos+h-pos", ("cp", "op", "hp")),
    L_RANK: ("h-pos+c-pos+dir+rank", ("hp", "cp", "dir", "rank")),
    L_HCTX: ("h-pos-1+h-pos+h-pos+1+c-pos", ("hp-1", "hp", "hp+1", "cp")),
    L_SIB_IN_CW: ("c-word+inner-sib-pos", ("cw", "ip")),
    L_LDEP_W: ("c-pos+leftmost-dep-word", ("cp", "lw")),
    L_RDEP_W: ("c-pos+rightmost-dep-word", ("cp", "rw")),
    L_HWCP_DR: ("h-word+c-pos+dir+rank", ("hw", "cp", "dir", "rank")),
    L_DEP_BAG: ("c-pos+dep-word", ("cp", "dw")),
    L_SIB_BAG: ("c-pos+dir+sib-word", ("cp", "dir", "sw")),
    L_MORPH_HP: ("c-morph+h-pos+dir", ("cm", "hp", "dir")),
    L_MORPH_CP: ("c-morph+c-pos", ("cm", "cp")),
    L_HMORPH_CP: ("h-morph+c-pos+dir", ("hm", "cp", "dir")),
}
LABEL_TEMPLATE_NAMES = {tid: name for tid, (name, _) in LABEL_TEMPLATES.items()}
TRANSITION_TEMPLATE_NAMES = {
    T_PREV: "prev-label+sides", T_PREV_HP: "prev-label+sides+h-pos",
    T_PREV_CP: "prev-label+sides+c-pos",
}

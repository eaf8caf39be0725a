"""The first-order feature-template table: for every template id of
``templates.pxd`` (McDonald, Crammer & Pereira 2005, Table 1; morphology,
Nguyen et al. 2007; hybrid cluster pairs, Koo, Carreras & Collins 2008)
its readable name, the token attributes it reads and whether it is emitted
once per tag column. ``arc_emitters.pxd`` records the template key of every
hash it emits; ``feature_groups`` (the sparseptron's groups) and
``graph.explain`` read names and attributes from this table.

Tag rows are numbered in names (``hp+cp/tag2``: the second tag row) unless
the caller knows what they hold (``with_row_names``: ``hp+cp/xpos``,
``/supertag``, ``/cluster``). A template key is what a hash starts from: ``column * TAGSET_STRIDE + id``
for a template emitted once per tag column (UPOS, XPOS, the supertag or
cluster row), the bare id otherwise.

Attributes, of the head h or the child c of the arc:

* ``hw`` / ``cw``: the lower-cased word;
* ``hp`` / ``cp``: the tag in the key's tag column (column 0 for a template
  that is not per column); ``hp-1``, ``hp+1``, ``cp-1``, ``cp+1``: the tags
  of the neighbouring tokens (begin / end markers past the sentence);
* ``hx`` / ``cx``: the 5-character prefix (only emitted for a word longer
  than five characters);
* ``hX`` / ``cX``: the prefix of a long word, the word itself otherwise
  (only emitted when h or c is long);
* ``hC`` / ``cC``: the Brown-cluster prefix (the last tag row, which also
  gets every per-column template that reads no neighbouring or in-between
  tag: Koo et al.'s cluster features are bigrams);
* ``b``: a distinct tag strictly between h and c, one feature per tag, in
  the order of first occurrence from h towards c;
* ``hm`` / ``cm``: one morphological feature (FEATS value), one feature per
  value; ``hm`` with ``cm``: one per pair, the head's values outermost.
"""
from typing import NamedTuple, Tuple

# What a tag column's template keys are offset by (``templates.pxd``).
TAG_COLUMN_STRIDE = TAGSET_STRIDE


class FeatureTemplate(NamedTuple):
    id: int
    name: str
    reads: Tuple[str, ...]
    per_tag_column: bool

    @property
    def option(self) -> str:
        """The feature setting the template needs: "morph" (``use_morph``),
        "clusters" (``cluster_row``) or "" (always emitted)."""
        if "hm" in self.reads or "cm" in self.reads:
            return "morph"
        if "hC" in self.reads or "cC" in self.reads:
            return "clusters"
        return ""

    @property
    def context(self) -> bool:
        """Whether the template reads the tags around or between h and c
        (Table 1c): those are not emitted for the cluster row."""
        return any(a in ("b", "hp-1", "hp+1", "cp-1", "cp+1") for a in self.reads)


FIRST_ORDER_TEMPLATES = {t.id: t for t in (FeatureTemplate(*row) for row in (
    # Table 1a, head unigrams; the child's are CHILD_OFFSET above
    (T_HWP, "h-word+h-pos", ("hw", "hp"), True),
    (T_HW, "h-word", ("hw",), False),
    (T_HP, "h-pos", ("hp",), True),
    (T_HXP, "h-prefix+h-pos", ("hx", "hp"), True),
    (T_HX, "h-prefix", ("hx",), False),
    # Table 1a, child unigrams
    (T_CWP, "c-word+c-pos", ("cw", "cp"), True),
    (T_CW, "c-word", ("cw",), False),
    (T_CP, "c-pos", ("cp",), True),
    (T_CXP, "c-prefix+c-pos", ("cx", "cp"), True),
    (T_CX, "c-prefix", ("cx",), False),
    # Table 1b, bigrams
    (T_WPWP, "hw+hp+cw+cp", ("hw", "hp", "cw", "cp"), True),
    (T_PWP, "hp+cw+cp", ("hp", "cw", "cp"), True),
    (T_WWP, "hw+cw+cp", ("hw", "cw", "cp"), True),
    (T_WPP, "hw+hp+cp", ("hw", "hp", "cp"), True),
    (T_WPW, "hw+hp+cw", ("hw", "hp", "cw"), True),
    (T_WW, "hw+cw", ("hw", "cw"), False),
    (T_PP, "hp+cp", ("hp", "cp"), True),
    # the bigrams with words, on prefixes
    (T_XPXP, "hx+hp+cx+cp", ("hX", "hp", "cX", "cp"), True),
    (T_PXP, "hp+cx+cp", ("hp", "cX", "cp"), True),
    (T_XXP, "hx+cx+cp", ("hX", "cX", "cp"), True),
    (T_XPP, "hx+hp+cp", ("hX", "hp", "cp"), True),
    (T_XPX, "hx+hp+cx", ("hX", "hp", "cX"), True),
    (T_XX, "hx+cx", ("hX", "cX"), False),
    # Table 1c, in-between POS
    (T_BETWEEN, "hp+between-pos+cp", ("hp", "b", "cp"), True),
    # Table 1c, surrounding POS 4-grams
    (T_CTX_HR_CL, "hp+hp+1+cp-1+cp", ("hp", "hp+1", "cp-1", "cp"), True),
    (T_CTX_HL_CL, "hp-1+hp+cp-1+cp", ("hp-1", "hp", "cp-1", "cp"), True),
    (T_CTX_HR_CR, "hp+hp+1+cp+cp+1", ("hp", "hp+1", "cp", "cp+1"), True),
    (T_CTX_HL_CR, "hp-1+hp+cp+cp+1", ("hp-1", "hp", "cp", "cp+1"), True),
    # ... and their back-off trigrams
    (T_TRI_CL, "hp+cp-1+cp", ("hp", "cp-1", "cp"), True),
    (T_TRI_HR, "hp+hp+1+cp", ("hp", "hp+1", "cp"), True),
    (T_TRI_HL, "hp-1+hp+cp", ("hp-1", "hp", "cp"), True),
    (T_TRI_CR, "hp+cp+cp+1", ("hp", "cp", "cp+1"), True),
    # morphology (use_morph)
    (T_MORPH_H, "h-morph", ("hm",), False),
    (T_MORPH_C, "c-morph", ("cm",), False),
    (T_MORPH_HC, "h-morph+c-morph", ("hm", "cm"), False),
    (T_MORPH_HP_CM, "h-pos+c-morph", ("hp", "cm"), False),
    (T_MORPH_HM_CP, "h-morph+c-pos", ("hm", "cp"), False),
    # hybrid cluster pairs (cluster_row), the tags of column 0
    (T_HC_CP, "h-cluster+c-pos", ("hC", "cp"), False),
    (T_HP_CC, "h-pos+c-cluster", ("hp", "cC"), False),
    (T_HC_CW, "h-cluster+c-word", ("hC", "cw"), False),
    (T_HW_CC, "h-word+c-cluster", ("hw", "cC"), False),
))}


def split_key(int key):
    """``(template, column)`` of a first-order template key; ValueError if
    the table has no such key."""
    template = FIRST_ORDER_TEMPLATES.get(key % TAGSET_STRIDE)
    column = key // TAGSET_STRIDE
    if template is None or column >= MAX_TAGSETS or (column and not template.per_tag_column):
        raise ValueError(f"no first-order template key {key}")
    return template, column


def with_row_names(name: str, row_names=()) -> str:
    """A template name with its tag row said by what the row holds:
    ``"hp+cp/tag2"`` -> ``"hp+cp/xpos"`` for ``row_names`` ("upos", "xpos"),
    ``"/tag3"`` -> ``"/supertag"`` or ``"/cluster"``; unchanged without
    ``row_names`` (the ids, and so saved models, are the same either way)."""
    base, sep, number = name.rpartition("/tag")
    if not sep or not row_names or not number.isdigit() or int(number) > len(row_names):
        return name
    return f"{base}/{row_names[int(number) - 1]}"

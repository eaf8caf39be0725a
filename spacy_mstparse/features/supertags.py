"""Dependency supertags: what a word's attachment looks like, as a tag.

A supertag (after Ouchi, Duh & Matsumoto 2014: the label, the direction of
the head, and whether the word has left / right dependents) summarises the
local shape of a word's attachment as ``label/direction`` plus ``l`` / ``r``
flags: ``det/R`` (a determiner whose head is to its right, no dependents),
``obj/Ll`` (an object whose head is to its left, with a dependent of its
own on its left), ``root/ROOTlr``. A sequence tagger on the pipeline's
contextual vectors (``components.supertagger``) predicts them from the
words; the graph parser reads the predicted supertags as one more tag row
(``features.supertags``), which gives its sparse features what the tok2vec
saw of the context. spaCy-free.
"""
from typing import List, Optional, Sequence

ROOT_DIRECTION = "ROOT"
SEPARATOR = "/"


def supertags(heads: Sequence[Optional[int]], deps: Sequence[Optional[str]]) -> List[Optional[str]]:
    """The supertag of every word of a parsed sequence. ``heads[i]``: the
    index of word i's head (i itself for a root, spaCy's convention), or
    None when unknown; ``deps[i]`` its label. A word with an unknown head or
    label gets None; dependents with unknown heads are not counted."""
    n = len(heads)
    if len(deps) != n:
        raise ValueError(f"heads and deps differ in length ({n} and {len(deps)})")
    has_left = [False] * n
    has_right = [False] * n
    for i, h in enumerate(heads):
        if h is None or h == i:
            continue
        if not 0 <= h < n:
            raise ValueError(f"word {i}: head {h} outside the sequence of {n} words")
        if i < h:
            has_left[h] = True
        else:
            has_right[h] = True
    out: List[Optional[str]] = []
    for i, (h, dep) in enumerate(zip(heads, deps)):
        if h is None or not dep:
            out.append(None)
            continue
        direction = ROOT_DIRECTION if h == i else ("L" if h < i else "R")
        out.append(f"{dep}{SEPARATOR}{direction}{'l' if has_left[i] else ''}"
                   f"{'r' if has_right[i] else ''}")
    return out

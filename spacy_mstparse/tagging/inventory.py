"""The tagger's classes, read from the training words.

Three decisions are made per word, in this order: UPOS among every UPOS seen;
then XPOS and FEATS among the values seen with that UPOS in training (the
candidate lists, as a morphological guesser would give them: Hajič 2000,
Spoustová et al. 2009; ``guesser.py`` then tells which of them the
word's ending and stem make likely). A FEATS value is also split into its
attribute=value pairs, which share weights across the FEATS values that
contain them. Which columns are predicted is chosen from the training words
with the parser's rules (``features.selection``): XPOS when it is given and
says more than UPOS, FEATS when given on enough words.

Where the treebank's XPOS is a function of UPOS and FEATS (a positional tag
such as Czech's, which spells out the UPOS and FEATS: at least
``XPOS_FROM_FEATS`` of the training words have the XPOS most frequent with
their UPOS and FEATS), a word's XPOS is read from its predicted UPOS and
FEATS (``xpos_of_feats``) rather than chosen apart from them, so that the
three agree; pairs never seen in training keep the XPOS chosen.
"""
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy

from ..features.selection import EMPTY, TokenRow, choose_morph, choose_tag_columns

NONE = "_"
XPOS_FROM_FEATS = 0.98   # share of the training words whose XPOS their UPOS and FEATS give


@dataclass
class TagInventory:
    """Class names of each decision and the candidates per UPOS."""
    upos: List[str]
    xpos: List[str] = field(default_factory=list)     # empty: XPOS not predicted
    feats: List[str] = field(default_factory=list)    # empty: FEATS not predicted
    xpos_by_upos: List[List[int]] = field(default_factory=list)
    feats_by_upos: List[List[int]] = field(default_factory=list)
    xpos_of_feats: List[List[int]] = field(default_factory=list)   # [upos, feats, xpos] ids
    _xpos_table: Optional[Dict[Tuple[int, int], int]] = field(
        default=None, init=False, repr=False, compare=False)

    @property
    def pairs(self) -> List[str]:
        """The attribute=value pairs of the FEATS classes, sorted."""
        return sorted({p for f in self.feats if f != NONE for p in f.split("|")})

    def to_dict(self) -> dict:
        return {"upos": self.upos, "xpos": self.xpos, "feats": self.feats,
                "xpos_by_upos": self.xpos_by_upos, "feats_by_upos": self.feats_by_upos,
                "xpos_of_feats": self.xpos_of_feats}

    @classmethod
    def from_dict(cls, data: dict) -> "TagInventory":
        return cls(**{k: data[k] for k in ("upos", "xpos", "feats", "xpos_by_upos",
                                            "feats_by_upos", "xpos_of_feats")})

    def agreeing_xpos(self, upos: numpy.ndarray, xpos: numpy.ndarray,
                      feats: numpy.ndarray) -> numpy.ndarray:
        """The XPOS ids of a sentence's predicted (upos, xpos, feats) ids:
        the XPOS of its UPOS and FEATS where ``xpos_of_feats`` has the pair,
        else the one predicted."""
        if not self.xpos_of_feats:
            return xpos
        if self._xpos_table is None:
            self._xpos_table = {(u, f): x for u, f, x in self.xpos_of_feats}
        table = self._xpos_table
        return numpy.asarray([table.get((u, f), x) for u, x, f
                              in zip(upos.tolist(), xpos.tolist(), feats.tolist())],
                             dtype=numpy.int32)

    def arrays(self) -> Dict[str, numpy.ndarray]:
        """The candidate lists and the FEATS pairs as CSR int32 arrays (what
        ``TaggerModel`` reads)."""
        pair_ids = {p: i for i, p in enumerate(self.pairs)}
        feats_pairs = [[pair_ids[p] for p in f.split("|")] if f != NONE else []
                       for f in self.feats]
        out = {}
        for name, lists in (("xpos", self.xpos_by_upos), ("feats", self.feats_by_upos),
                            ("pairs", feats_pairs)):
            if name != "pairs":        # a row per UPOS even when the column is not predicted
                lists = lists or [[] for _ in self.upos]
            out[name + "_ptr"] = numpy.cumsum([0] + [len(x) for x in lists]).astype(numpy.int32)
            out[name + "_ids"] = numpy.asarray([i for x in lists for i in x], dtype=numpy.int32)
        return out

    def encode(self, upos: Sequence[str], xpos: Sequence[str], feats: Sequence[str]
               ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """Gold class ids of a sentence (-1 where unknown or not given)."""
        def ids(names: List[str], values: Sequence[str]) -> numpy.ndarray:
            index = {n: i for i, n in enumerate(names)}
            return numpy.asarray([index.get(v, -1) for v in values] if names
                                 else [-1] * len(values), dtype=numpy.int32)
        return (ids(self.upos, upos), ids(self.xpos, xpos),
                ids(self.feats, [normal_feats(f) for f in feats]))


def normal_feats(feats: str) -> str:
    """FEATS as the inventory keeps it: "_" for none."""
    return NONE if feats in EMPTY else feats


def build_inventory(rows: Iterable[TokenRow], predict_xpos="auto",
                    predict_feats="auto") -> Tuple[TagInventory, dict]:
    """The classes of the training words and what is predicted (the report
    says why). Words without a UPOS are not counted."""
    rows = [r for r in rows if r.upos not in EMPTY]
    if not rows:
        raise ValueError("no training word has a UPOS tag: the tagger has nothing to learn")
    columns, report = choose_tag_columns(rows)
    if predict_xpos == "auto":
        predict_xpos = columns == "both"
    if predict_feats == "auto":
        predict_feats, stats = choose_morph(rows)
        report.update(stats)
    upos = sorted({r.upos for r in rows})
    inventory = TagInventory(upos=upos)
    upos_index = {u: i for i, u in enumerate(upos)}
    for column, wanted, value in (("xpos", predict_xpos, lambda r: r.xpos),
                                  ("feats", predict_feats, lambda r: normal_feats(r.feats))):
        if not wanted:
            continue
        seen = Counter((r.upos, value(r)) for r in rows if value(r) not in ("", None))
        names = sorted({v for _, v in seen})
        index = {n: i for i, n in enumerate(names)}
        by_upos = [sorted(index[v] for (u, v) in seen if u == name) for name in upos]
        setattr(inventory, column, names)
        setattr(inventory, column + "_by_upos", by_upos)
    if inventory.xpos and inventory.feats:
        table, share = xpos_function(rows, inventory)
        report["xpos_of_feats_share"] = round(share, 4)
        if share >= XPOS_FROM_FEATS:
            inventory.xpos_of_feats = table
    report.update({"predicts": ["UPOS"] + (["XPOS"] if inventory.xpos else [])
                   + (["FEATS"] if inventory.feats else []),
                   "upos_classes": len(upos), "xpos_classes": len(inventory.xpos),
                   "feats_classes": len(inventory.feats)})
    return inventory, report


def xpos_function(rows: Sequence[TokenRow], inventory: TagInventory
                  ) -> Tuple[List[List[int]], float]:
    """[upos, feats, xpos] ids of the XPOS most frequent with each UPOS and
    FEATS of the training words (the first seen of a tie), and the share of
    the words (with all three) whose XPOS it is."""
    upos, xpos, feats = inventory.encode([r.upos for r in rows], [r.xpos for r in rows],
                                         [r.feats for r in rows])
    counts: Dict[Tuple[int, int], Counter] = {}
    for r, u, x, f in zip(rows, upos.tolist(), xpos.tolist(), feats.tolist()):
        if u >= 0 and x >= 0 and f >= 0 and r.xpos not in EMPTY:
            counts.setdefault((u, f), Counter())[x] += 1
    words = sum(sum(c.values()) for c in counts.values())
    table = [[u, f, c.most_common(1)[0][0]] for (u, f), c in counts.items()]
    agree = sum(c.most_common(1)[0][1] for c in counts.values())
    return table, agree / words if words else 0.0

"""Explanations of one attachment: which features made the parser choose a
head and a label, with their weights.

For word c of an encoded sentence the parser's best tree gives the head h;
the best competing head h' is c's head in the best tree without the arc
h -> c (constrained decoding, ``constraints.Constraints``). For both arcs
the explanation lists every feature that fired (McDonald et al. 2005's
templates, named as in ``features.feature_groups``, with the attribute
values they read and their direction/distance conjunction) and its weight;
the weights of an arc sum to the arc score the decoder used. The same for the
label (McDonald et al. 2006's second-stage labeler): each feature's weight
for the chosen label and for the best other label, whose sums are the two
label scores. spaCy-free: the caller gives the words' readable attributes
as a ``WordView``.
"""
from typing import Dict, List, NamedTuple, Optional, Sequence

import numpy

from ..features.feature_groups import group_name, tree_features_grouped
from .constraints import Constraints
from .probabilities import analyse

# The attributes each first-order template reads (template id = group id % 64):
# hw/cw word, hp/cp tag, hx/cx prefix, hX/cX prefix or word, b a tag between,
# hm/cm a morphological feature.
ARC_TEMPLATE_ATTRS = {
    1: ("hw", "hp"), 2: ("hw",), 3: ("hp",), 4: ("hx", "hp"), 5: ("hx",),
    6: ("cw", "cp"), 7: ("cw",), 8: ("cp",), 9: ("cx", "cp"), 10: ("cx",),
    11: ("hw", "hp", "cw", "cp"), 12: ("hp", "cw", "cp"), 13: ("hw", "cw", "cp"),
    14: ("hw", "hp", "cp"), 15: ("hw", "hp", "cw"), 16: ("hw", "cw"), 17: ("hp", "cp"),
    18: ("hX", "hp", "cX", "cp"), 19: ("hp", "cX", "cp"), 20: ("hX", "cX", "cp"),
    21: ("hX", "hp", "cp"), 22: ("hX", "hp", "cX"), 23: ("hX", "cX"), 24: ("hp", "b", "cp"),
    25: ("hp", "hp+1", "cp-1", "cp"), 26: ("hp-1", "hp", "cp-1", "cp"),
    27: ("hp", "hp+1", "cp", "cp+1"), 28: ("hp-1", "hp", "cp", "cp+1"),
    29: ("hp", "cp-1", "cp"), 30: ("hp", "hp+1", "cp"), 31: ("hp-1", "hp", "cp"),
    32: ("hp", "cp", "cp+1"), 33: ("hm",), 34: ("cm",), 35: ("hm", "cm"),
    # the hybrid cluster pairs (hC/cC: the cluster row, the view's last tags)
    48: ("hC", "cp"), 49: ("hp", "cC"), 50: ("hC", "cw"), 51: ("hw", "cC"),
}
LABEL_TEMPLATE_ATTRS = {
    "bias": (), "h-word": ("hw",), "c-word": ("cw",), "h-pos": ("hp",), "c-pos": ("cp",),
    "h-word+c-pos": ("hw", "cp"), "h-pos+c-word": ("hp", "cw"), "h-word+c-word": ("hw", "cw"),
    "h-pos+c-pos": ("hp", "cp"), "h-pos+c-pos+dir+dist": ("hp", "cp", "dd"),
    "c-pos+dir": ("cp", "dir"), "c-word+dir": ("cw", "dir"), "dir+dist": ("dd",),
    "c-pos-1+c-pos+h-pos": ("cp-1", "cp", "hp"), "c-pos+c-pos+1+h-pos": ("cp", "cp+1", "hp"),
    "g-pos+h-pos+c-pos": ("gp", "hp", "cp"), "c-pos+n-left+n-right": ("cp", "nl", "nr"),
    "c-pos+leftmost-dep-pos": ("cp", "lp"), "c-pos+rightmost-dep-pos": ("cp", "rp"),
    "c-prefix": ("cx",), "c-morph": ("cm",),
    "c-pos+inner-sib-pos+h-pos": ("cp", "ip", "hp"), "c-pos+outer-sib-pos+h-pos": ("cp", "op", "hp"),
    "h-pos+c-pos+dir+rank": ("hp", "cp", "dir", "rank"),
    "h-pos-1+h-pos+h-pos+1+c-pos": ("hp-1", "hp", "hp+1", "cp"), "c-word+inner-sib-pos": ("cw", "ip"),
    "c-pos+leftmost-dep-word": ("cp", "lw"), "c-pos+rightmost-dep-word": ("cp", "rw"),
    "h-word+c-pos+dir+rank": ("hw", "cp", "dir", "rank"),
}
# Label templates that fire once per dependent of c / sibling of c (the bags).
BAG_TEMPLATES = ("c-pos+dep-word", "c-pos+dir+sib-word")
PREFIX_LENGTH = 5


class WordView(NamedTuple):
    """Readable attributes of positions 0..n (0 = the root): the lower-cased
    words, one list of tags per tag column (the cluster row's path prefixes
    last), the morphological features."""
    words: Sequence[str]
    tags: Sequence[Sequence[str]]
    morphs: Sequence[Sequence[str]]


def direction_distance(h: int, c: int) -> str:
    d = abs(h - c)
    dist = str(d) if d <= 5 else ("6-10" if d <= 10 else ">10")
    return f"dir={'R' if c > h else 'L'} dist={dist}"


class _Reader:
    """Attribute values of an arc h -> c for the template tables above."""

    def __init__(self, view: WordView, h: int, c: int, t: int = 0,
                 heads: Optional[Sequence[int]] = None):
        self.view, self.h, self.c, self.t, self.heads = view, h, c, t, heads
        self.n = len(view.words) - 1

    def tag(self, i: int) -> str:
        if i < 0:
            return "<bos>"
        if i > self.n:
            return "<eos>"
        return "<root>" if i == 0 else self.view.tags[self.t][i]

    def word(self, i: int) -> str:
        return "<root>" if i == 0 else self.view.words[i]

    def prefix(self, i: int, or_word: bool) -> str:
        w = self.word(i)
        return w[:PREFIX_LENGTH] if len(w) > PREFIX_LENGTH or not or_word else w

    def between(self) -> List[str]:
        seen: List[str] = []
        for p in range(min(self.h, self.c) + 1, max(self.h, self.c)):
            if self.tag(p) not in seen:
                seen.append(self.tag(p))
        return seen

    def dependents(self, side: str) -> List[int]:
        deps = [d for d in range(1, self.n + 1) if self.heads[d] == self.c]
        return [d for d in deps if (d < self.c) == (side == "L")]

    def value(self, attr: str) -> str:
        h, c = self.h, self.c
        simple = {
            "hw": lambda: self.word(h), "cw": lambda: self.word(c),
            "hp": lambda: self.tag(h), "cp": lambda: self.tag(c),
            "hC": lambda: self.view.tags[-1][h], "cC": lambda: self.view.tags[-1][c],
            "hx": lambda: self.prefix(h, False), "cx": lambda: self.prefix(c, False),
            "hX": lambda: self.prefix(h, True), "cX": lambda: self.prefix(c, True),
            "hp+1": lambda: self.tag(h + 1), "hp-1": lambda: self.tag(h - 1),
            "cp+1": lambda: self.tag(c + 1), "cp-1": lambda: self.tag(c - 1),
            "dd": lambda: direction_distance(h, c), "dir": lambda: "R" if c > h else "L",
            "gp": lambda: self.tag(self.heads[h]) if h > 0 else "<bos>",
            "nl": lambda: str(min(len(self.dependents("L")), 2)),
            "nr": lambda: str(min(len(self.dependents("R")), 2)),
            "lp": lambda: self.tag(min(self.dependents("L"))) if self.dependents("L") else "-",
            "rp": lambda: self.tag(max(self.dependents("R"))) if self.dependents("R") else "-",
            "ip": lambda: self.tag(self.siblings()[0]) if self.siblings()[0] is not None else "-",
            "op": lambda: self.tag(self.siblings()[1]) if self.siblings()[1] is not None else "-",
            "rank": lambda: str(min(self.siblings()[2], 3)),
            "lw": lambda: self.word(min(self.dependents("L"))) if self.dependents("L") else "-",
            "rw": lambda: self.word(max(self.dependents("R"))) if self.dependents("R") else "-",
        }
        return simple[attr]()

    def siblings(self):
        """(inner sibling, outer sibling, rank) of c among h's dependents on
        its side, nearest the head first (None: no such sibling)."""
        h, c = self.h, self.c
        side = sorted((d for d in range(1, self.n + 1) if self.heads[d] == h and (d > h) == (c > h)),
                      key=lambda d: abs(d - h))
        i = side.index(c)
        return (side[i - 1] if i > 0 else None, side[i + 1] if i + 1 < len(side) else None, i + 1)


def _arc_rows(model, sentence, view: WordView, h: int, c: int) -> List[Dict[str, object]]:
    """Every feature of h -> c: template, values, conjunction, bucket, weight."""
    f = model.first_order
    heads = numpy.zeros(sentence.n + 1, dtype="int32")
    heads[0] = -1
    heads[c] = h
    ids, groups = tree_features_grouped(f, sentence, heads)
    start = sum(len(f.arc_features(sentence, 0, d)) for d in range(1, c))
    own = f.arc_features(sentence, h, c)
    ids, groups = ids[start:start + len(own)], groups[start:start + len(own)]
    if not numpy.array_equal(ids, own):
        raise RuntimeError("explain: the grouped features are out of step with arc_features")
    n_conj = 3 if f.direction_backoff else 2
    dd = direction_distance(h, c)
    conj = ["", dd, dd.split(" ")[0]][:n_conj]
    rows = []
    occurrences: Dict[int, int] = {}
    for j in range(0, len(ids), n_conj):
        gid = int(groups[j])
        template = gid % 64
        k = occurrences.get(gid, 0)
        occurrences[gid] = k + 1
        values = _arc_values(_Reader(view, h, c, gid // 64), template, k)
        for m in range(n_conj):
            bucket = int(ids[j + m])
            rows.append({"template": group_name(gid), "values": values, "conjunction": conj[m],
                         "bucket": bucket, "weight": float(model.arc_weights[bucket])})
    return rows


def _arc_values(reader: _Reader, template: int, k: int) -> str:
    """The attribute values of the k-th emission of a template for this arc."""
    view, h, c = reader.view, reader.h, reader.c
    if template == 24:
        return f"{reader.tag(h)} {reader.between()[k]} {reader.tag(c)}"
    if template == 33:
        return view.morphs[h][k]
    if template == 34:
        return view.morphs[c][k]
    if template == 35:
        n_c = len(view.morphs[c])
        return f"{view.morphs[h][k // n_c]} {view.morphs[c][k % n_c]}"
    return " ".join(reader.value(a) for a in ARC_TEMPLATE_ATTRS[template])


def _label_rows(model, sentence, view: WordView, heads, c: int, label: int,
                other: Optional[int]) -> List[Dict[str, object]]:
    offsets, names = model.labeler.arc_feature_rows(sentence, heads, c)
    rows = []
    counts: Dict[str, int] = {}
    for offset, name in zip(offsets, names):
        base = name.split("/")[0]
        t = int(name.rsplit("/tag", 1)[1]) - 1 if "/tag" in name else 0
        k = counts.get(name, 0)
        counts[name] = k + 1
        reader = _Reader(view, int(heads[c]), c, t, heads)
        if base == "c-morph":
            values = view.morphs[c][k]
        elif base in BAG_TEMPLATES:   # one feature per dependent / sibling, right to left
            h = int(heads[c])
            if base == "c-pos+dep-word":
                words = [d for d in range(len(heads) - 1, 0, -1) if heads[d] == c]
                values = f"{reader.tag(c)} {reader.word(words[k])}"
            else:
                words = [d for d in range(len(heads) - 1, 0, -1) if heads[d] == h and d != c]
                side = "R" if words[k] > h else "L"
                values = f"{reader.tag(c)} {reader.value('dir')} {side}:{reader.word(words[k])}"
        else:
            values = " ".join(reader.value(a) for a in LABEL_TEMPLATE_ATTRS[base])
        rows.append({"template": name, "values": values, "bucket": int(offset),
                     "weight": float(model.label_weights[int(offset) + label]),
                     "competitor_weight": (float(model.label_weights[int(offset) + other])
                                           if other is not None else None)})
    return rows + _transition_rows(model, sentence, heads, c, label, other)


def _transition_rows(model, sentence, heads, c: int, label: int,
                     other: Optional[int]) -> List[Dict[str, object]]:
    """The label chain's transitions that c's label takes part in (labeler
    version 2), the other labels fixed at the predicted ones: from the
    previous dependent of the same head into c, and from c into the next."""
    labeler, w = model.labeler, model.label_weights
    labels = model.label(sentence, heads)
    ctx = labeler.context(sentence, heads)
    prev = int(ctx["prev"][c])
    rows = []
    offsets, names = labeler.transition_feature_rows(sentence, heads, c,
                                                     int(labels[prev]) if prev >= 0 else -1)
    for offset, name in zip(offsets, names):
        prev_name = model.labels[labels[prev]] if prev >= 0 else "-"
        rows.append({"template": name, "values": f"prev={prev_name}", "bucket": int(offset),
                     "weight": float(w[int(offset) + label]),
                     "competitor_weight": float(w[int(offset) + other]) if other is not None else None})
    following = [d for d in range(1, len(heads)) if int(ctx["prev"][d]) == c]
    if following:
        nxt, y = following[0], int(labels[following[0]])
        mine = labeler.transition_feature_rows(sentence, heads, nxt, label)
        theirs = (labeler.transition_feature_rows(sentence, heads, nxt, other)[0]
                  if other is not None else None)
        for j, (offset, name) in enumerate(zip(*mine)):
            rows.append({"template": "next:" + name, "values": f"next={model.labels[y]}",
                         "bucket": int(offset), "weight": float(w[int(offset) + y]),
                         "competitor_weight": (float(w[int(theirs[j]) + y])
                                               if theirs is not None else None)})
    return rows


def explain_arc(model, sentence, view: WordView, c: int,
                constraints: Optional[Constraints] = None) -> Dict[str, object]:
    """Why word c got its head and label in the model's best tree (under
    ``constraints``): see the module docstring. Returns a JSON-able dict."""
    if not 1 <= c <= sentence.n:
        raise ValueError(f"no word {c} in a sentence of {sentence.n} words")
    parse = analyse(model, sentence, constraints=constraints)
    best = parse.trees[0]
    h = int(best.heads[c])
    arc = model.scores(sentence).arc
    out: Dict[str, object] = {
        "word": c, "tree_score": best.score,
        "head": {"position": h, "arc_score": float(arc[h, c]),
                 "features": _arc_rows(model, sentence, view, h, c)},
        "competitor": None,
    }
    rival = _rival_tree(model, sentence, c, h, constraints)
    if rival is not None:
        h2 = int(rival.heads[c])
        out["competitor"] = {"position": h2, "arc_score": float(arc[h2, c]),
                             "tree_score": rival.score,
                             "features": _arc_rows(model, sentence, view, h2, c)}
        out["arc_score_difference"] = float(arc[h, c]) - float(arc[h2, c])
        out["tree_score_difference"] = best.score - rival.score
    if model.labeler is not None:
        scores = model.label_scores(sentence, best.heads)[c]
        label = int(best.labels[c])
        allowed = [l for l in range(len(model.labels))   # -inf: outside the restriction
                   if l != label and (h == 0 or l != model.root_label_id)
                   and numpy.isfinite(scores[l])]
        other = max(allowed, key=lambda l: scores[l]) if allowed and not (
            h == 0 and model.root_label_id >= 0) else None
        out["label"] = {
            "label": model.labels[label], "score": float(scores[label]),
            "competitor": model.labels[other] if other is not None else None,
            "competitor_score": float(scores[other]) if other is not None else None,
            "forced_root_label": bool(h == 0 and model.root_label_id >= 0),
            "features": _label_rows(model, sentence, view, best.heads, c, label, other),
        }
    return out


def _rival_tree(model, sentence, c: int, h: int, constraints: Optional[Constraints]):
    """The best tree in which c's head is not h (None if there is none)."""
    base = constraints or Constraints(sentence.n)
    if c in base.fixed:
        return None
    rival = Constraints(sentence.n, base.fixed, base.forbidden | {(h, c)}, base.names)
    try:
        return analyse(model, sentence, constraints=rival).trees[0]
    except ValueError:
        return None


def format_explanation(expl: Dict[str, object], names: Sequence[str], top: int = 15) -> str:
    """Readable text of ``explain_arc``'s result; ``names[i]`` names position i."""
    c = expl["word"]
    lines = []

    def features(rows, key="weight"):
        rows = sorted(rows, key=lambda r: -abs(r[key] or 0.0))
        shown = rows if top <= 0 else rows[:top]
        for r in shown:
            conj = f", {r['conjunction']}" if r.get("conjunction") else ""
            extra = (f"  (vs {r['competitor_weight']:+.3f})"
                     if r.get("competitor_weight") is not None else "")
            lines.append(f"    {r['weight']:+9.3f}  {r['template']} = {r['values']}{conj}{extra}")
        if len(shown) < len(rows):
            rest = sum(r[key] or 0.0 for r in rows[len(shown):])
            lines.append(f"    {rest:+9.3f}  ({len(rows) - len(shown)} more features)")

    head = expl["head"]
    lines.append(f"{names[c]}: head {names[head['position']]} "
                 f"(arc score {head['arc_score']:.3f}, sum of {len(head['features'])} "
                 f"feature weights)")
    features(head["features"])
    comp = expl["competitor"]
    if comp is not None:
        lines.append(f"best competing head {names[comp['position']]} (arc score "
                     f"{comp['arc_score']:.3f}); arc score difference "
                     f"{expl['arc_score_difference']:+.3f}, tree score difference "
                     f"{expl['tree_score_difference']:+.3f}")
        features(comp["features"])
    else:
        lines.append("no competing head (the head is fixed or the only possible one)")
    label = expl.get("label")
    if label:
        if label["forced_root_label"]:
            lines.append(f"label {label['label']} (the root label, fixed for the root word)")
        elif label["competitor"] is None:
            lines.append(f"label {label['label']} (score {label['score']:.3f}), the only label "
                         "seen in training for these tags and direction")
            features(label["features"])
        else:
            lines.append(f"label {label['label']} (score {label['score']:.3f}) vs "
                         f"{label['competitor']} (score {label['competitor_score']:.3f}); "
                         f"difference {label['score'] - label['competitor_score']:+.3f}")
            features(label["features"])
    return "\n".join(lines)

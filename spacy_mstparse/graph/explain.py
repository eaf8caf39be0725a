"""Explanations of one attachment: which features made the parser choose a
head and a label, with their weights.

For word c of an encoded sentence the parser's best tree gives the head h;
the best competing head h' is c's head in the best tree without the arc
h -> c (constrained decoding, ``constraints.Constraints``). For both arcs
the explanation lists every feature that fired (McDonald et al. 2005's
templates, named as in the template table ``features.templates``, with the
values of the attributes its row says it reads and its direction/distance
conjunction) and its weight; the weights of an arc sum to the arc score the
decoder used. The same for the label (McDonald et al. 2006's second-stage
labeler, whose template table is ``labeler.templates``): each feature's
weight for the chosen label and for the best other label, whose sums are the
two label scores. spaCy-free: the caller gives the words' readable
attributes as a ``WordView``, and gets an ``Explanation`` in token indices
(whose text numbers words by token index, or by CoNLL ID).

Tag rows are named by what they hold (``hp+cp/xpos``, ``hp+cp/supertag``,
``hp+cp/cluster``) when the view names them, else by number (``/tag2``).
"""
from dataclasses import asdict, dataclass
from typing import Dict, List, NamedTuple, Optional, Sequence

import numpy

from ..features.feature_groups import group_name, with_row_names
from ..features.templates import split_key
from ..labeler.templates import LABEL_TEMPLATES
from .constraints import Constraints
from .analysis import analyse

# The attributes each label template reads, by name.
LABEL_TEMPLATE_READS = {name: reads for name, reads in LABEL_TEMPLATES.values()}
PREFIX_LENGTH = 5


class WordView(NamedTuple):
    """Readable attributes of positions 0..n (0 = the root): the lower-cased
    words, one list of tags per tag column (the cluster row's path prefixes
    last), the morphological features, and what each tag row holds (e.g.
    ``("upos", "xpos", "supertag", "cluster")``; empty: rows named by number)."""
    words: Sequence[str]
    tags: Sequence[Sequence[str]]
    morphs: Sequence[Sequence[str]]
    row_names: Sequence[str] = ()


def direction_distance(h: int, c: int) -> str:
    d = abs(h - c)
    dist = str(d) if d <= 5 else ("6-10" if d <= 10 else ">10")
    return f"dir={'R' if c > h else 'L'} dist={dist}"


class _Reader:
    """Attribute values of an arc h -> c, named as in the template tables
    (``features.templates``, ``labeler.templates``)."""

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

    def values(self, attr: str) -> List[str]:
        """The values of an attribute, in the order the extractors emit one
        feature each: one value, or several for a multi-valued attribute."""
        h, c = self.h, self.c
        if attr == "b":
            return self.between()
        if attr in ("hm", "cm"):
            return list(self.view.morphs[h if attr == "hm" else c])
        if attr == "dw":   # dependents of c, right to left
            return [self.word(d) for d in range(self.n, 0, -1) if self.heads[d] == c]
        if attr == "sw":   # the other dependents of h, right to left, with their side
            return [f"{'R' if d > h else 'L'}:{self.word(d)}" for d in range(self.n, 0, -1)
                    if self.heads[d] == h and d != c]
        return [self.value(attr)]

    def template_values(self, reads: Sequence[str], k: int) -> str:
        """The attribute values of the k-th feature of a template reading
        ``reads``: the k-th of the combinations of their values, the last
        attribute varying fastest (as the extractors' loops nest)."""
        chosen = []
        for attr in reversed(reads):
            values = self.values(attr)
            k, j = divmod(k, len(values))
            chosen.append(values[j])
        return " ".join(reversed(chosen))

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
    ids, keys = f.arc_features(sentence, h, c, return_keys=True)
    n_conj = f.n_conjunctions
    dd = direction_distance(h, c)
    conj = ["", dd, dd.split(" ")[0]][:n_conj]
    rows = []
    occurrences: Dict[int, int] = {}
    for j in range(0, len(ids), n_conj):
        key = int(keys[j])
        template, column = split_key(key)
        k = occurrences.get(key, 0)
        occurrences[key] = k + 1
        values = _Reader(view, h, c, column).template_values(template.reads, k)
        for m in range(n_conj):
            bucket = int(ids[j + m])
            rows.append({"template": group_name(key, view.row_names), "values": values,
                         "conjunction": conj[m],
                         "bucket": bucket, "weight": float(model.arc_weights[bucket])})
    return rows


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
        rows.append({"template": with_row_names(name, view.row_names),
                     "values": reader.template_values(LABEL_TEMPLATE_READS[base], k),
                     "bucket": int(offset),
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


@dataclass
class HeadChoice:
    """A head of the word: its token index (None = the root), the arc score,
    the score of the best tree with it, and every feature of the arc
    (template, values, conjunction, bucket, weight; the weights sum to the
    arc score)."""
    token: Optional[int]
    arc_score: float
    tree_score: float
    features: List[Dict[str, object]]


@dataclass
class LabelChoice:
    """The word's label and the best other label, with their scores and each
    feature's weight for both (``weight`` / ``competitor_weight``)."""
    label: str
    score: float
    competitor: Optional[str]
    competitor_score: Optional[float]
    forced_root_label: bool
    features: List[Dict[str, object]]


@dataclass
class Explanation:
    """Why token ``token`` got its head and label: the chosen head, the best
    competing head (the head in the best tree without the chosen arc; None
    if the head is fixed or the only one possible), and the label. Token
    indices as spaCy's (``token.i``); ``words`` maps the indices of the
    words of its sentence to their text, ``sentence_start`` is the index of
    the sentence's first word (CoNLL ID 1). ``str()`` gives the text,
    ``format(conll_ids=True)`` numbers the words by CoNLL ID."""
    token: int
    head: HeadChoice
    competitor: Optional[HeadChoice]
    label: Optional[LabelChoice]
    words: Dict[int, str]
    sentence_start: int

    @property
    def arc_score_difference(self) -> Optional[float]:
        comp = self.competitor
        return None if comp is None else self.head.arc_score - comp.arc_score

    @property
    def tree_score_difference(self) -> Optional[float]:
        comp = self.competitor
        return None if comp is None else self.head.tree_score - comp.tree_score

    def to_dict(self) -> Dict[str, object]:
        return asdict(self)

    def name(self, token: Optional[int], conll_ids: bool = False) -> str:
        """``text/number`` of a token (``ROOT`` for the root)."""
        if token is None:
            return "ROOT"
        return f"{self.words[token]}/{token - self.sentence_start + 1 if conll_ids else token}"

    def format(self, top: int = 15, conll_ids: bool = False) -> str:
        """The explanation as text, ``top`` features per arc and label (0 =
        all), words numbered by token index or by CoNLL ID."""
        lines: List[str] = []

        def features(rows, key="weight"):
            rows = sorted(rows, key=lambda r: -abs(r[key] or 0.0))
            shown = rows if top <= 0 else rows[:top]
            for r in shown:
                conj = f", {r['conjunction']}" if r.get("conjunction") else ""
                extra = (f"  (vs {r['competitor_weight']:+.3f})"
                         if r.get("competitor_weight") is not None else "")
                lines.append(f"    {r['weight']:+9.3f}  {r['template']} = {r['values']}"
                             f"{conj}{extra}")
            if len(shown) < len(rows):
                rest = sum(r[key] or 0.0 for r in rows[len(shown):])
                lines.append(f"    {rest:+9.3f}  ({len(rows) - len(shown)} more features)")

        head, comp, label = self.head, self.competitor, self.label
        lines.append(f"{self.name(self.token, conll_ids)}: head {self.name(head.token, conll_ids)} "
                     f"(arc score {head.arc_score:.3f}, sum of {len(head.features)} "
                     f"feature weights)")
        features(head.features)
        if comp is not None:
            lines.append(f"best competing head {self.name(comp.token, conll_ids)} (arc score "
                         f"{comp.arc_score:.3f}); arc score difference "
                         f"{self.arc_score_difference:+.3f}, tree score difference "
                         f"{self.tree_score_difference:+.3f}")
            features(comp.features)
        else:
            lines.append("no competing head (the head is fixed or the only possible one)")
        if label is not None:
            if label.forced_root_label:
                lines.append(f"label {label.label} (the root label, fixed for the root word)")
            elif label.competitor is None:
                lines.append(f"label {label.label} (score {label.score:.3f}), the only label "
                             "seen in training for these tags and direction")
                features(label.features)
            else:
                lines.append(f"label {label.label} (score {label.score:.3f}) vs "
                             f"{label.competitor} (score {label.competitor_score:.3f}); "
                             f"difference {label.score - label.competitor_score:+.3f}")
                features(label.features)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def explain_arc(model, sentence, view: WordView, c: int,
                constraints: Optional[Constraints] = None, first_token: int = 0,
                sentence_start: Optional[int] = None, texts: Optional[Sequence[str]] = None,
                label_name=str) -> Explanation:
    """Why word c (position 1..n) got its head and label in the model's best
    tree (under ``constraints``): see the module docstring. Position p is
    token ``first_token + p - 1``; ``sentence_start`` (default: position
    1's token) the first token of the sentence the positions are part of;
    ``texts`` the words' texts (default: the view's); ``label_name`` gives
    a model label as the Doc writes it."""
    if not 1 <= c <= sentence.n:
        raise ValueError(f"no word {c} in a sentence of {sentence.n} words")
    parse = analyse(model, sentence, constraints=constraints)
    best = parse.trees[0]
    h = int(best.heads[c])
    arc = model.scores(sentence).arc

    def token(position: int) -> Optional[int]:
        return None if position == 0 else first_token + position - 1

    def head_choice(p: int, tree_score: float) -> HeadChoice:
        return HeadChoice(token(p), float(arc[p, c]), float(tree_score),
                          _arc_rows(model, sentence, view, p, c))

    rival = _rival_tree(model, sentence, c, h, constraints)
    label = None
    if model.labeler is not None:
        scores = model.label_scores(sentence, best.heads)[c]
        y = int(best.labels[c])
        forced = bool(h == 0 and model.root_label_id >= 0)
        allowed = [l for l in range(len(model.labels))   # -inf: outside the restriction
                   if l != y and (h == 0 or l != model.root_label_id)
                   and numpy.isfinite(scores[l])]
        other = max(allowed, key=lambda l: scores[l]) if allowed and not forced else None
        label = LabelChoice(
            label_name(model.labels[y]), float(scores[y]),
            label_name(model.labels[other]) if other is not None else None,
            float(scores[other]) if other is not None else None, forced,
            _label_rows(model, sentence, view, best.heads, c, y, other))
    texts = list(texts) if texts is not None else list(view.words[1:])
    return Explanation(
        token=token(c), head=head_choice(h, best.score),
        competitor=(head_choice(int(rival.heads[c]), rival.score) if rival is not None else None),
        label=label, words={first_token + k: text for k, text in enumerate(texts)},
        sentence_start=first_token if sentence_start is None else sentence_start)


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

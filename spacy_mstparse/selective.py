"""Selective parsing: the arcs of a parse that a calibrated ``mst_parser`` is
sure of. With calibrated probabilities (``token._.head_prob``, the head's
marginal; ``token._.dep_prob``, the label's given the tree), keeping the arcs
whose probability reaches a threshold p keeps arcs that are right about a
share p of the time or more: precision traded for coverage, as a user who
needs few errors (e.g. to extract relations) wants. ``joint`` uses
head_prob x dep_prob, the probability that head and label are both right.

``confident_arcs`` returns them; ``mark_confident`` writes
``token._.confident`` (True / False), which CoNLL-U output writes into MISC
(``Confident=Yes``) next to ``HeadProb`` / ``DepProb``.
"""
from typing import List, NamedTuple, Optional

from spacy.tokens import Doc, Token

if not Token.has_extension("confident"):
    Token.set_extension("confident", default=None)


class ConfidentArc(NamedTuple):
    token: Token          # the dependent
    head: Token           # its head (the token itself for the root)
    dep: str              # its label
    prob: float           # head_prob, or head_prob x dep_prob with ``joint``


def arc_probability(token: Token, joint: bool = False) -> float:
    """The probability of the token's head (and label, with ``joint``)."""
    if token._.head_prob is None:
        raise ValueError(
            f"token {token.i} ({token.text!r}) has no head probability: parse with "
            "probabilities on (the mst_parser setting probabilities = true, e.g. "
            "spacy.load(model, config={'components': {'mst_parser': {'probabilities': True}}}))")
    prob = float(token._.head_prob)
    if joint:
        prob *= 1.0 if token._.dep_prob is None else float(token._.dep_prob)
    return prob


def _check_threshold(min_prob: float) -> None:
    if not 0.0 <= min_prob <= 1.0:
        raise ValueError(f"min_prob must be in [0, 1], got {min_prob!r}")


def confident_arcs(doc: Doc, min_prob: float = 0.9, joint: bool = False) -> List[ConfidentArc]:
    """The arcs of ``doc`` whose probability is at least ``min_prob``."""
    _check_threshold(min_prob)
    out = []
    for token in doc:
        prob = arc_probability(token, joint)
        if prob >= min_prob:
            out.append(ConfidentArc(token, token.head, token.dep_, prob))
    return out


def mark_confident(doc: Doc, min_prob: float = 0.9, joint: bool = False) -> int:
    """Set ``token._.confident`` on every token; returns how many are."""
    _check_threshold(min_prob)
    count = 0
    for token in doc:
        token._.confident = arc_probability(token, joint) >= min_prob
        count += token._.confident
    return count


def _doc_confident_arcs(doc: Doc, min_prob: float = 0.9,
                        joint: Optional[bool] = False) -> List[ConfidentArc]:
    return confident_arcs(doc, min_prob, bool(joint))


if not Doc.has_extension("confident_arcs"):
    Doc.set_extension("confident_arcs", method=_doc_confident_arcs)

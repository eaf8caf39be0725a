"""The extension attributes of the ``mst_parser`` extras (arc probabilities,
k-best parses, constraints; the work is in ``spacy_mstparse.graph``:
``probabilities``, ``constraints``) and of ``mst_supertagger``: their
registration, the reading of the input ones (constraints) and the writing
of the output ones.

Extension attributes, registered on import (spaCy-style, default None):

- ``token._.head_prob``: probability of the token's predicted head (arc
  marginal, ``probabilities = true``); ``token._.dep_prob``: probability of
  its label given the tree (the labeler's label marginal). Both at the
  temperatures fitted at the end of training (``mst_calibration``).
- ``doc._.arc_probs``: per parsed sentence (chunk), ``(start, marginals)``:
  the first token's index and the float64 (n+1, n+1) marginal matrix,
  ``marginals[h, c]`` for head position h (0 = root, i = token start+i-1) of
  word c; every word's column sums to 1.
- ``doc._.parses``: per parsed sentence (chunk), with ``n_best > 1``, the up
  to n_best best distinct trees, best first, each a dict ``{"start": token
  index of the sentence's first word, "heads": [token index of each word's
  head (the word itself for the root)], "deps": [labels], "score": tree
  score, "prob": p(tree) or None, "dep_probs": each word's label probability
  given the tree, or None}``; the first is the tree written to
  ``token.head`` / ``token.dep_``. (``display`` draws both with displaCy.)
- ``doc._.supertag_ids``: the supertags an ``mst_supertagger`` predicted
  (numpy uint64 string ids, one per token); ``token._.supertag``: the
  token's, as a string (None without them).
- ``token._.fixed_head`` (input): a Token of the same sentence (the token
  itself: the root) that must be its head; ``token._.forbidden_heads``
  (input): Tokens that must not be its head. When no tree of the decoder
  satisfies them, the pipe's ``constraints`` setting decides
  (``graph/constraints.py``: Chu-Liu-Edmonds, the fewest dropped with a
  ``ConstraintWarning``, or ValueError).
"""
from typing import Optional

from spacy.tokens import Doc, Token

from ..corpus.conll import doc_label
from .. import selective  # noqa: F401  (registers doc._.confident_arcs, token._.confident)
from ..features.doc_arrays import SUPERTAG_ATTR
from ..graph.constraints import Constraints

CONSTRAINT_ATTRS = ("fixed_head", "forbidden_heads")
for _name in ("head_prob", "dep_prob", "fixed_head", "forbidden_heads"):
    if not Token.has_extension(_name):
        Token.set_extension(_name, default=None)
for _name in ("parses", "arc_probs", SUPERTAG_ATTR):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)


def _token_supertag(token: Token) -> Optional[str]:
    ids = token.doc._.get(SUPERTAG_ATTR)
    return None if ids is None else token.doc.vocab.strings[int(ids[token.i])]


if not Token.has_extension("supertag"):
    Token.set_extension("supertag", getter=_token_supertag)


def _token_name(token: Token) -> str:
    return f"'{token.text}' (token {token.i})"


def sentence_constraints(doc: Doc, start: int, end: int) -> Optional[Constraints]:
    """The fixed and forbidden heads of the words doc[start:end] as positions
    (1..n, 0 the root), or None when there are none."""
    fixed, forbidden = {}, []
    for token in doc[start:end]:
        head, banned = token._.fixed_head, token._.forbidden_heads
        for other in ([head] if head is not None else []) + list(banned or []):
            if not isinstance(other, Token) or other.doc is not doc:
                raise ValueError(f"the fixed/forbidden heads of {_token_name(token)} must be "
                                 f"Tokens of the same Doc, got {other!r}")
            if not start <= other.i < end:
                raise ValueError(
                    f"the fixed/forbidden head {_token_name(other)} of {_token_name(token)} "
                    f"is outside its sentence (tokens {start}..{end - 1}; sentences longer "
                    "than max_sentence_length are parsed in chunks)")
        c = token.i - start + 1
        if head is not None:
            fixed[c] = 0 if head.i == token.i else head.i - start + 1
        forbidden.extend((0 if b.i == token.i else b.i - start + 1, c) for b in banned or [])
    if not fixed and not forbidden:
        return None
    names = ["the root"] + [_token_name(t) for t in doc[start:end]]
    return Constraints(end - start, fixed, forbidden, names)


def has_constraints(doc: Doc) -> bool:
    """Whether any token of the doc has a fixed or forbidden head set (read
    from where spaCy keeps token extension values, ``doc.user_data`` keys
    ``("._.", name, token.idx, None)``, so unconstrained docs cost no
    per-token look-up)."""
    return any(isinstance(key, tuple) and len(key) == 4 and key[0] == "._."
               and key[1] in CONSTRAINT_ATTRS and value is not None
               for key, value in doc.user_data.items())


def annotate(pipe, doc: Doc, chunks, parses) -> None:
    """Write probabilities and k-best lists (when asked for) into the doc."""
    if pipe.cfg["probabilities"]:
        arc_probs = []
        # written where spaCy keeps token extension values (see has_constraints):
        # one dict entry per value, without building Token objects
        data, offsets = doc.user_data, doc.to_array("IDX").tolist()
        for (start, end, _), parse in zip(chunks, parses):
            heads = parse.head_probs[1:].tolist()
            deps = (parse.label_probs[1:].tolist() if parse.label_probs is not None
                    else [None] * (end - start))
            for idx, head, dep in zip(offsets[start:end], heads, deps):
                data[("._.", "head_prob", idx, None)] = head
                data[("._.", "dep_prob", idx, None)] = dep
            arc_probs.append((start, parse.marginals.probs))
        doc._.arc_probs = arc_probs
    if pipe.cfg["n_best"] > 1:
        labels = [doc_label(label) for label in pipe.cfg["labels"]]
        doc._.parses = [
            [{"start": start,
              "heads": [start + c - 1 if h == 0 else start + int(h) - 1
                        for c, h in enumerate(tree.heads[1:], 1)],
              "deps": [labels[l] if l >= 0 else "" for l in tree.labels[1:]],
              "score": tree.score, "prob": tree.prob,
              "dep_probs": (None if tree.label_probs is None
                            else [float(p) for p in tree.label_probs[1:]])}
             for tree in parse.trees]
            for (start, end, _), parse in zip(chunks, parses)]

"""What an ``mst_parser`` reads, decided at ``initialize``: the ``auto``
feature settings chosen from the training treebank (features/selection.py)
over the columns the parser will be given, and the word clusters' source.

A column (UPOS, XPOS, FEATS, LEMMA) is given when the training docs carry it
(gold annotation copied onto them, as ``GoldAnnotationsCorpus.v1`` does) or a
component before the parser predicts it (its factory's ``assigns``).
"""
from itertools import islice
from typing import Iterable, Optional, Set

from spacy.language import Language
from spacy.training import Example

from ..features.selection import COLUMNS, TokenRow
from ..tag_columns import ASSIGNS

# Training docs looked at to see which columns they carry.
PROBE_EXAMPLES = 50


def given_columns(examples: Iterable[Example], nlp: Optional[Language], name: str) -> Set[str]:
    """The columns of ``COLUMNS`` the parser named ``name`` will be given."""
    given = set()
    for eg in islice(examples, PROBE_EXAMPLES):
        given.update(attr for attr in COLUMNS if eg.predicted.has_annotation(attr))
    if nlp is not None and name in nlp.pipe_names:
        for before in nlp.pipe_names[: nlp.pipe_names.index(name)]:
            given.update(ASSIGNS[a] for a in nlp.get_pipe_meta(before).assigns if a in ASSIGNS)
    return given & COLUMNS


def token_rows(examples: Iterable[Example]) -> Iterable[TokenRow]:
    """One ``TokenRow`` per reference word of the examples (words without a
    head: as roots)."""
    for eg in examples:
        doc = eg.reference
        has_heads = doc.has_annotation("DEP")
        for t in doc:
            head = t.head if has_heads and t.head.i != t.i else None
            yield TokenRow(t.pos_, t.tag_, str(t.morph), t.lemma_, t.lower_, t.dep_,
                           head.pos_ if head is not None else "",
                           0 if head is None else (-1 if head.i < t.i else 1),
                           tuple(sorted(c.dep_ for c in t.children)) if has_heads else ())

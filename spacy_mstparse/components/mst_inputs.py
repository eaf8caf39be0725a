"""What an ``mst_parser`` reads, decided at ``initialize``: the ``auto``
feature settings chosen from the training treebank (features/selection.py)
over the columns the parser will be given, and the word clusters' source.

A column (UPOS, XPOS, FEATS, LEMMA) is given when the training docs carry it
(gold annotation copied onto them, as ``GoldAnnotationsCorpus.v1`` does) or a
component before the parser predicts it (its factory's ``assigns``).

Word clusters (``cluster_bits``) come from the ``clusters`` setting of
``initialize``: a Brown paths file (``python -m spacy_mstparse clusters``
builds one from raw text), ``spacy-lookups-data`` (that package's table for
the language), or ``auto``: that table when the language has one, else
classes induced from the training treebank's words (wordclasses/). A source
that has no clusters for the language trains without them, saying so.
"""
import warnings
from itertools import islice
from typing import Callable, Iterable, Optional, Set

from spacy.language import Language
from spacy.strings import get_string_id
from spacy.training import Example

from ..features.clusters import LOOKUPS_SOURCE, ClusterError, ClusterTable, read_clusters
from ..features.selection import COLUMNS, TokenRow
from ..tag_columns import ASSIGNS
from ..wordclasses.induce import classes_from_sentences

AUTO_CLUSTERS = "auto"

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
    """One ``TokenRow`` per reference word of the examples."""
    for eg in examples:
        for t in eg.reference:
            yield TokenRow(t.pos_, t.tag_, str(t.morph), t.lemma_, t.lower_)


def load_clusters(source: str, lang: str, get_examples: Callable[[], Iterable[Example]],
                  name: str) -> Optional[ClusterTable]:
    """The word clusters of ``source`` for ``lang``; None (with a one-line
    warning) when the source has none for the language."""
    if source in (AUTO_CLUSTERS, LOOKUPS_SOURCE):
        try:
            return read_clusters(LOOKUPS_SOURCE, lang, get_string_id)
        except ClusterError as err:
            if source == LOOKUPS_SOURCE:
                warnings.warn(f"[{name}] {err}: training without word clusters "
                              "(cluster_bits = 0)")
                return None
        words = ([t.text for t in eg.reference] for eg in get_examples())
        return classes_from_sentences(words, get_string_id)
    return read_clusters(source, lang, get_string_id)

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
from typing import Callable, Iterable, Optional, Set, Tuple

from spacy.language import Language
from spacy.strings import get_string_id
from spacy.tokens import Doc
from spacy.training import Example

from ..features.clusters import LOOKUPS_SOURCE, ClusterError, ClusterTable, read_clusters
from ..features.config import FeatureConfig
from ..features.doc_arrays import SentenceEncoder
from ..features.selection import COLUMNS, TokenRow, choose_features
from ..tag_columns import ASSIGNS, TAG_COLUMN_ATTRS
from ..wordclasses.induce import classes_from_sentences
from . import serialization as ser

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


class ParserInputs:
    """The features a config asks for (``requested``, maybe with ``auto``
    settings), the concrete ones the model is built from (``features``) and
    the ``SentenceEncoder`` reading what they say."""

    def __init__(self, vocab, requested: FeatureConfig):
        self.vocab = vocab
        self.requested = requested
        self.features: Optional[FeatureConfig] = None   # set by use()
        self.encoder: Optional[SentenceEncoder] = None

    @property
    def tag_attrs(self) -> Tuple[str, ...]:
        """The token attributes the features read (none before the choice)."""
        f = self.features
        if f is None:
            return ()
        return TAG_COLUMN_ATTRS[f.tag_columns] + ("MORPH",) * f.reads_morph + ("LEMMA",) * f.lemma

    def tags_given(self, docs: Iterable[Doc]) -> bool:
        """Whether the docs carry a tag column (UPOS / XPOS) the features read
        (True when they read none). In a pipeline whose taggers annotate only
        the docs of ``update`` (spaCy's ``annotating_components``) the docs
        reach ``initialize`` untagged."""
        attrs = [a for a in self.tag_attrs if a in ("POS", "TAG")]
        return not attrs or any(doc.has_annotation(a) for doc in docs for a in attrs)

    def use(self, features: FeatureConfig) -> dict:
        """Read what the concrete ``features`` say (the word clusters kept);
        returns the choice to save (``feature_choice``)."""
        clusters = self.encoder.clusters if self.encoder is not None else None
        self.features = features
        self.encoder = SentenceEncoder(self.vocab, features.tag_columns, features.use_morph,
                                       features.cluster_bits, features.supertags, features.lemma)
        self.encoder.clusters = clusters
        return {**features.choices(), "cluster_bits": features.cluster_bits}

    def choose(self, get_examples: Callable[[], Iterable[Example]], nlp: Optional[Language],
               name: str, clusters: Optional[str], order: int = 1) -> dict:
        """Make the ``auto`` choices from the training treebank for a model
        of ``order`` and read the word clusters; returns the settings to
        save (``feature_choice``, ``feature_report``)."""
        resolved = self.requested.is_resolved
        given = () if resolved else given_columns(get_examples(), nlp, name)
        rows = () if resolved else token_rows(get_examples())
        chosen, report = choose_features(rows, available=given, feats_in_every_template=order == 1,
                                         **self.requested.choices())
        choice = self.use(self.requested.resolve(chosen))
        if self.features.cluster_bits:
            table = load_clusters(clusters or AUTO_CLUSTERS, self.vocab.lang, get_examples, name)
            if table is None:  # no clusters for the language: none read
                choice = self.use(self.features.resolve({"cluster_bits": 0}))
            self.encoder.clusters = table
        return {"feature_choice": choice, "feature_report": report}

    def restore(self, choice, where: str) -> dict:
        """Read what a saved model's ``feature_choice`` says."""
        if not isinstance(choice, dict):
            raise ser.ModelDataError(f"{where}: no feature_choice (what the features read)")
        try:
            return self.use(self.requested.resolve(choice))
        except (KeyError, TypeError, ValueError) as err:
            raise ser.ModelDataError(f"{where}: feature_choice: {err}") from None

    def restore_clusters(self, data: Optional[bytes], where: str) -> None:
        """Read a saved clusters part (None: not saved or excluded: keep ours)."""
        if data is not None:
            table = ser.load_arrays(data, where, ("keys", "paths"))
            try:
                self.encoder.clusters = ClusterTable(table["keys"], table["paths"])
            except (TypeError, ValueError) as err:  # not two vectors of one length
                raise ser.ModelDataError(f"{where}: {err}") from None
        if self.features.cluster_bits and self.encoder.clusters is None:
            raise ser.ModelDataError(f"{where}: missing (the model uses word clusters)")

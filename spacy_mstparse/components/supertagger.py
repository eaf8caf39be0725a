"""The ``mst_supertagger`` pipeline component: spaCy's tagger, trained to
predict dependency supertags (``features.supertags``) instead of XPOS.

It is spaCy's ``Tagger`` (same model, loss, training and serialization)
with three changes: its gold labels are the supertags of the reference
parse (so it trains on treebanks without a supertag column), it writes its
predictions to ``doc._.supertag_ids`` (string ids, one per token) instead of
``token.tag``, which keeps the XPOS tagger's tags, and it scores
``supertag_acc``. An ``mst_parser`` whose features set ``supertags = true``
reads them as one more tag row; put the supertagger before it and, to train
the parser on the supertags it will see, in ``[training]
annotating_components`` (``configs/mst_parser_tagged.cfg``).

Extension attributes (registered with the others by ``extensions``):
``doc._.supertag_ids`` (numpy uint64 string ids, or None) and
``token._.supertag`` (the string, or None).
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional

import numpy
from spacy.language import Language
from spacy.pipeline.tagger import Tagger
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import registry
from thinc.api import Config, Model, SequenceCategoricalCrossentropy

from ..features.doc_arrays import SUPERTAG_ATTR
from ..setting_types import number_in
from ..features.supertags import supertags
from . import extensions  # noqa: F401  (registers doc._.supertag_ids, token._.supertag)
from .base import aligned_parse

DEFAULT_MODEL = Config().from_str("""
[model]
@architectures = "spacy.Tagger.v2"
nO = null
normalize = false

[model.tok2vec]
@architectures = "spacy.Tok2VecListener.v1"
width = 96
upstream = "*"
""")["model"]


def gold_supertags(eg: Example) -> List[Optional[str]]:
    """The supertags of the reference parse, aligned to the predicted
    tokens (None where a token is not aligned or has no head)."""
    heads, deps = aligned_parse(eg)
    return supertags(list(heads), list(deps))


def score_supertags(examples: Iterable[Example], **kwargs) -> Dict[str, Optional[float]]:
    """``supertag_acc``: share of the tokens with a gold supertag whose
    predicted supertag (``token._.supertag``) is that one (None: none had)."""
    right = total = 0
    for eg in examples:
        predicted = [t._.supertag for t in eg.predicted]
        for guess, gold in zip(predicted, gold_supertags(eg)):
            if gold is not None:
                total += 1
                right += guess == gold
    return {"supertag_acc": right / total if total else None}


@registry.scorers("spacy_mstparse.supertagger_scorer.v1")
def make_supertagger_scorer():
    return score_supertags


@Language.factory(
    "mst_supertagger",
    assigns=[f"doc._.{SUPERTAG_ATTR}"],
    default_config={"model": DEFAULT_MODEL, "label_smoothing": 0.0,
                    "scorer": {"@scorers": "spacy_mstparse.supertagger_scorer.v1"}},
    default_score_weights={"supertag_acc": 0.0},
)
def make_supertagger(nlp: Language, name: str, model: Model,
                     label_smoothing: number_in(0, 1, high_included=False),
                     scorer: Optional[Callable]):
    """A tagger of dependency supertags (``spacy_mstparse.features.supertags``)
    for ``mst_parser``'s ``supertags`` feature row.

    model: spaCy's tagger model (default: ``spacy.Tagger.v2`` on a
        ``spacy.Tok2VecListener.v1`` of width 96: the pipeline's tok2vec).
    label_smoothing: as spaCy's tagger.
    """
    return Supertagger(nlp.vocab, model, name, label_smoothing=label_smoothing, scorer=scorer)


class Supertagger(Tagger):
    """spaCy's tagger predicting supertags into ``doc._.supertag_ids``."""

    def __init__(self, vocab, model: Model, name: str = "mst_supertagger", *,
                 label_smoothing: float = 0.0, scorer: Optional[Callable] = score_supertags):
        super().__init__(vocab, model, name, overwrite=True, scorer=scorer, neg_prefix="!",
                         label_smoothing=label_smoothing)
        self._label_ids = None   # (labels, their string ids), cached by set_annotations

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[List[str]] = None) -> None:
        """The labels are the supertags of the training examples' reference
        parses (or ``labels``); then the model is initialized on a sample."""
        validate_get_examples(get_examples, "Supertagger.initialize")
        found = set(labels or ())
        if labels is None:
            for eg in get_examples():
                found.update(tag for tag in gold_supertags(eg) if tag)
        if not found:
            raise ValueError(f"[{self.name}] no supertags in the training examples: the "
                             "reference docs need heads and deps (is the training corpus parsed?)")
        for tag in sorted(found):
            self.add_label(tag)
        docs, truths = [], []
        for eg in islice(get_examples(), 10):
            docs.append(eg.x)
            gold = gold_supertags(eg)
            truths.append(self.model.ops.asarray(
                [[float(tag == label) for label in self.labels] for tag in gold], dtype="float32"))
        self.model.initialize(X=docs, Y=truths)

    def get_loss(self, examples: Iterable[Example], scores):
        validate_examples(examples, "Supertagger.get_loss")
        loss_func = SequenceCategoricalCrossentropy(
            names=self.labels, normalize=False, label_smoothing=self.cfg["label_smoothing"])
        truths = [gold_supertags(eg) for eg in examples]
        d_scores, loss = loss_func(scores, truths)
        if self.model.ops.xp.isnan(loss):
            raise ValueError(f"[{self.name}] the supertagger's loss is NaN")
        return float(loss), d_scores

    def set_annotations(self, docs: Iterable[Doc], batch_tag_ids) -> None:
        if isinstance(docs, Doc):
            docs = [docs]
        labels = tuple(self.labels)
        if self._label_ids is None or self._label_ids[0] != labels:
            self._label_ids = (labels, numpy.array([self.vocab.strings.add(l) for l in labels],
                                                   dtype="uint64"))
        ids = self._label_ids[1]
        for doc, tag_ids in zip(docs, batch_tag_ids):
            if hasattr(tag_ids, "get"):
                tag_ids = tag_ids.get()
            doc._.set(SUPERTAG_ATTR, ids[numpy.asarray(tag_ids, dtype="int64")])

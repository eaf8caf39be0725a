"""The ``mst_lemmatizer`` pipeline component: spaCy's ``trainable_lemmatizer``
(edit trees: Müller et al. 2015, Chrupała 2008) for any treebank, one without
lemmas included.

spaCy's component stops at ``initialize`` when the training words give it no
edit tree: a treebank whose LEMMA column is empty (UD has several), or whose
lemmas are too few for ``min_tree_freq``. This one says so in one line and
stays off: it sets no lemma, learns nothing, and the parser after it chooses
no lemma features (``lemma = "auto"``). With lemmas it is spaCy's component,
unchanged: same settings and defaults (taken from spaCy's factory), model,
training, scorer and files.
"""
from typing import Callable, Dict, Iterable, Optional

from spacy.language import Language
from spacy.pipeline.edit_tree_lemmatizer import EditTreeLemmatizer
from spacy.training import Example
from wasabi import msg


def _spacy_factory_meta():
    """spaCy's own ``trainable_lemmatizer`` factory settings (spaCy 3.8
    registers its factories on first use, 3.7 on import)."""
    try:
        from spacy.pipeline.factories import register_factories
    except ImportError:
        pass
    else:
        register_factories()
    return Language.get_factory_meta("trainable_lemmatizer")


_SPACY = _spacy_factory_meta()


class TreebankLemmatizer(EditTreeLemmatizer):
    """``EditTreeLemmatizer`` that stays off where the treebank has no
    (frequent enough) lemma; ``is_off`` says which."""

    @property
    def is_off(self) -> bool:
        return bool(self.cfg.get("off", False))

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[Dict] = None):
        self.cfg["off"] = False
        super().initialize(get_examples, nlp=nlp, labels=labels)

    def _labels_from_data(self, get_examples: Callable[[], Iterable[Example]]) -> None:
        super()._labels_from_data(get_examples)
        if not self.labels:
            msg.warn(f"[{self.name}] no lemma in the training words seen at least "
                     f"min_tree_freq = {self.min_tree_freq} times: the lemmatizer stays off "
                     f"(sets no lemmas)")
            self.cfg["off"] = True
            # one edit tree (the identity), so that the model has an output to initialize
            self._pair2label("_", "_", add_label=True)

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        if self.is_off:
            losses = {} if losses is None else losses
            losses.setdefault(self.name, 0.0)
            return losses
        return super().update(examples, drop=drop, sgd=sgd, losses=losses)

    def predict(self, docs):
        if self.is_off:
            return [None for _ in docs]
        return super().predict(docs)

    def set_annotations(self, docs, batch_tree_ids) -> None:
        if not self.is_off:
            super().set_annotations(docs, batch_tree_ids)


@Language.factory(
    "mst_lemmatizer",
    assigns=_SPACY.assigns,
    requires=_SPACY.requires,
    default_config=_SPACY.default_config,
    default_score_weights=_SPACY.default_score_weights,
)
def make_mst_lemmatizer(nlp: Language, name: str, model, backoff: Optional[str],
                        min_tree_freq: int, overwrite: bool, top_k: int,
                        scorer: Optional[Callable]):
    return TreebankLemmatizer(nlp.vocab, model, name, backoff=backoff,
                              min_tree_freq=min_tree_freq, overwrite=overwrite, top_k=top_k,
                              scorer=scorer)

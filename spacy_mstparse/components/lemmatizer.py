"""The ``mst_lemmatizer`` pipeline component: spaCy's ``trainable_lemmatizer``
(edit trees: Müller et al. 2015, Chrupała 2008) for any treebank, one without
lemmas included, with a lexicon of the training words.

The lexicon (``lexicon = true``) maps each training word form with its UPOS
to the lemma it has most often there, as the dictionaries of taggers trained
from a treebank do (Hajič 2000; Straka et al. 2016): a word the lexicon has
under the UPOS the tagger before the lemmatizer predicted (its form as
written, else lower-cased) gets that lemma, any other word the lemma of the
edit tree the model predicts. The lexicon is read from the reference docs at
``initialize`` and saved in the component's cfg. The docs of a training
update are annotated by the model alone: the parser after the lemmatizer
learns from lemmas as good as those of unseen text, not from the lexicon's
lemmas of its own training words (as the tagger's jackknife does for tags).

spaCy's component stops at ``initialize`` when the training words give it no
edit tree: a treebank whose LEMMA column is empty (UD has several), or whose
lemmas are too few for ``min_tree_freq``. This one says so in one line and
stays off: it sets no lemma, learns nothing, and the parser after it chooses
no lemma features (``lemma = "auto"``). With lemmas it is spaCy's component
and its lexicon: spaCy's settings and defaults (taken from spaCy's factory)
and ``lexicon``, spaCy's model, training, scorer and files (the lexicon in
cfg).
"""
from collections import Counter
from typing import Callable, Dict, Iterable, Optional

from spacy.language import Language
from spacy.pipeline.edit_tree_lemmatizer import EditTreeLemmatizer
from spacy.tokens import Doc
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
    (frequent enough) lemma (``is_off`` says which), and gives the training
    words their lemma from its ``lexicon``."""

    def __init__(self, *args, lexicon: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.cfg["use_lexicon"] = lexicon
        # the docs of the last update, by id (held, so that no other doc takes their id)
        self._updated_docs: Dict[int, Doc] = {}

    @property
    def is_off(self) -> bool:
        return bool(self.cfg.get("off", False))

    @property
    def lexicon(self) -> Dict[str, str]:
        """Form and UPOS, joined by a tab, -> lemma (``training_lexicon``);
        empty with ``lexicon = false``."""
        return self.cfg.get("lexicon", {}) if self.cfg.get("use_lexicon", True) else {}

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[Dict] = None):
        self.cfg["off"] = False
        super().initialize(get_examples, nlp=nlp, labels=labels)
        use = self.cfg.get("use_lexicon", True) and not self.is_off
        self.cfg["lexicon"] = training_lexicon(get_examples()) if use else {}

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
        examples = list(examples)
        # spaCy annotates these docs next (annotating_components): by the model alone
        self._updated_docs = {id(eg.predicted): eg.predicted for eg in examples}
        return super().update(examples, drop=drop, sgd=sgd, losses=losses)

    def predict(self, docs):
        if self.is_off:
            return [None for _ in docs]
        return super().predict(docs)

    def set_annotations(self, docs, batch_tree_ids) -> None:
        if self.is_off:
            return
        docs = list(docs)
        free = [[self.overwrite or token.lemma == 0 for token in doc] for doc in docs]
        super().set_annotations(docs, batch_tree_ids)
        lexicon = self.lexicon
        for doc, doc_free in zip(docs, free):
            if id(doc) in self._updated_docs:
                del self._updated_docs[id(doc)]
                continue
            if not lexicon:
                continue
            for token, settable in zip(doc, doc_free):
                if settable:
                    lemma = lexicon.get(f"{token.text}\t{token.pos_}")
                    if lemma is None:
                        lemma = lexicon.get(f"{token.text.lower()}\t{token.pos_}")
                    if lemma is not None:
                        token.lemma_ = lemma


def training_lexicon(examples: Iterable[Example]) -> Dict[str, str]:
    """The lexicon of the reference docs' words: each form (as written and
    lower-cased) and UPOS, joined by a tab, -> the lemma the words have most
    often (the first seen of a tie); words without a lemma are not counted."""
    counts: Dict[str, Counter] = {}
    for eg in examples:
        for token in eg.reference:
            if token.lemma == 0:
                continue
            for form in {token.text, token.text.lower()}:
                counts.setdefault(f"{form}\t{token.pos_}", Counter())[token.lemma_] += 1
    return {key: lemmas.most_common(1)[0][0] for key, lemmas in counts.items()}


@Language.factory(
    "mst_lemmatizer",
    assigns=_SPACY.assigns,
    requires=_SPACY.requires,
    default_config={**_SPACY.default_config, "lexicon": True},
    default_score_weights=_SPACY.default_score_weights,
)
def make_mst_lemmatizer(nlp: Language, name: str, model, backoff: Optional[str],
                        min_tree_freq: int, overwrite: bool, top_k: int,
                        scorer: Optional[Callable], lexicon: bool):
    return TreebankLemmatizer(nlp.vocab, model, name, backoff=backoff,
                              min_tree_freq=min_tree_freq, overwrite=overwrite, top_k=top_k,
                              scorer=scorer, lexicon=lexicon)

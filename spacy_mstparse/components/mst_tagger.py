"""The ``mst_tagger`` pipeline component: UPOS, XPOS and FEATS from the
averaged-perceptron tagger of ``spacy_mstparse.tagging``.

A linear tagger with word-shape, prefix and suffix features learns far more
from a small treebank than a neural tagger does (on the 14k training words of
Czech CLTT: 96.8% UPOS against spaCy's morphologizer's 92.2%), and it trains in
seconds. It learns at ``initialize``, from every training example at once,
because it also prepares what the parser downstream learns from: the
jackknifed tags of the training sentences (``tagging.training``; the
weights it keeps blend those of the jackknife's fold taggers with those of
the tagger trained on every sentence: ``fold_share``). While
``spacy train`` runs, the component, listed in ``[training]
annotating_components``, gives each training doc those tags instead of its
own predictions on words it has learned; everywhere else (dev, parsing) it
predicts. ``update`` learns nothing more.

It writes ``token.pos``, ``token.tag`` (when the treebank's XPOS says more
than UPOS; read from the UPOS and FEATS predicted where the treebank's XPOS
is a function of them: ``tagging.inventory``) and ``token.morph``, and
scores ``pos_acc``, ``tag_acc``, ``morph_acc`` and ``morph_per_feat`` with
spaCy's ``Scorer``.
"""
from typing import Callable, Dict, Iterable, List, Optional

import numpy
from spacy.attrs import ORTH
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.pipeline.morphologizer import morphologizer_score
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import registry
from wasabi import msg

from .. import __version__
from ..features.selection import TokenRow
from ..setting_types import at_least, number_in, one_of, power_of_two
from ..tagging.guesser import ARRAY_NAMES as GUESSER_ARRAYS
from ..tagging.inventory import TagInventory, build_inventory
from ..tagging.perceptron import TaggerModel
from ..tagging.training import TaggedSentence, blend, jackknife, train_model
from ..tagging.word_attributes import word_attributes
from . import serialization
from .serialization import ModelDataError

FORMAT_VERSION = 4    # 2: the FEATS guesser (guesser.npz); 3: weights in blocks per feature key;
                      # 4: XPOS read from UPOS and FEATS (inventory's xpos_of_feats)
AUTO = "auto"


def _words_key(doc: Doc) -> bytes:
    """A doc's words, as the key of its jackknifed tags."""
    return doc.to_array(ORTH).tobytes()


def score_tags(examples: Iterable[Example], **kwargs) -> Dict[str, object]:
    """``pos_acc``, ``tag_acc``, ``morph_acc`` and ``morph_per_feat`` (spaCy's Scorer)."""
    examples = list(examples)
    scores = morphologizer_score(examples, **kwargs)
    scores.update(Scorer.score_token_attr(examples, "tag", **kwargs))
    return scores


@registry.scorers("spacy_mstparse.tagger_scorer.v1")
def make_tagger_scorer():
    return score_tags


@Language.factory(
    "mst_tagger",
    assigns=["token.pos", "token.tag", "token.morph"],
    default_config={"epochs": 10, "folds": 5, "fold_epochs": 5, "fold_share": 0.5,
                    "n_buckets": 1 << 22, "xpos": AUTO, "feats": AUTO, "seed": 0,
                    "scorer": {"@scorers": "spacy_mstparse.tagger_scorer.v1"}},
    default_score_weights={"pos_acc": 0.5, "tag_acc": 0.0, "morph_acc": 0.5,
                           "morph_per_feat": None},
)
def make_mst_tagger(nlp: Language, name: str, epochs: at_least(1), folds: at_least(0),
                    fold_epochs: at_least(1), fold_share: number_in(0.0, 1.0),
                    n_buckets: power_of_two(1024),
                    xpos: one_of(AUTO, True, False),
                    feats: one_of(AUTO, True, False), seed: int, scorer: Optional[Callable]):
    """An averaged-perceptron tagger of UPOS, XPOS and FEATS.

    epochs: passes over the training sentences.
    folds: jackknifing folds for the tags the training docs get while
        ``spacy train`` runs (0 or 1: the tagger's own predictions).
    fold_epochs: passes of each fold's tagger (at most ``epochs``): the
        tags they give the parser's training are as useful after fewer
        passes than the tagger the pipeline keeps.
    fold_share: the share of the fold taggers' mean weights in the weights
        the pipeline keeps, the rest being those of the tagger trained on
        every sentence (0: that tagger alone).
    n_buckets: size of the hashed weight vector (a power of two).
    xpos, feats: predict that column (``auto``: when the training treebank
        gives it and, for XPOS, it says more than UPOS).
    seed: the order of the training sentences.
    """
    return MSTTagger(nlp.vocab, name, epochs=epochs, folds=folds, fold_epochs=fold_epochs,
                     fold_share=fold_share, n_buckets=n_buckets, xpos=xpos, feats=feats,
                     seed=seed, scorer=scorer)


class MSTTagger(serialization.PartsSerializer, Pipe):
    """spaCy glue around ``tagging.perceptron.TaggerModel``."""

    def __init__(self, vocab, name: str = "mst_tagger", *, epochs: int = 10, folds: int = 5,
                 fold_epochs: int = 5, fold_share: float = 0.5, n_buckets: int = 1 << 22,
                 xpos=AUTO, feats=AUTO, seed: int = 0,
                 scorer: Optional[Callable] = score_tags):
        self.vocab = vocab
        self.name = name
        self.cfg = {"epochs": epochs, "folds": folds, "fold_epochs": fold_epochs,
                    "fold_share": fold_share, "n_buckets": n_buckets, "xpos": xpos,
                    "feats": feats, "seed": seed}
        self.scorer = scorer
        self.inventory: Optional[TagInventory] = None
        self.model: Optional[TaggerModel] = None
        self.lexicon: Dict[int, int] = {}              # ambiguity classes of the training words
        self.report: dict = {}
        self._training_tags: Dict[bytes, tuple] = {}   # words -> jackknifed ids (not saved)

    @property
    def labels(self):
        return tuple(self.inventory.upos) if self.inventory else ()

    # -- training --------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None) -> None:
        """Learn the classes and the weights from every training example, and
        the jackknifed tags of the training docs."""
        validate_get_examples(get_examples, "MSTTagger.initialize")
        docs = [eg.reference for eg in get_examples()]
        rows = [TokenRow(t.pos_, t.tag_, str(t.morph), t.lemma_, t.lower_)
                for doc in docs for t in doc]
        try:
            self.inventory, self.report = build_inventory(rows, self.cfg["xpos"], self.cfg["feats"])
        except ValueError as err:
            raise ValueError(f"[{self.name}] {err}") from None
        sentences = [self._gold_sentence(doc) for doc in docs]
        epochs, n_buckets, seed = self.cfg["epochs"], self.cfg["n_buckets"], self.cfg["seed"]
        fold_epochs = min(self.cfg["fold_epochs"], epochs)
        msg.text(f"[{self.name}] {len(rows)} words; predicts "
                 f"{', '.join(self.report['predicts'])}; {epochs} epochs"
                 + (f", {self.cfg['folds']} jackknife folds of {fold_epochs}"
                    if self.cfg["folds"] > 1 else ""))
        jackknifed = jackknife(self.inventory, sentences, self.cfg["folds"], fold_epochs,
                               n_buckets, seed)
        self._training_tags = {_words_key(doc): self._agreeing(tags)
                               for doc, tags in zip(docs, jackknifed.tags)}
        model, self.lexicon = train_model(self.inventory, sentences, epochs, n_buckets, seed)
        self.model = blend(model, self.inventory, jackknifed, self.cfg["fold_share"])

    def _gold_sentence(self, doc: Doc) -> TaggedSentence:
        upos, xpos, feats = self.inventory.encode([t.pos_ for t in doc], [t.tag_ for t in doc],
                                                  [str(t.morph) for t in doc])
        return TaggedSentence(word_attributes([t.text for t in doc]), upos, xpos, feats)

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """Nothing to learn here (the tagger learned at initialize)."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        return losses

    # -- prediction ------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[tuple]:
        self._require_initialized()
        out = []
        for doc in docs:
            tags = self._training_tags.get(_words_key(doc)) if self._training_tags else None
            out.append(tags if tags is not None else self._agreeing(
                self.model.tag(word_attributes([t.text for t in doc], self.lexicon))))
        return out

    def _agreeing(self, tags: tuple) -> tuple:
        """(upos, xpos, feats) ids with the XPOS that agrees with the UPOS and
        FEATS (``TagInventory.agreeing_xpos``)."""
        upos, xpos, feats = tags
        return upos, self.inventory.agreeing_xpos(upos, xpos, feats), feats

    def set_annotations(self, docs: Iterable[Doc], tags: List[tuple]) -> None:
        inv = self.inventory
        for doc, (upos, xpos, feats) in zip(docs, tags):
            for token, u, x, f in zip(doc, upos, xpos, feats):
                token.pos_ = inv.upos[u]
                if x >= 0:
                    token.tag_ = inv.xpos[x]
                if f >= 0:
                    token.set_morph(inv.feats[f])   # "_": analysed, no features

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations([doc], self.predict([doc]))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128):
        for doc in stream:
            yield self(doc)

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        validate_examples(examples, "MSTTagger.score")
        return self.scorer(examples, **kwargs)

    def _require_initialized(self) -> None:
        if self.model is None:
            raise ValueError(f"[{self.name}] the tagger is not initialized: call "
                             "nlp.initialize() or load a trained pipeline")

    # -- serialization ----------------------------------------------------------
    def _part_names(self) -> List[str]:
        return ["cfg", "weights.npz", "lexicon.npz", "guesser.npz"]

    def _serial_parts(self) -> Dict[str, Callable[[], bytes]]:
        def cfg() -> bytes:
            return serialization.dump_json({
                "format_version": FORMAT_VERSION, "spacy_mstparse_version": __version__,
                "settings": self.cfg, "report": self.report,
                "inventory": self.inventory.to_dict() if self.inventory else None})
        parts = {"cfg": cfg}
        if self.model is not None:
            parts["weights.npz"] = lambda: serialization.dump_sparse_vector(self.model.weights)
            parts["lexicon.npz"] = lambda: serialization.dump_arrays(
                words=numpy.fromiter(self.lexicon.keys(), dtype=numpy.uint64, count=len(self.lexicon)),
                classes=numpy.fromiter(self.lexicon.values(), dtype=numpy.uint64,
                                       count=len(self.lexicon)))
            parts["guesser.npz"] = lambda: serialization.dump_arrays(
                min_support=numpy.asarray([self.model.min_support], dtype=numpy.int32),
                weights=self.model.guess_weights, **self.model.guesser_arrays())
        return parts

    def _load_parts(self, parts: Dict[str, bytes], where: Callable[[str], str]) -> None:
        if "cfg" not in parts:
            raise ModelDataError(f"{where('cfg')}: missing (the saved component is incomplete)")
        cfg = serialization.load_cfg(parts["cfg"], where("cfg"))
        if cfg.get("format_version") != FORMAT_VERSION:
            raise ModelDataError(
                f"{where('cfg')}: saved in tagger format {cfg.get('format_version')} by "
                f"spacy-mstparse {cfg.get('spacy_mstparse_version', '?')}; spacy-mstparse "
                f"{__version__} reads format {FORMAT_VERSION} only: retrain the pipeline")
        try:
            self.cfg.update(cfg["settings"])
            self.report = cfg.get("report", {})
            if cfg["inventory"] is None:
                return
            self.inventory = TagInventory.from_dict(cfg["inventory"])
        except (KeyError, TypeError) as err:
            raise ModelDataError(f"{where('cfg')}: not a tagger's settings ({err})") from None
        if "weights.npz" not in parts:
            raise ModelDataError(f"{where('weights.npz')}: missing (the saved component is incomplete)")
        weights = serialization.load_sparse_vector(parts.pop("weights.npz"), where("weights.npz"),
                                                   (self.cfg["n_buckets"],))
        if "lexicon.npz" not in parts:
            raise ModelDataError(f"{where('lexicon.npz')}: missing (the saved component is incomplete)")
        lexicon = serialization.load_arrays(parts.pop("lexicon.npz"), where("lexicon.npz"),
                                            ("words", "classes"))
        if lexicon["words"].shape != lexicon["classes"].shape or lexicon["words"].ndim != 1:
            raise ModelDataError(f"{where('lexicon.npz')}: words and classes differ in length")
        self.lexicon = dict(zip(lexicon["words"].tolist(), lexicon["classes"].tolist()))
        if "guesser.npz" not in parts:
            raise ModelDataError(f"{where('guesser.npz')}: missing (the saved component is incomplete)")
        guesser = serialization.load_arrays(parts.pop("guesser.npz"), where("guesser.npz"),
                                            GUESSER_ARRAYS + ("min_support", "weights"))
        try:
            self.model = TaggerModel(len(self.inventory.upos), len(self.inventory.xpos),
                                     len(self.inventory.feats), self.inventory.arrays(),
                                     self.cfg["n_buckets"], weights)
        except ValueError as err:
            raise ModelDataError(f"{where('cfg')}: {err}") from None
        try:
            support, weights = guesser.pop("min_support"), guesser.pop("weights")
            self.model.set_guesser(guesser, int(support[0]) if support.shape == (1,) else 0,
                                   weights)
        except (ValueError, TypeError) as err:
            raise ModelDataError(f"{where('guesser.npz')}: {err}") from None

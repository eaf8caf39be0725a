"""The ``arcstandard_svm`` pipeline component: spaCy glue around the
arc-standard parser with a one-vs-rest linear SVM oracle
(``transition.model.TransitionModel``, trained by
``transition.training.TransitionTrainer``; both spaCy-free).

Follows Choo & Shivaditya (the Cornell CS 5740 report, 2020): an
arc-standard transition system (Nivre 2004, 2008) whose next transition is
the best-scoring valid one under one binary linear SVM per transition class
(Yamada & Matsumoto 2003), trained by sub-gradient descent (step
1/(lambda t)) on the configurations of the static oracle, with the seed's
feature set (``transition/features.pyx``), lower-cased words and a rare-word
cut-off. Differences from the seed:

* labeled: the classes are SHIFT, LEFT-ARC(label) and RIGHT-ARC(label);
* non-projective training trees are lifted (pseudo-projective parsing, Nivre
  & Nilsson 2005, spaCy's ``projectivize``/``deprojectivize`` with the HEAD
  label encoding) so that the parser can output non-projective trees;
  ``nonprojective = "drop"`` skips them instead, as the seed does;
* ``spacy train`` calls ``update(batch)`` repeatedly instead of one batch
  optimization, with an epoch rule for stopping (``transition.training``);
  once it has fired further updates do nothing.

This pipe reads the gold trees (``arcstandard_gold``), encodes Docs as
(LOWER, tag) rows, writes heads and labels back (deprojectivizing lifted
arcs) and serializes. Input: words and the POS column ``tag_column`` (XPOS
in ``token.tag`` as in the seed, or UPOS in ``token.pos``); sentences as for
``mst_parser``. Settings and their defaults: ``arcstandard_settings``; saved
state (model format 2): ``arcstandard_state``.
"""
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.attrs import DEP, HEAD, LOWER, SENT_START
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import logger
from spacy.vocab import Vocab
from wasabi import msg

from ..scoring import score_parse
from ..tag_columns import TAG_COLUMN_ATTRS
from ..transition import training_scan
from ..transition.model import TransitionModel
from ..transition.training import TransitionTrainer
from . import serialization
from .arcstandard_gold import doc_targets, learnable_trees
from ..setting_types import config_errors
from .arcstandard_settings import DEFAULT_CONFIG, MODEL_SETTINGS, SETTINGS, checked_settings
from .arcstandard_settings import SETTING_TYPES as T
from .arcstandard_state import LEXICON_PART, WEIGHTS_PART, checked_lexicon, read_arrays, read_cfg
from .base import SCORE_WEIGHTS, DependencyPipe
from .serialization import ModelDataError

FORMAT_VERSION = 2
HEAD_DEP = [HEAD, DEP]


@Language.factory(
    "arcstandard_svm",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config=DEFAULT_CONFIG,
    default_score_weights=SCORE_WEIGHTS,
)
def make_arcstandard_svm(nlp: Language, name: str, lam: T["lam"], delta: T["delta"],
                         feature_groups: T["feature_groups"], word_distance: T["word_distance"],
                         word_pair_limit: T["word_pair_limit"],
                         rare_word_cutoff: T["rare_word_cutoff"], average: T["average"],
                         tag_column: T["tag_column"], n_buckets: T["n_buckets"],
                         nonprojective: T["nonprojective"],
                         min_lifted_label_count: T["min_lifted_label_count"],
                         max_sentence_length: T["max_sentence_length"], scorer: T["scorer"]):
    """Arc-standard transition parser with one-vs-rest linear SVMs.

    lam: the SVMs' L2 regularization lambda (step size 1/(lambda t)).
    delta: stop when an epoch lowers the training error by less than this.
    feature_groups: some of "1w", "2w", "3w", "dep", "wd", "ic".
    word_distance: the "wd" features as the distance "value" (the seed) or
        as indicators of "binned" distances.
    word_pair_limit: the sigma0.w+beta0.w feature fires only for the N most
        frequent word pairs of the training configurations.
    rare_word_cutoff: words seen fewer times in training become UNK.
    average: predict with the average of the SVM iterates (else the last).
    tag_column: "xpos" (token.tag) or "upos" (token.pos).
    n_buckets: rows of the hashed weight table (a power of two); each row
        holds one weight per transition class.
    nonprojective: "lift" (pseudo-projective) or "drop" non-projective
        training trees.
    min_lifted_label_count: a lifted arc keeps its decorated label
        ("label||head label", from which the parse is deprojectivized) only
        if that label occurs this often in training; rarer ones keep the
        plain label (a projective arc in the output).
    max_sentence_length: longest word sequence parsed as one tree.
    """
    settings = {k: v for k, v in locals().items() if k not in ("nlp", "name")}
    with config_errors(f"components.{name}"):
        return ArcStandardSVM(nlp.vocab, name, **settings)


class ArcStandardSVM(DependencyPipe):
    """Greedy arc-standard dependency parser with a one-vs-rest SVM oracle."""

    FORMAT_VERSION = FORMAT_VERSION
    # Rebuilt by from_bytes when unpickling (pickling goes through to_bytes).
    TRANSIENT_ATTRS = ("transition", "trainer", "_label_cache")

    def __init__(self, vocab: Vocab, name: str = "arcstandard_svm", *,
                 scorer: Optional[Callable] = score_parse, **settings):
        """Settings (the factory's arguments) left out take ``DEFAULT_CONFIG``'s values."""
        unknown = set(settings) - set(SETTINGS)
        if unknown:
            raise TypeError(f"[{name}] unknown settings: {', '.join(sorted(unknown))}")
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        self.cfg = checked_settings(name, **{key: settings.get(key, DEFAULT_CONFIG[key])
                                             for key in SETTINGS})
        self.transition = TransitionModel(self.cfg)
        self.trainer = TransitionTrainer(self.transition)
        self._label_cache = None
        self._counts = Counter()
        self._warned = set()

    @property
    def is_initialized(self) -> bool:
        return self.trainer.has_svm or self.transition.svm is not None

    # -- what the model holds -----------------------------------------------------
    @property
    def inventory(self) -> dict:
        return self.transition.inventory

    @property
    def progress(self) -> dict:
        return self.trainer.progress

    @property
    def label_data(self) -> List[str]:
        return list(self.inventory["labels"])

    @property
    def classes(self) -> List[Tuple[str, Optional[str]]]:
        """("SHIFT", None), ("LEFT-ARC", label), ("RIGHT-ARC", label), ..."""
        return self.transition.classes

    @property
    def converged(self) -> bool:
        return self.trainer.converged

    @property
    def vocabulary(self) -> numpy.ndarray:
        """The lower-cased word ids (string store hashes) above the rare-word
        cut-off, sorted; other words are UNK."""
        return self.transition.vocab_ids

    @property
    def valence(self) -> numpy.ndarray:
        """(2, len(vocabulary)) float32: the average number of left and right
        dependents of each vocabulary word in the training trees."""
        return self.transition.valence

    @property
    def word_pairs(self) -> numpy.ndarray:
        """The sorted hashed (sigma0 word, beta0 word) pairs the pair feature
        fires for."""
        return self.transition.pairs

    @property
    def tag_attrs(self) -> Tuple[str, ...]:
        return TAG_COLUMN_ATTRS[self.cfg["tag_column"]]

    def _rows(self, doc: Doc) -> numpy.ndarray:
        """The (LOWER, tag) rows of the doc's tokens."""
        array = doc.to_array([LOWER, *self.tag_attrs]).astype("uint64", copy=False)
        return array.reshape((-1, 2))

    # -- gold data ------------------------------------------------------------
    def training_trees(self, eg: Example):
        """The base's gold sentences (``gold_sentences``) that arc-standard
        can learn from (``arcstandard_gold.learnable_trees``): (start, heads,
        deps) with exactly one root word, and non-projective trees lifted
        (rare decorations dropped once ``initialize`` has counted them) or
        skipped as set."""
        return learnable_trees(self.gold_sentences(eg, partial=False), self.cfg["nonprojective"],
                               self.inventory["lifted_labels"], self._counts, self._warn_once,
                               self.name)

    # -- set-up ---------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[List[str]] = None) -> None:
        """Scan the training examples (``TransitionTrainer.begin``) and
        allocate zero SVMs."""
        validate_get_examples(get_examples, "ArcStandardSVM.initialize")
        # lifted_labels None: keep every decoration for now
        self.transition = TransitionModel(self.cfg)
        self.trainer = TransitionTrainer(self.transition)
        sentences = []  # (lower ids, heads, deps)
        self._counts = Counter()
        for eg in get_examples():
            gold = list(self.training_trees(eg))
            if not gold:
                continue
            lower = eg.predicted.to_array(LOWER).astype("uint64").reshape(-1)
            for start, heads, deps in gold:
                sentences.append((lower[start : start + len(heads) - 1], heads, deps))
        if not sentences:
            raise ValueError(
                f"[{self.name}] no usable gold trees in the training examples: the reference "
                "docs need heads and deps (is the training corpus parsed?)"
            )
        self.trainer.begin(sentences, labels, nonproj.DELIMITER, self._counts["nonprojective"])

    @property
    def svm(self):
        """The trainable SVMs (``TransitionTrainer.svm``)."""
        self._require_initialized()
        return self.trainer.svm

    def _prediction_model(self) -> TransitionModel:
        """The model with the weights to predict with, installed once after
        each round of updates."""
        self._require_initialized()
        if self.trainer.stale:
            self.trainer.install_weights()
        return self.transition

    def prediction_weights(self) -> numpy.ndarray:
        """The weights w the parser predicts with ((n_buckets, n_classes)
        float32): the average of the SVM iterates with ``average``, else the
        last iterate (a new array if the loaded parser keeps only the
        non-zero rows)."""
        return self._prediction_model().svm.dense_table()

    # -- training ---------------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One SVM step per oracle configuration of every gold sentence. The
        loss is the number of configurations whose best valid transition was
        not the oracle's (before the step). Once the stopping rule has fired
        this does nothing."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "ArcStandardSVM.update")
        self._require_initialized()
        if self.trainer.converged:
            if "converged" not in self._warned:
                self._warned.add("converged")
                logger.info("[%s] training has converged; update() does nothing", self.name)
            return losses
        loss, converged = self.trainer.train(self._training_docs(examples))
        losses[self.name] += loss
        if converged:
            history = self.progress["error_history"]
            msg.info(
                f"[{self.name}] SVM training converged after {len(history)} epochs "
                f"(training error {history[-1]:.4f}, previous {history[-2]:.4f}, delta "
                f"{self.cfg['delta']}); further updates are no-ops"
            )
        return losses

    def _training_docs(self, examples: Iterable[Example]):
        """The trainer's docs: (rows, gold heads, gold classes, bounds) of
        every example with learnable sentences."""
        classes_of = training_scan.GoldClasses(self.inventory["labels"], self.inventory["classes"])
        for eg in examples:
            gold = list(self.training_trees(eg))
            if not gold:
                continue
            self.check_tags(eg.predicted)
            gold_heads, gold_classes, bounds = doc_targets(
                gold, len(eg.predicted), classes_of, self._warn_once, self.name)
            if len(bounds):
                yield self._rows(eg.predicted), gold_heads, gold_classes, bounds

    # -- prediction ---------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]):
        """Parse a batch: the docs' words are encoded and parsed together (one
        numpy pass and one nogil call per batch). Returns, per doc, its
        sentence bounds and the (HEAD, DEP) array to write, or None."""
        model = self._prediction_model()
        docs = list(docs)
        attrs = [LOWER, *self.tag_attrs, SENT_START]
        arrays, all_bounds, per_doc = [], [], []
        offset = 0
        checked = False
        for doc in docs:
            if len(doc) == 0:
                per_doc.append((offset, []))
                continue
            array = doc.to_array(attrs).reshape((-1, 3))
            bounds = self.sentence_bounds(doc, array[:, 2])
            per_doc.append((offset, bounds))
            if not checked:  # the first doc of each batch
                self.check_tags(doc)
                checked = True
            arrays.append(array[:, :2])
            all_bounds.extend((start + offset, end + offset) for start, end in bounds)
            offset += len(doc)
        if not arrays:
            return [(bounds, None) for _, bounds in per_doc]
        bounds_array = numpy.array(all_bounds, dtype="int32")
        heads, labels = model.parse(numpy.concatenate(arrays).astype("uint64"), bounds_array)
        # (HEAD, DEP) rows for the whole batch: heads relative to each token
        starts = numpy.repeat(bounds_array[:, 0], bounds_array[:, 1] - bounds_array[:, 0])
        positions = numpy.arange(offset, dtype="int64")
        relative = numpy.where(heads == 0, 0, starts + heads - 1 - positions)
        label_ids, decorated = self._label_arrays()
        rows = numpy.empty((offset, 2), dtype="uint64")
        rows[:, 0] = relative.astype("uint64")
        rows[:, 1] = label_ids[labels]  # -1 -> the empty label
        lifted = decorated[labels]
        return [
            (bounds, (rows[start : start + len(doc)], bool(lifted[start : start + len(doc)].any())))
            if bounds else (bounds, None)
            for doc, (start, bounds) in zip(docs, per_doc)
        ]

    def _label_arrays(self):
        """String ids of the labels (index -1 = no label) and which are
        decorated by pseudo-projective lifting."""
        if self._label_cache is None or self._label_cache[0] != self.inventory["labels"]:
            labels = list(self.inventory["labels"])
            ids = self.label_string_ids(labels)
            decorated = numpy.array([nonproj.DELIMITER in l for l in labels] + [False])
            self._label_cache = (labels, ids, decorated)
        return self._label_cache[1], self._label_cache[2]

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        for doc, (bounds, parse) in zip(docs, predictions):
            if not bounds:
                continue
            rows, lifted = parse
            doc.from_array(HEAD_DEP, rows)
            if lifted:
                nonproj.deprojectivize(doc)

    # -- serialization ----------------------------------------------------------
    def _saved_cfg(self) -> dict:
        self._require_initialized()
        return {
            **self._format_header(),
            "settings": self.cfg,
            "inventory": self.inventory,
            "progress": self.progress,
        }

    def _serial_parts(self) -> Dict[str, Callable[[], bytes]]:
        return {
            "cfg": lambda: serialization.dump_json(self._saved_cfg()),
            "weights.npz": lambda: serialization.dump_sparse_rows(
                self._prediction_model().svm.table, self._prediction_model().svm.row_index
            ),
            "lexicon.npz": lambda: serialization.dump_arrays(
                vocab=self.vocabulary, valence=self.valence, pairs=self.word_pairs
            ),
        }

    def _load_parts(self, parts: Dict[str, bytes], where: Callable[[str], str]) -> None:
        """Read everything first, check it, then replace the component's state
        (a failed load changes nothing). An absent part (excluded) keeps the
        component's own; a component without a model needs all of them."""
        if "cfg" in parts:
            saved = serialization.load_cfg(parts["cfg"], where("cfg"))
            self._check_format(saved, where("cfg"))
            settings, inventory, progress = read_cfg(saved, where("cfg"))
            for key in MODEL_SETTINGS:
                if settings[key] != self.cfg[key]:
                    raise ValueError(
                        f"[{self.name}] {where('cfg')} was trained with {key} = {settings[key]!r} "
                        f"but the config asks for {self.cfg[key]!r}"
                    )
        elif self.is_initialized:
            settings, inventory, progress = self.cfg, self.inventory, self.progress
        else:
            raise ModelDataError(f"{where('cfg')}: missing (the saved component is incomplete)")
        shape = (settings["n_buckets"], len(inventory["classes"]))
        pred_svm, lexicon = read_arrays(parts, shape, settings, progress, where)
        if pred_svm is None:
            if not self.is_initialized:
                self._require_part(parts, WEIGHTS_PART, where)
            pred_svm = self._prediction_model().svm
            if (pred_svm.n_buckets, pred_svm.n_classes) != shape:
                raise ValueError(
                    f"[{self.name}] the component's weights ({pred_svm.n_buckets}, "
                    f"{pred_svm.n_classes}) do not fit the loaded settings and classes {shape}: "
                    "load the weights as well"
                )
        if lexicon is None:
            if not self.is_initialized:
                self._require_part(parts, LEXICON_PART, where)
            lexicon = {"vocab": self.vocabulary, "valence": self.valence, "pairs": self.word_pairs}
        vocab_ids, valence, pairs = checked_lexicon(lexicon, inventory, where(LEXICON_PART))
        # everything read and checked: replace the state
        keep_svm = pred_svm is self.transition.svm and self.trainer.has_svm
        self.cfg.update(settings)
        self.transition = TransitionModel(self.cfg, inventory, (vocab_ids, valence, pairs), pred_svm)
        # without the SVMs kept, they are built from the weights when training goes on
        self.trainer = TransitionTrainer(self.transition, progress,
                                         self.trainer.svm if keep_svm else None)
        self._label_cache = None

    def _restore_pickled(self, state: dict, model: Optional[bytes]) -> None:
        self.transition = TransitionModel(state["cfg"])  # replaced when model bytes load
        self.trainer = TransitionTrainer(self.transition)
        super()._restore_pickled(state, model)

"""The ``arcstandard_svm`` pipeline component: greedy arc-standard parsing
with a one-vs-rest linear SVM oracle.

Follows Choo & Shivaditya (the Cornell CS 5740 report, 2020): an
arc-standard transition system (Nivre 2008) whose next transition is the
best-scoring valid one under one binary linear SVM per transition class,
trained by sub-gradient descent (step 1/(lambda t)) on the configurations of
the static oracle, with the seed's feature set (``transition/features.pyx``),
lower-cased words and a rare-word cut-off. Differences from the seed:

* labeled: the classes are SHIFT, LEFT-ARC(label) and RIGHT-ARC(label);
* non-projective training trees are lifted (pseudo-projective parsing, Nivre
  & Nilsson 2005, spaCy's ``projectivize``/``deprojectivize`` with the HEAD
  label encoding) so that the parser can output non-projective trees;
  ``nonprojective = "drop"`` skips them instead, as the seed does;
* ``spacy train`` calls ``update(batch)`` repeatedly instead of one batch
  optimization: ``initialize()`` scans the training data once (vocabulary
  and rare-word cut-off, valence averages, the N most frequent word pairs,
  labels, and the number of oracle configurations that makes one epoch),
  ``update()`` takes one SVM step per oracle configuration (t keeps counting
  across calls), and every time the number of configurations seen reaches
  one epoch the epoch's training error (share of configurations whose best
  valid class was not the oracle's, measured before each step) is compared
  with the previous epoch's; when it fell by less than ``delta`` training has
  converged and further updates do nothing.

Input: words and the POS column ``tag_column`` (XPOS in ``token.tag`` as in
the seed, or UPOS in ``token.pos``); sentences as for ``mst_parser``.

State and saved parts (model format 2): ``arcstandard_state``; the gold trees it
learns from and its per-doc targets: ``arcstandard_gold``.
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
from ..transition.features import group_mask
from ..transition.parser import ArcStandardModel
from ..transition.svm import OneVsRestSVM
from ..transition.svm import _rebuild as rebuild_svm
from . import serialization
from .arcstandard_gold import doc_targets, learnable_trees
from .arcstandard_settings import DEFAULT_CONFIG, MODEL_SETTINGS, SETTINGS, checked_settings
from .arcstandard_state import (
    LEGACY_ARRAYS,
    MOVES,
    PART_NAMES,
    checked_lexicon,
    end_epoch,
    empty_inventory,
    empty_lexicon,
    fresh_progress,
    read_arrays,
    read_cfg,
)
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
def make_arcstandard_svm(
    nlp: Language,
    name: str,
    lam: float,
    delta: float,
    feature_groups: List[str],
    word_distance: str,
    word_pair_limit: int,
    rare_word_cutoff: int,
    average: bool,
    tag_column: str,
    n_buckets: int,
    nonprojective: str,
    min_lifted_label_count: int,
    max_sentence_length: int,
    scorer: Optional[Callable],
):
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
    return ArcStandardSVM(nlp.vocab, name, **settings)


class ArcStandardSVM(DependencyPipe):
    """Greedy arc-standard dependency parser with a one-vs-rest SVM oracle."""

    FORMAT_VERSION = FORMAT_VERSION
    READS_FORMATS = (1, 2)
    LEGACY_PARTS = LEGACY_ARRAYS
    # Rebuilt by from_bytes when unpickling (pickling goes through to_bytes).
    TRANSIENT_ATTRS = ("_svm", "_model", "_pred_model", "_pred_svm", "_label_cache",
                       "_vocab_ids", "_valence", "_pairs")

    def __init__(
        self,
        vocab: Vocab,
        name: str = "arcstandard_svm",
        *,
        scorer: Optional[Callable] = score_parse,
        **settings,
    ):
        """Settings (the factory's arguments) left out take ``DEFAULT_CONFIG``'s values."""
        unknown = set(settings) - set(SETTINGS)
        if unknown:
            raise TypeError(f"[{name}] unknown settings: {', '.join(sorted(unknown))}")
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        self.cfg = checked_settings(name, **{key: settings.get(key, DEFAULT_CONFIG[key])
                                             for key in SETTINGS})
        self.inventory = empty_inventory()
        self.progress = fresh_progress()
        self._set_lexicon(*empty_lexicon())
        self._svm: Optional[OneVsRestSVM] = None
        self._model: Optional[ArcStandardModel] = None
        self._pred_model: Optional[ArcStandardModel] = None
        # what the parser predicts with: the prediction weights as a dense
        # SVM, or (after loading) a compact one of the non-zero rows
        self._pred_svm: Optional[OneVsRestSVM] = None
        self._label_cache = None
        self._counts = Counter()
        self._warned = set()

    # -- spaCy training-loop protocol (as mst_parser) ---------------------
    model = True

    def finish_update(self, sgd) -> None:
        pass

    @property
    def is_initialized(self) -> bool:
        return self._svm is not None or self._pred_svm is not None

    # -- labels, classes, lexicon --------------------------------------------
    @property
    def label_data(self) -> List[str]:
        return list(self.inventory["labels"])

    @property
    def classes(self) -> List[Tuple[str, Optional[str]]]:
        """("SHIFT", None), ("LEFT-ARC", label), ("RIGHT-ARC", label), ..."""
        names = {"S": "SHIFT", "L": "LEFT-ARC", "R": "RIGHT-ARC"}
        labels = self.inventory["labels"]
        return [(names[m], labels[l] if l >= 0 else None) for m, l in self.inventory["classes"]]

    @property
    def converged(self) -> bool:
        return bool(self.progress["converged"])

    @property
    def vocabulary(self) -> numpy.ndarray:
        """The lower-cased word ids (string store hashes) above the rare-word
        cut-off, sorted; other words are UNK."""
        return self._vocab_ids

    @property
    def valence(self) -> numpy.ndarray:
        """(2, len(vocabulary)) float32: the average number of left and right
        dependents of each vocabulary word in the training trees."""
        return self._valence

    @property
    def word_pairs(self) -> numpy.ndarray:
        """The sorted hashed (sigma0 word, beta0 word) pairs the pair feature
        fires for."""
        return self._pairs

    def _set_lexicon(self, vocab_ids, valence, pairs) -> None:
        self._vocab_ids = vocab_ids
        self._valence = valence
        self._pairs = pairs

    @property
    def tag_attrs(self) -> Tuple[str, ...]:
        return TAG_COLUMN_ATTRS[self.cfg["tag_column"]]

    # -- encoding -----------------------------------------------------------
    def _encode(self, doc: Doc) -> Tuple[numpy.ndarray, ...]:
        """Word ids after the rare-word cut-off, tag ids and valence of every
        token of doc."""
        array = doc.to_array([LOWER, *self.tag_attrs]).astype("uint64", copy=False)
        return self._encode_array(array.reshape((-1, 2)))

    def _encode_array(self, array: numpy.ndarray) -> Tuple[numpy.ndarray, ...]:
        """As _encode, for rows (LOWER, tag) of one or more docs."""
        tags = numpy.ascontiguousarray(array[:, 1])
        words, known, pos = self._map_words(array[:, 0])
        unk_dl, unk_dr = self.inventory["unk_valence"]
        if self._vocab_ids.shape[0]:
            dl = numpy.where(known, self._valence[0][pos], unk_dl).astype("float32")
            dr = numpy.where(known, self._valence[1][pos], unk_dr).astype("float32")
        else:
            dl = numpy.full(words.shape[0], unk_dl, dtype="float32")
            dr = numpy.full(words.shape[0], unk_dr, dtype="float32")
        return words, tags, dl, dr

    def _map_words(self, lower: numpy.ndarray):
        """(word ids with words below the cut-off as UNK, known mask,
        vocabulary index)."""
        return training_scan.map_words(self._vocab_ids, lower)

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
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        """Scan the training examples: vocabulary (rare-word cut-off),
        valence averages, the most frequent word pairs, labels and transition
        classes, and the number of oracle configurations per epoch; then
        allocate zero SVMs."""
        validate_get_examples(get_examples, "ArcStandardSVM.initialize")
        inventory = empty_inventory()
        self.inventory = inventory  # lifted_labels None: keep every decoration for now
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
        found, vocab_ids, valence, pairs = training_scan.scan(
            sentences, self.cfg, labels, nonproj.DELIMITER)
        inventory.update(found)
        self._set_lexicon(vocab_ids, valence,
                          numpy.zeros(0, dtype="uint64") if pairs is None else pairs)
        inventory["n_nonprojective_trees"] = self._counts["nonprojective"]
        self.progress = fresh_progress()
        self._svm = OneVsRestSVM(
            self.cfg["n_buckets"], len(inventory["classes"]), self.cfg["lam"], self.cfg["average"]
        )
        self._model = self._pred_model = self._pred_svm = None

    def _require_initialized(self) -> None:
        if not self.is_initialized:
            raise ValueError(
                f"[{self.name}] the component is not initialized: call nlp.initialize() "
                "or load a trained pipeline before parsing"
            )

    def _make_model(self, svm: OneVsRestSVM) -> ArcStandardModel:
        inventory = self.inventory
        root = inventory["root_label"]
        root_id = inventory["labels"].index(root) if root in inventory["labels"] else -1
        return ArcStandardModel(
            svm,
            numpy.array([MOVES[m] for m, _ in inventory["classes"]], dtype="int8"),
            numpy.array([l for _, l in inventory["classes"]], dtype="int32"),
            root_id,
            group_mask(self.cfg["feature_groups"], self.cfg["word_distance"]),
            self._pairs,
        )

    @property
    def svm(self) -> OneVsRestSVM:
        """The trainable SVMs (the running sums S and their averaging state).
        After loading they are built from the loaded weights on first use
        (warm start: S = w lambda t with the saved t, averaging restarted)."""
        if self._svm is None:
            self._require_initialized()
            weights = self._pred_svm.dense_table()
            svm = OneVsRestSVM(weights.shape[0], weights.shape[1], self.cfg["lam"],
                               self.cfg["average"])
            svm.set_weights(weights, max(1, int(self.progress["svm_t"])))
            self._svm = svm
        return self._svm

    @property
    def transition_model(self) -> ArcStandardModel:
        """The model that training updates (its SVMs hold the running sums)."""
        if self._model is None:
            self._model = self._make_model(self.svm)
        return self._model

    def prediction_weights(self) -> numpy.ndarray:
        """The weights w the parser predicts with ((n_buckets, n_classes)
        float32): the average of the SVM iterates with ``average``, else the
        last iterate; computed once after each round of updates (a new
        array if the loaded parser keeps only the non-zero rows)."""
        return self._prediction_svm().dense_table()

    def _prediction_svm(self) -> OneVsRestSVM:
        if self._pred_svm is None:
            self._require_initialized()
            weights = self._svm.prediction_weights()
            self._pred_svm = rebuild_svm(
                weights.shape[0], weights.shape[1], self.cfg["lam"],
                {"table": weights, "t": max(1, int(self.progress["svm_t"])),
                 "lam": self.cfg["lam"]},
            )
        return self._pred_svm

    @property
    def predictor(self) -> ArcStandardModel:
        if self._pred_model is None:
            self._pred_model = self._make_model(self._prediction_svm())
        return self._pred_model

    # -- training ---------------------------------------------------------------
    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """One SVM step per oracle configuration of every gold sentence. The
        loss is the number of configurations whose best valid transition was
        not the oracle's (before the step). Once the stopping rule has fired
        this does nothing."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "ArcStandardSVM.update")
        self._require_initialized()
        if self.progress["converged"]:
            if "converged" not in self._warned:
                self._warned.add("converged")
                logger.info("[%s] training has converged; update() does nothing", self.name)
            return losses
        model = self.transition_model
        self._pred_model = self._pred_svm = None
        classes_of = training_scan.GoldClasses(self.inventory["labels"], self.inventory["classes"])
        for eg in examples:
            gold = list(self.training_trees(eg))
            if not gold:
                continue
            self.check_tags(eg.predicted)
            gold_heads, gold_classes, bounds = doc_targets(
                gold, len(eg.predicted), classes_of, self._warn_once, self.name)
            if not len(bounds):
                continue
            words, tags, dl, dr = self._encode(eg.predicted)
            n_configs, n_wrong, _ = model.train_doc(
                words, tags, dl, dr, bounds, gold_heads, gold_classes
            )
            losses[self.name] += n_wrong
            self.progress["svm_t"] = int(model.svm.t)
            epoch = self.progress["epoch_progress"]
            epoch[0] += n_configs
            epoch[1] += n_wrong
            if epoch[0] >= self.inventory["epoch_configs"] > 0:
                self._end_epoch()
                if self.progress["converged"]:
                    break
        return losses

    def _end_epoch(self) -> None:
        """Apply the stopping rule (``arcstandard_state.end_epoch``)."""
        if end_epoch(self.progress, self.cfg["delta"]):
            history = self.progress["error_history"]
            msg.info(
                f"[{self.name}] SVM training converged after {len(history)} epochs "
                f"(training error {history[-1]:.4f}, previous {history[-2]:.4f}, delta "
                f"{self.cfg['delta']}); further updates are no-ops"
            )

    # -- prediction ---------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]):
        """Parse a batch: the docs' words are encoded and parsed together (one
        numpy pass and one nogil call per batch). Returns, per doc, its
        sentence bounds and the (HEAD, DEP) array to write, or None."""
        model = self.predictor
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
        words, tags, dl, dr = self._encode_array(numpy.concatenate(arrays).astype("uint64"))
        bounds_array = numpy.array(all_bounds, dtype="int32")
        heads, labels = model.parse_doc(words, tags, dl, dr, bounds_array)
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
            ids = numpy.array([self.vocab.strings.add(l) for l in labels] + [0], dtype="uint64")
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
                self._prediction_svm().table, self._prediction_svm().row_index
            ),
            "lexicon.npz": lambda: serialization.dump_arrays(
                vocab=self._vocab_ids, valence=self._valence, pairs=self._pairs
            ),
        }

    def _load_parts(self, parts: Dict[str, bytes], where: Callable[[str], str]) -> None:
        """Read everything first, check it, then replace the component's state
        (a failed load changes nothing). An absent part (excluded) keeps the
        component's own; a component without a model needs all of them."""
        if "cfg" in parts:
            saved = parts["cfg"]
            if not isinstance(saved, dict):  # a dict: format 1 bytes (msgpack)
                saved = serialization.load_json(saved, where("cfg"))
            self._check_format(saved, where("cfg"))
            version = saved["format_version"]
            settings, inventory, progress = read_cfg(saved, where("cfg"))
            for key in MODEL_SETTINGS:
                if settings[key] != self.cfg[key]:
                    raise ValueError(
                        f"[{self.name}] {where('cfg')} was trained with {key} = {settings[key]!r} "
                        f"but the config asks for {self.cfg[key]!r}"
                    )
        elif self.is_initialized:
            version = self.FORMAT_VERSION
            settings, inventory, progress = self.cfg, self.inventory, self.progress
        else:
            raise ModelDataError(f"{where('cfg')}: missing (the saved component is incomplete)")
        shape = (settings["n_buckets"], len(inventory["classes"]))
        pred_svm, lexicon = read_arrays(parts, version, shape, settings, progress, where)
        names = PART_NAMES[min(version, 2)]
        if pred_svm is None:
            if not self.is_initialized:
                self._require_part(parts, names["weights"], where)
            pred_svm = self._prediction_svm()
            if (pred_svm.n_buckets, pred_svm.n_classes) != shape:
                raise ValueError(
                    f"[{self.name}] the component's weights ({pred_svm.n_buckets}, "
                    f"{pred_svm.n_classes}) do not fit the loaded settings and classes {shape}: "
                    "load the weights as well"
                )
        if lexicon is None:
            if not self.is_initialized:
                self._require_part(parts, names["lexicon"], where)
            lexicon = {"vocab": self._vocab_ids, "valence": self._valence, "pairs": self._pairs}
        vocab_ids, valence, pairs = checked_lexicon(lexicon, inventory, where(names["lexicon"]))
        # everything read and checked: replace the state
        keep_svm = pred_svm is self._pred_svm and self._svm is not None
        self.cfg.update(settings)
        self.inventory = inventory
        self.progress = progress
        self._set_lexicon(vocab_ids, valence, pairs)
        if not keep_svm:
            self._svm = None  # built from the weights when training goes on
        self._pred_svm = pred_svm
        self._model = self._pred_model = None
        self._label_cache = None

    def _restore_pickled(self, state: dict, model: Optional[bytes]) -> None:
        super()._restore_pickled(state, model)
        if self._vocab_ids is None:  # pickled before initialize()
            self._set_lexicon(*empty_lexicon())


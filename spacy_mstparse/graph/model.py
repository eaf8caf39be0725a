"""``GraphModel``: the graph-based dependency parser without spaCy.

It holds the feature extractors (first-order arcs, McDonald et al. 2005
Table 1; adjacent siblings for ``order = 2``, McDonald & Pereira 2006;
siblings and grandparents for ``order = 3``, Carreras 2007 / Koo & Collins
2010, decoded over arcs pruned to the ``GRAND_KEEP_HEADS`` best heads of
every word, in training too: the exact chart is O(n^4) unpruned), the
decoder name (``decoders.dispatch.DECODERS``), the second-stage arc labeler
(McDonald et al. 2006) with its label inventory, and the prediction weights
(float32 arc and label vectors). It scores an encoded ``Sentence``, decodes
(1-best or k-best, projective or not, first to third order), labels the
tree, parses batches (in C over ``n_threads`` threads, ``batch.pyx``), and
converts itself to and from plain arrays and a JSON-able settings dict.
Training state (weight tables, learner) lives in ``training.GraphTrainer``.

With ``quantize_weights`` the arc weights it predicts with are 8-bit codes
into a 256-value codebook (``features.weights``), derived from the float
weights when they are installed: a 4x smaller table, so fewer cache misses
in arc scoring. Saved models keep the float weights.

Data path: Sentence -> ``scores`` (``Factors``: arc matrix, sibling and
grandparent arrays by order) -> ``decode`` (heads, ``decoders.dispatch``) ->
``label`` (label ids).
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

from ..decoders.dispatch import DECODERS, Factors, decode, serves
from ..decoders.pruning import prune
from ..features.arc_filter import ArcFilter
from ..features.config import FeatureConfig
from ..features.grandparent import GrandparentFeatures
from ..features.second_order import SiblingFeatures
from ..features.weights import quantize
from ..learners.sparse_weights import NO_COMPACTION, check_compaction, compact
from ..labeler.arc_labeler import LATEST_VERSION as LATEST_LABELER, ArcLabeler
from ..labeler.chain_marginals import label_marginals, label_marginals_at
from .batch import FIRST_PASS_WIDTH, BatchParse
from .final_word import attach_final, fit_final_tags


class GraphModel:
    """Scores, decodes and labels sentences with fixed prediction weights.
    (Label restrictions: ``restriction_arrays`` / ``set_restriction_arrays``;
    the arc filter: ``fit_arc_filter`` / ``arc_filter_arrays`` /
    ``set_arc_filter``.)

    features: the ``FeatureConfig`` (first-order extractor, table size).
    order: 1 (arcs), 2 (arcs and adjacent siblings) or 3 (arcs, adjacent
        siblings and grandparents; projective decoders only).
    decoder: a name of ``DECODERS``.
    labels: the label inventory; ``root_label`` the label of the root word.
    label_buckets: rows of the labeler's hashed table.
    labeler_version: the labeler's version (``labeler.arc_labeler``; 1 for
        models saved before version 2 existed).
    quantize_weights: predict with 8-bit arc weights.
    compaction: (arc density, label density, levels): the weights installed
        keep at most that share of their table non-zero (the largest
        magnitudes) and, with levels < 127, are rounded to that many
        magnitudes per sign (``learners.sparse_weights.compact``); smaller
        saved models. (1.0, 1.0, 127): none.
    The arc filter (``fit_arc_filter``, ``features.arc_filter``): in
        prediction (while ``filter_arcs``, a runtime setting), arcs longer
        than the training trees show for their tag pair and direction are
        not scored.
    The final-word rule (``fit_prediction_rules``, ``final_word``): in the best
        tree of a parse without constraints (while ``final_to_root``, a
        runtime setting), a sentence-final word whose tag the training trees
        attach to the root word is attached to the decoded tree's root word.
    keep_heads: arc pruning in prediction (``decoders.pruning``; 0 = none):
        only the ``keep_heads`` best heads of every word are kept, by the
        first-pass scores at order 1 (the other arcs are not fully scored),
        at order 2 by the first-pass scores (``FIRST_PASS_WIDTH * keep_heads``
        heads kept) and then the full arc scores of those (the sibling and
        stop factors of pruned arcs are skipped); the plain parse only, not
        probabilities, n-best lists or constraints (``analysis.analyse``).
        Both are runtime settings, not part of ``settings()``: the float
        weights define the model.
    """

    LATEST_LABELER = LATEST_LABELER   # the labeler version new models get
    # Order 3: heads kept per word (by arc score) when keep_heads is 0, in
    # training and prediction. TurboParser keeps at most 10 by a separate
    # first-order pruner; ranked by this model's own arc part, 10 cost 1.3
    # UAS on EWT dev against 30 (benchmarks/results/grandparents_keep30.json).
    GRAND_KEEP_HEADS = 30

    def __init__(
        self,
        features: FeatureConfig,
        *,
        order: int = 1,
        decoder: str = "eisner",
        labels: Sequence[str] = (),
        root_label: Optional[str] = None,
        label_buckets: int = 2**17,
        labeler_version: int = 1,
        quantize_weights: bool = False,
        keep_heads: int = 0,
        compaction: Tuple[float, float, int] = NO_COMPACTION,
    ):
        if not features.is_resolved:
            raise ValueError("the features' \"auto\" settings must be chosen first "
                             "(FeatureConfig.resolve)")
        self.check_settings(order, decoder, (), features.sibling_stops)
        self.features = features
        self.first_order = features.first_order   # every arc (training)
        self.arc_filter: Optional[ArcFilter] = None
        self._filtered = features.first_order     # the same with the arc filter
        self.filter_arcs = True   # runtime: predict with the arc filter, if there is one
        self.final_tags = numpy.zeros(0, dtype="uint64")   # the final-word rule (none)
        self.final_to_root = True   # runtime: apply the final-word rule, if there is one
        self.order = int(order)
        self.decoder = decoder
        self.sibling = (SiblingFeatures(features.n_buckets, features.n_tagsets,
                                        features.sibling_stops) if order >= 2 else None)
        self.grandparent = (GrandparentFeatures(features.n_buckets, features.n_tagsets)
                            if order == 3 else None)
        self.labels = list(labels)
        self.root_label = root_label
        self.label_buckets = int(label_buckets)
        self.labeler_version = int(labeler_version)
        self.root_label_id = self.labels.index(root_label) if root_label in self.labels else -1
        self.labeler = (
            ArcLabeler(self.label_buckets, len(self.labels), features.reads_morph,
                       self.labeler_version)
            if self.labels else None
        )
        self.arc_weights: Optional[numpy.ndarray] = None
        self.label_weights: Optional[numpy.ndarray] = None
        self.quantize_weights = bool(quantize_weights)
        self.keep_heads = int(keep_heads)
        self.compaction = check_compaction(compaction)
        self._quantized = None

    # -- sizes and labels ------------------------------------------------------
    @property
    def n_arc_weights(self) -> int:
        return int(self.features.n_buckets)

    @property
    def n_label_weights(self) -> int:
        return self.labeler.n_weights if self.labeler is not None else 0


    @property
    def has_weights(self) -> bool:
        return self.arc_weights is not None

    def set_weights(self, arc: numpy.ndarray, label: numpy.ndarray) -> None:
        """Install prediction weights (float32, checked against the sizes),
        compacted as ``compaction`` says (``sparse_weights.compact``: which
        leaves compacted weights as they are)."""
        arc = numpy.ascontiguousarray(arc, dtype="float32").reshape(-1)
        label = numpy.ascontiguousarray(label, dtype="float32").reshape(-1)
        if arc.shape[0] != self.n_arc_weights or label.shape[0] != self.n_label_weights:
            raise ValueError(
                f"weights of sizes {arc.shape[0]} / {label.shape[0]} do not fit this model "
                f"({self.n_arc_weights} arc weights, {self.n_label_weights} label weights)"
            )
        arc_density, label_density, levels = self.compaction
        self.arc_weights = compact(arc, arc_density, levels)
        self.label_weights = compact(label, label_density, levels)
        self._quantized = None

    @property
    def prediction_arc_weights(self):
        """The arc weights prediction reads: ``arc_weights``, or with
        ``quantize_weights`` their ``QuantizedWeights`` (derived once per
        installed weight vector)."""
        if not self.quantize_weights or self.arc_weights is None:
            return self.arc_weights
        if self._quantized is None:
            self._quantized = quantize(self.arc_weights)
        return self._quantized

    @staticmethod
    def check_settings(order: int, decoder: str, other_decoders: Tuple[str, ...] = (),
                       sibling_stops: bool = False) -> None:
        """ValueError unless ``order`` and ``decoder`` (a name of ``DECODERS``
        or of ``other_decoders``, e.g. the component's "auto") go together,
        and the features' ``sibling_stops`` with the order."""
        if decoder not in DECODERS and decoder not in other_decoders:
            raise ValueError(f"decoder must be one of {sorted(DECODERS) + list(other_decoders)}, "
                             f"got {decoder!r}")
        if order not in (1, 2, 3):
            raise ValueError(f"order must be 1, 2 or 3, got {order!r}")
        if decoder in DECODERS and not serves(decoder, order):
            raise ValueError(f"order 3 (grandparents) is decoded projectively only: "
                             f"set decoder = \"eisner\", not {decoder!r}")
        if sibling_stops and order < 2:
            raise ValueError("features.sibling_stops adds stop factors to the sibling model: "
                             "it needs order = 2 or 3 (set it to false for order = 1)")

    # -- scoring, decoding, labelling -------------------------------------------
    def pruning(self, prediction: bool) -> int:
        """Heads kept per word (0: no pruning): ``keep_heads`` in prediction;
        with grandparent factors at least ``GRAND_KEEP_HEADS``, in training too."""
        keep = self.keep_heads if prediction else 0
        return keep or (self.GRAND_KEEP_HEADS if self.grandparent is not None else 0)

    def scores(self, sentence, weights: Optional[numpy.ndarray] = None,
               scale: float = 1.0, pruned: bool = True) -> Factors:
        """The ``Factors`` of one sentence (arc scores; sibling scores from
        order 2; grandparent scores at order 3) under ``weights`` (default:
        the prediction weights, ``prediction_arc_weights``), arcs pruned to
        ``pruning(weights is None and pruned)`` heads per word: at order 1 by
        the first-pass scores, at order 2 by the first-pass scores
        (``FIRST_PASS_WIDTH`` times as many) and then the full arc scores, at
        order 3 by the full arc scores."""
        keep = self.pruning(weights is None and pruned)
        w = self.prediction_arc_weights if weights is None else weights
        first = self.prediction_first_order if weights is None and pruned else self.first_order
        if self.sibling is None:
            return Factors(first.score(sentence, w, scale, keep))
        arc = first.score(
            sentence, w, scale, FIRST_PASS_WIDTH * keep if self.grandparent is None else 0)
        if keep:
            prune(arc, keep)
        sib = self.sibling.score(sentence, w, scale, arc)
        grand = (self.grandparent.score(sentence, w, scale, arc)
                 if self.grandparent is not None else None)
        return Factors(arc, sib, grand)

    def decode(self, factors: Factors, k: int = 1) -> List[numpy.ndarray]:
        """The best tree (or up to k best, best first: ``decoders.dispatch``)."""
        return decode(self.decoder, factors, k)

    def label(self, sentence, heads, weights: Optional[numpy.ndarray] = None,
              scale: float = 1.0) -> numpy.ndarray:
        """Label ids (int32, entry 0 = -1) of the arcs of ``heads``."""
        w = self.label_weights if weights is None else weights
        return self.labeler.predict(sentence, heads, w, self.root_label_id, scale)

    def label_scores(self, sentence, heads) -> numpy.ndarray:
        """Every label's score on every arc of ``heads`` (prediction weights):
        ``ArcLabeler.label_scores``."""
        return self.labeler.label_scores(sentence, heads, self.label_weights, self.root_label_id)

    def label_marginals(self, sentence, heads, temperature: float = 1.0) -> numpy.ndarray:
        """p(label | tree) of every word and label (float64 (n+1, n_labels)):
        the marginals of the labeler's distribution at ``temperature``
        (``labeler.chain_marginals``)."""
        return label_marginals(self.labeler, sentence, heads, self.label_weights,
                               self.root_label_id, temperature)

    def label_marginals_at(self, sentence, heads, temperatures: Sequence[float]) -> List[numpy.ndarray]:
        """``label_marginals`` at each of ``temperatures``, the label scores
        computed once."""
        return label_marginals_at(self.labeler, sentence, heads, self.label_weights,
                                  self.root_label_id, temperatures)

    def fit_label_restrictions(self, gold) -> None:
        """The labels each (head tag, child tag, direction) may take, from the
        gold ``(Sentence, heads, label ids)``: used by labelers that restrict."""
        if self.labeler is not None and self.labeler.uses_restrictions:
            self.labeler.fit_restrictions(gold)

    def restriction_arrays(self) -> Dict[str, numpy.ndarray]:
        """The labeler's label restrictions as ``{"keys", "allowed"}`` arrays
        (empty for labelers without restrictions)."""
        keys, allowed = self.labeler.restrictions()
        return {"keys": keys, "allowed": allowed}

    def set_restriction_arrays(self, arrays: Optional[Dict[str, numpy.ndarray]]) -> None:
        """Install ``restriction_arrays()`` output (None: leave them empty)."""
        if arrays is not None and self.labeler is not None:
            self.labeler.set_restrictions(arrays["keys"], arrays["allowed"])

    def fit_arc_filter(self, gold) -> None:
        """Limit the arcs scored in prediction to the lengths the gold trees
        ``gold`` ((Sentence, heads, ...) items) show for each tag pair and
        direction (``features.arc_filter``)."""
        self.set_arc_filter(ArcFilter.fit((item[0], item[1]) for item in gold))

    def set_arc_filter(self, arc_filter: Optional[ArcFilter]) -> None:
        """Predict scoring only the arcs ``arc_filter`` allows (None, or a
        filter without tags: every arc)."""
        if arc_filter is not None and arc_filter.n_tags == 0:
            arc_filter = None
        self.arc_filter = arc_filter
        self._filtered = self.features.first_order.with_arc_filter(arc_filter)

    def fit_prediction_rules(self, gold, arc_filter: bool = True, final_word: bool = True) -> None:
        """Fit the arc filter and the final-word rule (``final_word``), those
        asked for, on the gold trees ``gold`` ((Sentence, heads, ...) items)."""
        gold = list(gold)
        if arc_filter:
            self.fit_arc_filter(gold)
        if final_word:
            self.set_final_tags(fit_final_tags((item[0], item[1]) for item in gold))

    def set_final_tags(self, tags) -> None:
        """The tags of the final-word rule (empty: no rule)."""
        self.final_tags = numpy.ascontiguousarray(numpy.asarray(tags, dtype="uint64").reshape(-1))

    @property
    def prediction_final_tags(self) -> numpy.ndarray:
        """The final-word rule's tags prediction applies (none while
        ``final_to_root`` is off)."""
        return self.final_tags if self.final_to_root else self.final_tags[:0]

    def finish_tree(self, sentence, heads, arc) -> numpy.ndarray:
        """A decoded best tree after the final-word rule (``arc``: the arc
        scores it was decoded with)."""
        return attach_final(sentence, heads, self.prediction_final_tags, arc)

    @property
    def prediction_first_order(self):
        """The first-order features prediction scores with: with the arc
        filter unless ``filter_arcs`` is off."""
        return self._filtered if self.filter_arcs else self.first_order

    def arc_filter_arrays(self) -> Dict[str, numpy.ndarray]:
        """The arc filter as arrays (``ArcFilter.arrays``; without a filter,
        those of ``ArcFilter.unlimited``)."""
        return (self.arc_filter or ArcFilter.unlimited()).arrays()

    def tree_features(self, sentence, heads) -> numpy.ndarray:
        """Feature ids (uint64, with repeats) of a tree: arcs, siblings for
        order 2, siblings and grandparents for order 3."""
        ids = self.first_order.tree_features(sentence, heads)
        if self.sibling is not None:
            ids = numpy.concatenate([ids, self.sibling.tree_features(sentence, heads)])
        if self.grandparent is not None:
            ids = numpy.concatenate([ids, self.grandparent.tree_features(sentence, heads)])
        return ids

    def parse(self, sentence) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(heads, label ids) of one sentence with the prediction weights."""
        factors = self.scores(sentence)
        heads = self.finish_tree(sentence, self.decode(factors)[0], factors.arc)
        return heads, self.label(sentence, heads)

    def parse_batch(self, sentences, n_threads: int = 1) -> List[Tuple[numpy.ndarray, numpy.ndarray]]:
        """``parse`` of every sentence, in C without the GIL, the sentences
        spread over ``n_threads`` threads (same results for any number)."""
        job = self.batch_parse(sentences)
        job.run(n_threads)
        return job.results()

    def batch_parse(self, sentences) -> BatchParse:
        """``parse_batch`` as a job: ``run(n_threads)`` (from any number of
        Python threads at once), then ``results()``."""
        if not self.has_weights:
            raise ValueError("the model has no weights: train it or load saved weights")
        return BatchParse(list(sentences), self.prediction_first_order, self.sibling,
                          self.grandparent, DECODERS[self.decoder].code, self.prediction_arc_weights,
                          self.labeler, self.label_weights, self.root_label_id,
                          self.pruning(True), self.prediction_final_tags)

    # -- plain data ----------------------------------------------------------------
    def settings(self) -> Dict[str, object]:
        """What, besides the feature config, defines the model (JSON-able)."""
        return {
            "order": self.order,
            "decoder": self.decoder,
            "labels": list(self.labels),
            "root_label": self.root_label,
            "label_buckets": self.label_buckets,
            "labeler_version": self.labeler_version,
        }

    def to_arrays(self) -> Dict[str, numpy.ndarray]:
        if not self.has_weights:
            raise ValueError("the model has no weights to save")
        return {"arc_weights": self.arc_weights, "label_weights": self.label_weights}

    @classmethod
    def from_arrays(cls, features: FeatureConfig, settings: dict, arrays: dict) -> "GraphModel":
        model = cls(features, **settings)
        model.set_weights(arrays["arc_weights"], arrays["label_weights"])
        return model

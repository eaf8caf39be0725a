"""The ``mst_parser`` pipeline component: spaCy glue around ``GraphModel``.

Graph-based dependency parsing (McDonald, Crammer & Pereira 2005; McDonald & Pereira 2006): the
model, its decoders and its one training loop live in ``spacy_mstparse.graph`` (spaCy-free);
this pipe collects the label inventory and picks the ``auto`` decoder at ``initialize``, encodes
Docs into ``Sentence`` arrays (``features.doc_arrays``), writes heads and labels back, scores,
and serializes through ``DependencyPipe``'s table.

What it reads (``mst_inputs``: chosen at ``initialize`` and saved): the words, UPOS / XPOS,
FEATS and lemmas as the features say, with ``supertags`` an ``mst_supertagger``'s
``doc._.supertag_ids``, with ``cluster_bits`` word clusters. Settings: ``mst_parser_settings``.
Sentences: ``doc.sents`` when boundaries are set, else a split after sentence-final
punctuation. A sentence longer than ``max_sentence_length`` words is decoded in chunks, whose
trees are joined into one tree (the root word of each later chunk attaches to the first chunk's
root word, label ``dep``), so every sentence gets exactly one root. Training uses the reference
sentences (gold tokenization needed) and skips, with a warning, sentences longer than
``max_sentence_length``; headless words are unknown heads.
"""
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab

from ..features.arc_filter import ArcFilter
from ..features.config import FeatureConfig
from ..features.doc_arrays import SentenceEncoder
from ..graph import GraphModel, GraphTrainer
from ..graph.replicas import check_replicas, make_trainer
from ..graph.decoder_choice import choose_decoder
from ..scoring import score_parse
from . import (extensions, mst_batches, mst_calibration, mst_explain, mst_inputs, parse_rows,
               serialization as ser)
from .base import SCORE_WEIGHTS, DependencyPipe
from .mst_parser_settings import (DEFAULT_CONFIG, MODEL_SETTINGS, SETTING_TYPES as T, UNSAVED,
                                  check_settings, compaction, config_errors, constraint_policy,
                                  default_setting)

# The saved model (``_serial_parts``). Until the first release only this format
# loads; every change of what is saved bumps it (tests/test_mst_parser_io.py).
FORMAT_VERSION = 11
JOINED_CHUNK_LABEL = "dep"
NOT_IN_CFG = ("features", "scorer", "constraints")   # settings held as objects, not in cfg
RESTRICTIONS, CLUSTERS, ARC_FILTER = "label_restrictions.npz", "clusters.npz", "arc_filter.npz"

@Language.factory(
    "mst_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config=DEFAULT_CONFIG,
    default_score_weights={**SCORE_WEIGHTS, **mst_calibration.SCORE_WEIGHTS},
)
def make_mst_parser(nlp: Language, name: str, decoder: T["decoder"], order: T["order"], learner,
                    features: T["features"], label_buckets: T["label_buckets"], scorer: T["scorer"],
                    max_sentence_length: T["max_sentence_length"], n_best: T["n_best"],
                    nonprojective_threshold: T["nonprojective_threshold"], replicas: T["replicas"],
                    probabilities: T["probabilities"], n_threads: T["n_threads"],
                    quantize_weights: T["quantize_weights"], parallel_batch: T["parallel_batch"],
                    constraints: T["constraints"], keep_heads: T["keep_heads"],
                    filter_arcs: T["filter_arcs"], final_to_root: T["final_to_root"],
                    arc_density: T["arc_density"], label_density: T["label_density"],
                    weight_levels: T["weight_levels"]):
    """Graph-based dependency parser (the settings and their types: mst_parser_settings)."""
    with config_errors(f"components.{name}"):  # checks of several settings together
        return MSTParser(nlp.vocab, **{k: v for k, v in locals().items() if k != "nlp"})


class MSTParser(DependencyPipe):
    """Graph-based (maximum spanning tree) dependency parser with a labeler.
    Settings left out take the factory's defaults."""

    FORMAT_VERSION = FORMAT_VERSION
    TRANSIENT_ATTRS = ("graph", "trainer")

    def __init__(self, vocab: Vocab, name: str = "mst_parser", *, decoder: Optional[str] = None,
                 order: Optional[int] = None, learner=None, features: Optional[FeatureConfig] = None,
                 label_buckets: Optional[int] = None, max_sentence_length: Optional[int] = None,
                 nonprojective_threshold: Optional[float] = None, n_best: Optional[int] = None,
                 scorer: Optional[Callable] = score_parse, probabilities: Optional[bool] = None,
                 n_threads: Optional[int] = None, quantize_weights: Optional[bool] = None,
                 parallel_batch: Optional[int] = None, replicas: Optional[int] = None,
                 constraints: Optional[str] = None, keep_heads: Optional[int] = None,
                 filter_arcs: Optional[bool] = None, final_to_root: Optional[bool] = None,
                 arc_density: Optional[float] = None, label_density: Optional[float] = None,
                 weight_levels: Optional[int] = None):
        # the plain settings given (None: the default), as cfg holds them
        given = {k: v for k, v in locals().items() if k in T and k not in NOT_IN_CFG}
        self.cfg = {k: default_setting(k) if v is None else v for k, v in given.items()}
        self.learner = default_setting("learner") if learner is None else learner
        self.features = default_setting("features") if features is None else features
        check_settings(name, {**self.cfg, "features": self.features}, T)
        try:
            GraphModel.check_settings(self.cfg["order"], self.cfg["decoder"], ("auto",),
                                      self.features.sibling_stops)
            check_replicas(self.learner, self.cfg["replicas"])
            self.constraint_policy = constraint_policy(constraints)  # runtime, not saved
        except ValueError as e:
            raise ValueError(f"[{name}] {e}") from None
        self.cfg.update(resolved_decoder=None, labels=[], root_label=None, temperature=1.0,
                        label_temperature=1.0, calibration=None, feature_choice=None,
                        feature_report=None, final_tags=[])
        self.vocab, self.name = vocab, name
        self.inputs = mst_inputs.ParserInputs(vocab, self.features)
        if self.features.is_resolved:  # nothing to choose from the data
            self.cfg["feature_choice"] = self.inputs.use(self.features)
        self.scorer = scorer
        self.graph: Optional[GraphModel] = None
        self.trainer: Optional[GraphTrainer] = None
        self._fresh = False      # the model's weights are the trainer's current average
        self._calibrated = True
        self._zero_weights = False  # initialized, not yet updated: every distribution uniform
        self._warned = set()

    @property
    def decoder(self) -> str:
        return self.cfg["resolved_decoder"] or self.cfg["decoder"]

    @property
    def order(self) -> int:
        return self.cfg["order"]

    @property
    def tag_attrs(self) -> Tuple[str, ...]:
        return self.inputs.tag_attrs

    @property
    def model_features(self) -> Optional[FeatureConfig]:
        """The features the model reads (the ``auto`` choices made)."""
        return self.inputs.features

    @property
    def encoder(self) -> Optional[SentenceEncoder]:
        return self.inputs.encoder

    @property
    def is_initialized(self) -> bool:
        return self.graph is not None

    calibrated = property(lambda self: self._calibrated, doc="temperatures fit the weights")

    # -- set-up -------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[List[str]] = None,
                   clusters: Optional[str] = None) -> None:
        """Collect the labels and the root label, pick the decoder when it is "auto", start from zero
        weights, give the learner the gold trees. clusters: a paths file, "spacy-lookups-data", "auto"."""
        # read once: the check, the choices, the labels and the gold trees read every example
        if not callable(get_examples):
            validate_get_examples(get_examples, "MSTParser.initialize")   # spaCy's error
        examples = list(get_examples())
        validate_get_examples(lambda: examples, "MSTParser.initialize")
        self.cfg.update(self.inputs.choose(lambda: examples, nlp, self.name, clusters, self.order))
        label_list, root_label = self.label_census(examples, labels)
        self.cfg.update(labels=label_list, root_label=root_label,
                        labeler_version=GraphModel.LATEST_LABELER)
        # (no tag check: annotating components tag the docs of update(), not these)
        gold = list(self.training_sentences(examples, check_tags=False))
        if self.cfg["decoder"] == "auto":
            self.cfg["resolved_decoder"], self.cfg["decoder_choice"] = choose_decoder(
                [heads for _, heads, _ in gold], self.cfg["nonprojective_threshold"], self.order)
        self.graph = self._new_model()
        # tag-keyed prediction rules: the references' tags where taggers tag the docs in update()
        tagged = self.inputs.tags_given(eg.predicted for eg in examples)
        self.graph.fit_prediction_rules(gold if tagged else list(self.training_sentences(
            [Example(eg.reference, eg.reference) for eg in examples], check_tags=False)),
            self.cfg["filter_arcs"], self.cfg["final_to_root"])
        del examples
        self.cfg["final_tags"] = self.graph.final_tags.tolist()
        self.trainer = make_trainer(self.graph, self.learner, self.cfg["replicas"])
        # no label restrictions (labeler 2) keyed on tags that update() will not show
        self.trainer.begin(gold if tagged else [(s, heads) for s, heads, _ in gold])
        # zero weights: uniform distributions at every temperature, nothing to fit yet
        self.cfg.update(temperature=1.0, label_temperature=1.0, calibration=None)
        self._fresh, self._calibrated, self._zero_weights = False, True, True

    def _new_model(self) -> GraphModel:
        return GraphModel(self.model_features, order=self.order, decoder=self.decoder,
                          labels=self.cfg["labels"], root_label=self.cfg["root_label"],
                          label_buckets=self.cfg["label_buckets"], compaction=compaction(self.cfg),
                          labeler_version=self.cfg.get("labeler_version", 1))

    def training_sentences(self, examples, check_tags: bool = True):
        """(Sentence, gold heads, gold label ids) of every usable reference
        sentence; the docs of ``examples`` are encoded together."""
        label_ids = {label: i for i, label in enumerate(self.cfg["labels"])}
        limit = self.cfg["max_sentence_length"]
        usable = []
        for eg in examples:
            gold = []
            for start, heads, deps in self.gold_sentences(eg):
                if len(heads) - 1 > limit:
                    self._warn_once("long", f"[{self.name}] skipping training sentences longer "
                                    f"than max_sentence_length = {limit} words")
                    continue
                gold.append((start, heads, deps))
            if not gold:
                continue
            if check_tags:
                self.check_tags(eg.predicted)
            usable.append((eg.predicted, gold))
        encoded = self.encoder.encode_docs(
            [(doc, [(start, start + len(heads) - 1) for start, heads, _ in gold])
             for doc, gold in usable])
        for (_, gold), sentences in zip(usable, encoded):
            for sentence, (_, heads, deps) in zip(sentences, gold):
                labels = numpy.array([-1] + [label_ids.get(d, -1) for d in deps[1:]], dtype="int32")
                yield sentence, heads, labels

    # -- training -----------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """Train on a batch of examples through the model's training loop. The loss
        is the number of words whose predicted head was wrong before the update."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "MSTParser.update")
        trainer = self.get_trainer()
        trainer.n_threads = self.cfg["n_threads"]  # runtime settings: read at every update
        trainer.parallel_batch = self.cfg["parallel_batch"]
        losses[self.name] += trainer.train(self.training_sentences(examples))
        losses[self.name] += trainer.flush()
        return losses

    def get_trainer(self):
        """The training loop (``GraphTrainer``; ``ReplicaTrainer`` with replicas > 1), made for a loaded
        pipeline from its weights; its tables may change: the pipe recomputes its weights before a parse."""
        self._require_initialized()
        if self.trainer is None:  # a loaded pipeline: warm-start from its weights
            self.trainer = make_trainer(self.graph, self.learner, self.cfg["replicas"],
                                        *self.graph.to_arrays().values())
        self._fresh = self._calibrated = self._zero_weights = False
        return self.trainer

    # -- prediction ----------------------------------------------------------
    def prediction_weights(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The (arc, label) float32 weights the parser predicts with;
        recomputed from the training tables once after each round of updates."""
        self._require_initialized()
        if self.trainer is not None and not self._fresh:
            self.trainer.install_weights()
            self._fresh = True
        for key in ("quantize_weights", "keep_heads", "filter_arcs", "final_to_root"):   # runtime
            setattr(self.graph, key, self.cfg[key])
        return self.graph.arc_weights, self.graph.label_weights

    def predict(self, docs: Iterable[Doc]):
        """Heads and label ids for every sentence (chunk) of every doc."""
        prepared = self.prepare_batch(docs)
        self.parse_prepared(prepared, self.cfg["n_threads"])
        return self.predictions(prepared)

    # the steps of predict (mst_batches), which pipe() overlaps with n_threads > 1
    prepare_batch, parse_prepared = mst_batches.prepare_batch, mst_batches.parse_prepared
    predictions, analyse_doc = staticmethod(mst_batches.predictions), mst_batches.analyse_doc

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        parsed = [(doc, chunks, parses) for doc, (chunks, parses) in zip(docs, predictions)
                  if chunks]
        rows = parse_rows.doc_rows([(len(doc), chunks, parses) for doc, chunks, parses in parsed],
                                   self.label_string_ids(self.cfg["labels"]),
                                   self.vocab.strings.add(JOINED_CHUNK_LABEL))
        annotate = self.cfg["probabilities"] or self.cfg["n_best"] > 1
        for (doc, chunks, parses), doc_rows in zip(parsed, rows):
            doc.from_array(["HEAD", "DEP"], doc_rows)
            if annotate:
                extensions.annotate(self, doc, chunks, parses)

    explain = mst_explain.explain  # (doc, i): why token i got its head and label

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        """Attachment scores and calibration errors; after updates (spaCy's training
        loop on dev) the temperatures are first fitted on the examples; none
        before the first update (zero weights: every distribution uniform)."""
        examples = list(examples)
        scores = super().score(examples, **kwargs)
        if not self._zero_weights:
            scores.update(self.calibrate(examples, fit=not self._calibrated))
        return scores

    def calibrate(self, examples: Iterable[Example], fit: bool = True) -> Dict[str, float]:
        """Fit the temperatures on the examples (their predicted docs as the
        components before the parser leave them; the parser parses them
        here), or with ``fit`` false only measure; the calibration errors."""
        scores = mst_calibration.calibrate_on_examples(self, list(examples), fit)
        self._calibrated = True
        return scores

    # -- serialization (the table) ----------------------------------------------
    def _serial_parts(self) -> Dict[str, Callable[[], bytes]]:
        clusters = {CLUSTERS: lambda: ser.dump_arrays(**self.encoder.clusters.to_arrays())}
        q8 = self.cfg["quantize_weights"]  # 8-bit codes saved (serialization.dump_weight_vector)
        return {**(clusters if (self.model_features or self.features).cluster_bits else {}),
            "cfg": lambda: ser.dump_json({**{k: v for k, v in self.cfg.items() if k not in UNSAVED},
                                          "features": self.features.to_dict(), **self._format_header()}),
            "arc_weights.npz": lambda: ser.dump_weight_vector(self._saved_arc_weights(), q8),
            "label_weights.npz": lambda: ser.dump_weight_vector(self.prediction_weights()[1], q8),
            RESTRICTIONS: lambda: ser.dump_arrays(**self.graph.restriction_arrays()),
            ARC_FILTER: lambda: ser.dump_arrays(**self.graph.arc_filter_arrays()),
        }

    def _saved_arc_weights(self):
        """The arc weights to save: with ``quantize_weights`` the codes
        prediction reads (quantized once per installed weight vector)."""
        self.prediction_weights()
        return self.graph.prediction_arc_weights if self.cfg["quantize_weights"] else \
            self.graph.arc_weights

    def _load_parts(self, parts: Dict[str, bytes], where: Callable[[str], str]) -> None:
        if "cfg" in parts:
            self._load_cfg(ser.load_cfg(parts["cfg"], where("cfg")), where("cfg"))
        ours = self.graph if self.graph is not None and self.graph.has_weights else None
        arrays = {stem: ser.load_weight_vector(parts, stem, where, ours and getattr(ours, stem))
                  for stem in ("arc_weights", "label_weights")}
        restrictions = (ser.load_arrays(parts[RESTRICTIONS], where(RESTRICTIONS), ("keys", "allowed"))
                        if RESTRICTIONS in parts else None)  # excluded or older: keep ours / none
        arc_filter = (ser.load_object(parts[ARC_FILTER], where(ARC_FILTER), ArcFilter, ("tags", "limits"))
                      if ARC_FILTER in parts else None)  # excluded: keep ours
        self.inputs.restore_clusters(parts.get(CLUSTERS), where(CLUSTERS))
        self.graph, old = self._new_model(), self.graph
        try:
            self.graph.set_weights(arrays["arc_weights"], arrays["label_weights"])
            self.graph.set_restriction_arrays(restrictions or (old and old.restriction_arrays()))
            self.graph.set_arc_filter(arc_filter or (old and old.arc_filter))
            self.graph.set_final_tags(self.cfg["final_tags"])
        except ValueError as err:
            raise ser.ModelDataError(f"{where('arc_weights.npz')}: {err}") from None
        self.trainer = None
        self._fresh, self._zero_weights = True, False

    def _load_cfg(self, cfg: dict, where: str) -> None:
        self._check_format(cfg, where)
        saved = cfg.get("features")
        if saved is not None and saved != self.features.to_dict():
            raise ValueError(f"[{self.name}] {where} was trained with features {saved} but "
                             f"the config asks for {self.features.to_dict()}")
        self.cfg.update(feature_choice=self.inputs.restore(cfg.get("feature_choice"), where),
                        feature_report=cfg.get("feature_report"))
        for key in MODEL_SETTINGS:
            if key in cfg and cfg[key] != self.cfg[key]:
                raise ValueError(f"[{self.name}] {where} was trained with {key} = {cfg[key]!r}; it "
                                 f"cannot change after training (the config asks for {self.cfg[key]!r})")
        # Learned: labels, the decoder "auto" chose, temperatures (calibration). Runtime
        # settings (max_sentence_length, probabilities, n_best) keep the config's.
        self.cfg.update({key: cfg[key] for key in (
            "labels", "root_label", "decoder_choice", "nonprojective_share", "temperature",
            "label_temperature", "calibration", "labeler_version", "final_tags") if key in cfg})
        self.cfg["final_tags"] = ser.id_list(self.cfg["final_tags"], where, "final_tags")
        if cfg.get("decoder") == self.cfg["decoder"]:
            self.cfg["resolved_decoder"] = cfg.get("resolved_decoder")

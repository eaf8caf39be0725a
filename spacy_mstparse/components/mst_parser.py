"""The ``mst_parser`` pipeline component: graph-based dependency parsing.

Maximum spanning tree parsing as in McDonald, Crammer & Pereira (2005):
hashed first-order arc features, Eisner (projective) or Chu-Liu-Edmonds
(non-projective, one root word) decoding, trained online by a registered
learner (perceptron, k-best MIRA, PA / PA-I / PA-II, Pegasos-DP). With
``order = 2`` sibling features are added and decoding is second-order
Eisner (projective) or its approximate non-projective extension (McDonald &
Pereira 2006). A second-stage labeler (McDonald et al. 2006) gives each
predicted arc its dependency label.

What it reads: the words, the tag column(s) of the feature config (UPOS in
``token.pos``, XPOS in ``token.tag``) and optionally ``token.morph`` of the
docs it parses; in ``spacy train`` these come either from gold annotation
copied by ``spacy_mstparse.GoldAnnotationsCorpus.v1`` or from taggers earlier
in the pipeline (``annotating_components``).

Sentences: it parses each sentence of ``doc.sents`` when sentence boundaries
are set. Otherwise it falls back to splitting after sentence-final
punctuation (``.``, ``!``, ``?``, ``...``). Either way a "sentence" longer
than ``max_sentence_length`` words is parsed in consecutive chunks of that
length, so decoding is never cubic over a whole long document; each chunk
becomes a sentence with its own root.

Training uses the reference (gold) sentences and needs the predicted and
reference docs to have the same tokenization.
"""
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
import srsly
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import SimpleFrozenList, ensure_path
from spacy.vocab import Vocab

from ..decoders import (
    approximate_nonprojective,
    chu_liu_edmonds,
    eisner,
    eisner_k_best,
    eisner_second_order,
)
from ..decoders.trees import is_projective
from ..features.doc_arrays import SentenceEncoder
from ..features.registry import FeatureConfig
from ..features.second_order import SiblingFeatures
from ..labeler.arc_labeler import ArcLabeler
from ..learners import WeightTable, sparse_difference, sparse_weights
from ..scoring import score_parse
from .base import DependencyPipe

# Importing the registries makes @mst_learners / @mst_features resolvable.
from ..features import registry as _feature_registry  # noqa: F401
from ..learners import registry as _learner_registry  # noqa: F401

# Format 2 saves the label weights as bitmap + non-zero values (about 5% of
# them are non-zero); format 1 (dense label_weights.npy) still loads.
FORMAT_VERSION = 2
READS_FORMATS = (1, 2)
DECODERS = {"eisner": eisner, "chu_liu_edmonds": chu_liu_edmonds}

DEFAULT_CONFIG = {
    "decoder": "eisner",
    "order": 1,
    "learner": {"@mst_learners": "spacy_mstparse.MIRA.v1", "k": 5, "C": None},
    "features": {
        "@mst_features": "spacy_mstparse.FirstOrderFeatures.v2",
        "tag_columns": "both",
        "use_morph": False,
        "n_buckets": 2**22,
        "direction_backoff": True,
    },
    "label_buckets": 2**17,
    "max_sentence_length": 250,
    "nonprojective_threshold": 0.1,
    "scorer": {"@scorers": "spacy_mstparse.parser_scorer.v1"},
}


@Language.factory(
    "mst_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config=DEFAULT_CONFIG,
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "dep_uas_with_punct": None,
        "dep_las_with_punct": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": None,
    },
)
def make_mst_parser(
    nlp: Language,
    name: str,
    decoder: str,
    order: int,
    learner,
    features: FeatureConfig,
    label_buckets: int,
    max_sentence_length: int,
    nonprojective_threshold: float,
    scorer: Optional[Callable],
):
    """Graph-based dependency parser.

    decoder: "eisner" (projective), "chu_liu_edmonds" (non-projective) or
        "auto" (chosen at initialization: Chu-Liu-Edmonds when more than
        ``nonprojective_threshold`` of the training trees are non-projective).
        With ``order = 2`` the non-projective decoder is the approximate
        second-order one (McDonald & Pereira 2006).
    order: 1 (arc-factored) or 2 (arcs plus adjacent-sibling factors).
    learner: a learner from the ``mst_learners`` registry. A learner with
        ``k_best > 1`` (k-best MIRA) is trained on the k best projective trees;
        non-projective decoders give one tree, so it trains with k = 1.
    features: a feature set from the ``mst_features`` registry.
    label_buckets: rows of the labeler's hashed weight table (a power of two).
    max_sentence_length: longest word sequence decoded as one tree.
    """
    return MSTParser(
        nlp.vocab,
        name,
        decoder=decoder,
        order=order,
        learner=learner,
        features=features,
        label_buckets=label_buckets,
        max_sentence_length=max_sentence_length,
        nonprojective_threshold=nonprojective_threshold,
        scorer=scorer,
    )


class MSTParser(DependencyPipe):
    """Graph-based (maximum spanning tree) dependency parser with a labeler."""

    def __init__(
        self,
        vocab: Vocab,
        name: str = "mst_parser",
        *,
        decoder: str = "eisner",
        order: int = 1,
        learner=None,
        features: Optional[FeatureConfig] = None,
        label_buckets: int = 2**17,
        max_sentence_length: int = 250,
        nonprojective_threshold: float = 0.1,
        scorer: Optional[Callable] = score_parse,
    ):
        if decoder not in (*DECODERS, "auto"):
            raise ValueError(
                f"[{name}] decoder must be 'eisner', 'chu_liu_edmonds' or 'auto', got {decoder!r}"
            )
        if order not in (1, 2):
            raise ValueError(f"[{name}] order must be 1 or 2, got {order!r}")
        if max_sentence_length < 1:
            raise ValueError(f"[{name}] max_sentence_length must be >= 1")
        if learner is None:
            from ..learners import MIRA

            learner = MIRA(k=5)
        if features is None:
            features = FeatureConfig("upos", False, 2**22)
        self.vocab = vocab
        self.name = name
        self.learner = learner
        self.features = features
        self.encoder = SentenceEncoder(vocab, features.tag_columns, features.use_morph)
        self.scorer = scorer
        self.cfg = {
            "decoder": decoder,
            "resolved_decoder": None if decoder == "auto" else decoder,
            "order": int(order),
            "labels": [],
            "root_label": None,
            "label_buckets": int(label_buckets),
            "max_sentence_length": int(max_sentence_length),
            "nonprojective_threshold": float(nonprojective_threshold),
        }
        self.sibling = SiblingFeatures(features.n_buckets, features.n_tagsets)
        self.labeler: Optional[ArcLabeler] = None
        self.arc_table: Optional[WeightTable] = None
        self.label_table: Optional[WeightTable] = None
        self._weights: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None
        self._warned = set()

    # -- spaCy training-loop protocol ----------------------------------------
    # The component has no thinc model: its learners update the weights inside
    # update(). spaCy calls finish_update() only when ``model`` is not
    # True/False/None, and logs the loss of pipes that are trainable.
    model = True
    FORMAT_VERSION = FORMAT_VERSION
    READS_FORMATS = READS_FORMATS

    # -- labels -----------------------------------------------------------
    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.cfg["labels"])

    @property
    def decoder(self) -> str:
        return self.cfg["resolved_decoder"] or self.cfg["decoder"]

    def add_label(self, label: str) -> int:
        raise NotImplementedError(
            f"[{self.name}] labels are collected by initialize(); pass them with "
            "[initialize.components.mst_parser.labels] instead of add_label"
        )

    # -- set-up -------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        """Collect the labels and the root label from the training data, pick
        the decoder when it is "auto", and allocate fresh weight tables."""
        validate_get_examples(get_examples, "MSTParser.initialize")
        label_counts: Counter = Counter()
        root_counts: Counter = Counter()
        n_trees = n_nonproj = 0
        for eg in get_examples():
            for _, heads, deps in self._gold_sentences(eg):
                n_trees += 1
                if not is_projective(heads):
                    n_nonproj += 1
                for c in range(1, len(heads)):
                    if deps[c]:
                        label_counts[deps[c]] += 1
                        if heads[c] == 0:
                            root_counts[deps[c]] += 1
        if labels is not None:
            label_list = sorted(set(labels))
        else:
            label_list = sorted(label_counts)
        if not label_list:
            raise ValueError(
                f"[{self.name}] no dependency labels found in the training examples: "
                "the reference docs need heads and deps (is the training corpus parsed?)"
            )
        self.cfg["labels"] = label_list
        self.cfg["root_label"] = root_counts.most_common(1)[0][0] if root_counts else None
        if self.cfg["decoder"] == "auto":
            share = n_nonproj / n_trees if n_trees else 0.0
            chosen = (
                "chu_liu_edmonds" if share > self.cfg["nonprojective_threshold"] else "eisner"
            )
            self.cfg["resolved_decoder"] = chosen
            self.cfg["nonprojective_share"] = share
        self._new_tables()
        # Learners that need the training set up front (the sparseptron's
        # feature groups, the 1-slack SSVM's pass length) get the gold trees.
        begin_training = getattr(self.learner, "begin_training", None)
        if begin_training is not None:
            begin_training(self, self._encoded_gold(get_examples))

    def _encoded_gold(self, get_examples) -> List[Tuple[object, numpy.ndarray]]:
        """(Sentence, gold heads) of every gold training sentence."""
        gold = []
        for eg in get_examples():
            sents = list(self._gold_sentences(eg))
            if sents:
                bounds = [(start, start + len(heads) - 1) for start, heads, _ in sents]
                encoded = self.encoder.encode(eg.predicted, bounds)
                gold.extend((s, heads) for s, (_, heads, _) in zip(encoded, sents))
        return gold

    def _new_tables(self) -> None:
        """Fresh labeler and zero weight tables (training starts here)."""
        n_labels = len(self.cfg["labels"])
        self.labeler = ArcLabeler(self.cfg["label_buckets"], n_labels, self.features.use_morph)
        self.arc_table = WeightTable(self.features.n_buckets)
        self.label_table = WeightTable(self.labeler.n_weights)
        self._weights = None

    def _require_initialized(self) -> None:
        if self.labeler is None:
            raise ValueError(
                f"[{self.name}] the component is not initialized: call nlp.initialize() "
                "or load a trained pipeline before parsing"
            )

    def _require_tables(self) -> None:
        """Training state. A loaded pipeline ships only its final weights;
        training it further warm-starts from them."""
        self._require_initialized()
        if self.arc_table is None:
            self.arc_table = _warm_table(self._weights[0])
            self.label_table = _warm_table(self._weights[1])

    # -- gold data --------------------------------------------------------
    def _gold_sentences(self, eg: Example):
        """Yield (sentence start, gold heads, gold labels) for each reference
        sentence, heads/labels indexed 0..n with the root at 0.

        Sentences with missing or inconsistent gold annotation are skipped with
        a warning (counted, never silently)."""
        ref = eg.reference
        if not ref.has_annotation("DEP"):
            return
        if len(eg.predicted) != len(ref) or any(
            p.text != r.text for p, r in zip(eg.predicted, ref)
        ):
            self._warn_once(
                "tokenization",
                f"[{self.name}] skipping training documents whose tokenization differs from "
                "the reference: mst_parser trains on gold-tokenized text",
            )
            return
        for sent in ref.sents:
            start, end = sent.start, sent.end
            n = end - start
            heads = numpy.full(n + 1, -1, dtype="int32")
            deps: List[Optional[str]] = [None] * (n + 1)
            ok = True
            for i, token in enumerate(sent, 1):
                if not token.has_head():
                    ok = False
                    break
                h = token.head.i
                if h == token.i:
                    heads[i] = 0
                elif start <= h < end:
                    heads[i] = h - start + 1
                else:
                    ok = False
                    break
                deps[i] = token.dep_ or None
            if not ok:
                self._warn_once(
                    "partial",
                    f"[{self.name}] skipping gold sentences with missing heads or heads "
                    "outside the sentence",
                )
                continue
            yield start, heads, deps

    # -- training ---------------------------------------------------------
    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Train on a batch of examples, one online step per sentence (or per
        ``learner.batch_size`` sentences). The loss is the number of words whose
        predicted head was wrong before the update."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "MSTParser.update")
        self._require_tables()
        label_ids = {label: i for i, label in enumerate(self.cfg["labels"])}
        root_label = label_ids.get(self.cfg["root_label"], -1)
        pending = []
        for eg in examples:
            gold = list(self._gold_sentences(eg))
            if not gold:
                continue
            self._check_tags(eg.predicted)
            bounds = [(start, start + len(heads) - 1) for start, heads, _ in gold]
            sentences = self.encoder.encode(eg.predicted, bounds)
            for sentence, (_, heads, deps) in zip(sentences, gold):
                labels = numpy.array(
                    [-1] + [label_ids.get(d, -1) if d else -1 for d in deps[1:]], dtype="int32"
                )
                pending.append((sentence, heads, labels))
                if len(pending) == self.learner.batch_size:
                    losses[self.name] += self._train_batch(pending, root_label)
                    pending = []
        if pending:
            losses[self.name] += self._train_batch(pending, root_label)
        self._weights = None
        return losses

    # -- scoring and decoding (shared by training and prediction) -----------
    @property
    def order(self) -> int:
        return self.cfg["order"]

    def _scores(self, sentence, weights, scale: float = 1.0):
        """Arc scores and, for order 2, sibling scores of one sentence."""
        arc = self.features.first_order.score(sentence, weights, scale)
        sib = self.sibling.score(sentence, weights, scale) if self.order == 2 else None
        return arc, sib

    def _decode(self, arc, sib, k: int = 1) -> List[numpy.ndarray]:
        """The best tree (or the k best projective trees, best first)."""
        if self.decoder == "eisner":
            if k > 1:
                return list(eisner_k_best(arc, sib, k)[0])
            if sib is not None:
                return [eisner_second_order(arc, sib)]
            return [eisner(arc)]
        if sib is not None:
            return [approximate_nonprojective(arc, sib)]
        return [chu_liu_edmonds(arc)]

    def _tree_features(self, sentence, heads: numpy.ndarray) -> numpy.ndarray:
        ids = self.features.first_order.tree_features(sentence, heads)
        note_tree = getattr(self.learner, "note_tree", None)
        if note_tree is not None:  # the sparseptron maps buckets to feature groups
            note_tree(sentence, heads)
        if self.order == 2:
            ids = numpy.concatenate([ids, self.sibling.tree_features(sentence, heads)])
        return ids

    def _train_batch(self, batch, root_label: int) -> float:
        arc_w = self.arc_table.v
        scale = self.arc_table.scale
        k = int(getattr(self.learner, "k_best", 1))
        steps = []
        n_wrong_total = 0
        for sentence, heads, labels in batch:
            scores, sib = self._scores(sentence, arc_w, scale)
            if self.learner.loss_augmented:
                n = len(heads) - 1
                scores += 1.0
                scores[heads[1:], numpy.arange(1, n + 1)] -= 1.0
            trees = self._decode(scores, sib, k)
            constraints = []
            gold_ids = None
            for predicted in trees:
                n_wrong = int(numpy.count_nonzero(predicted[1:] != heads[1:]))
                if n_wrong:
                    if gold_ids is None:
                        gold_ids = self._tree_features(sentence, heads)
                    idx, val = sparse_difference(
                        gold_ids, self._tree_features(sentence, predicted)
                    )
                else:
                    idx, val = numpy.zeros(0, dtype="uint64"), numpy.zeros(0, dtype="float64")
                constraints.append((idx, val, n_wrong))
            n_wrong_total += constraints[0][2]
            # k-best learners get every tree's constraint, the others one.
            steps.append(constraints if k > 1 else constraints[0])
            # Second stage: the labeler learns on the gold tree (averaged
            # multi-class perceptron).
            guess = self.labeler.predict(
                sentence, heads, self.label_table.v, root_label, self.label_table.scale
            )
            lidx, lval, _ = self.labeler.update_vector(sentence, heads, labels, guess)
            if lidx.shape[0]:
                self.label_table.add(lidx, lval, 1.0)
            self.label_table.tick()
        self.learner.step(self.arc_table, steps)
        return float(n_wrong_total)

    def finish_update(self, sgd) -> None:
        # The learners update the weights themselves; nothing to do.
        pass

    # -- prediction -------------------------------------------------------
    def _prediction_weights(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Averaged weights (the learner's choice for Pegasos), computed once
        after each round of updates: O(table size), never per update."""
        if self._weights is None:
            self._require_initialized()
            if getattr(self.learner, "averaged", True):
                arc = self.arc_table.averaged()
            else:
                arc = self.arc_table.current()
            finalize = getattr(self.learner, "finalize_weights", None)
            if finalize is not None:  # e.g. zero the groups outside the budget
                arc = finalize(arc)
            self._weights = (
                numpy.ascontiguousarray(arc, dtype="float32"),
                numpy.ascontiguousarray(self.label_table.averaged(), dtype="float32"),
            )
        return self._weights

    def predict(self, docs: Iterable[Doc]):
        """Heads and label ids for every sentence of every doc."""
        arc_w, label_w = self._prediction_weights()
        root_label = (
            self.cfg["labels"].index(self.cfg["root_label"])
            if self.cfg["root_label"] in self.cfg["labels"]
            else -1
        )
        results = []
        for doc in docs:
            bounds = self.sentence_bounds(doc)
            if bounds:
                self._check_tags(doc)
            parses = []
            for sentence in self.encoder.encode(doc, bounds):
                heads = self._decode(*self._scores(sentence, arc_w))[0]
                labels = self.labeler.predict(sentence, heads, label_w, root_label)
                parses.append((heads, labels))
            results.append((bounds, parses))
        return results

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        labels = self.cfg["labels"]
        for doc, (bounds, parses) in zip(docs, predictions):
            if not bounds:
                continue
            heads = numpy.arange(len(doc), dtype="int64")
            deps = [""] * len(doc)
            for (start, end), (sent_heads, sent_labels) in zip(bounds, parses):
                for c in range(1, end - start + 1):
                    i = start + c - 1
                    h = int(sent_heads[c])
                    heads[i] = i if h == 0 else start + h - 1
                    deps[i] = labels[sent_labels[c]] if sent_labels[c] >= 0 else ""
            array = numpy.zeros((len(doc), 2), dtype="uint64")
            array[:, 0] = (heads - numpy.arange(len(doc))).astype("uint64")
            array[:, 1] = [self.vocab.strings.add(d) for d in deps]
            doc.from_array(["HEAD", "DEP"], array)

    def _check_tags(self, doc: Doc) -> None:
        needed = {"upos": ("POS",), "xpos": ("TAG",), "both": ("POS", "TAG")}
        for attr in needed[self.features.tag_columns]:
            if not doc.has_annotation(attr):
                self._warn_once(
                    attr,
                    f"[{self.name}] docs have no {attr} annotation but the parser's features "
                    f"read it (tag_columns={self.features.tag_columns!r}). Add a tagger "
                    "before the parser, or train with spacy_mstparse.GoldAnnotationsCorpus.v1.",
                )

    # -- serialization ------------------------------------------------------
    def _serial_cfg(self) -> dict:
        return {
            **self.cfg,
            "features": self.features.to_dict(),
            **self._format_header(),
        }

    def _load_cfg(self, cfg: dict, where: str) -> None:
        self._check_format(cfg, where)
        saved = FeatureConfig.normalize(cfg["features"]) if cfg.get("features") else None
        if saved is not None and saved != self.features.to_dict():
            raise ValueError(
                f"[{self.name}] {where} was trained with features {saved} but the config "
                f"asks for {self.features.to_dict()}"
            )
        for key in self.cfg:
            if key in cfg:
                self.cfg[key] = cfg[key]
        if "nonprojective_share" in cfg:
            self.cfg["nonprojective_share"] = cfg["nonprojective_share"]

    def to_bytes(self, *, exclude=SimpleFrozenList()) -> bytes:
        arc, label = self._prediction_weights()
        if self._sparse_arc_weights:
            arc_data = {"arc_sparse": sparse_weights.pack(arc)}
        else:
            arc_data = {"arc_weights": arc}
        return srsly.msgpack_dumps(
            {"cfg": self._serial_cfg(), **arc_data, "label_sparse": sparse_weights.pack(label)}
        )

    @property
    def _sparse_arc_weights(self) -> bool:
        """Save the arc weights as bitmap + non-zero values (sparse learners)."""
        return bool(getattr(self.learner, "sparse_weights", False))

    def from_bytes(self, bytes_data: bytes, *, exclude=SimpleFrozenList()):
        data = srsly.msgpack_loads(bytes_data)
        self._load_cfg(data["cfg"], "the serialized component")
        self._set_weights(_bytes_weights(data, "arc"), _bytes_weights(data, "label"))
        return self

    def to_disk(self, path, *, exclude=SimpleFrozenList()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        arc, label = self._prediction_weights()
        srsly.write_json(path / "cfg", self._serial_cfg())
        _save_weights(path, "arc_weights", arc, sparse=self._sparse_arc_weights)
        _save_weights(path, "label_weights", label, sparse=True)

    def from_disk(self, path, *, exclude=SimpleFrozenList()):
        path = ensure_path(path)
        self._load_cfg(self._read_cfg(path), str(path))
        self._set_weights(_load_weights(path, "arc_weights"), _load_weights(path, "label_weights"))
        return self

    def _set_weights(self, arc: numpy.ndarray, label: numpy.ndarray) -> None:
        arc = numpy.ascontiguousarray(arc, dtype="float32")
        label = numpy.ascontiguousarray(label, dtype="float32")
        expected_label = self.cfg["label_buckets"] * len(self.cfg["labels"])
        if arc.shape != (self.features.n_buckets,) or label.shape != (expected_label,):
            raise ValueError(
                f"[{self.name}] saved weights have shapes {arc.shape} / {label.shape}, "
                f"expected ({self.features.n_buckets},) / ({expected_label},)"
            )
        self.labeler = ArcLabeler(
            self.cfg["label_buckets"], len(self.cfg["labels"]), self.features.use_morph
        )
        self.arc_table = self.label_table = None
        self._weights = (arc, label)


def _save_weights(path, stem: str, weights: numpy.ndarray, sparse: bool) -> None:
    """``stem.npz`` (bitmap + non-zero values) or ``stem.npy`` (dense), and
    no stale file of the other kind."""
    if sparse:
        with (path / f"{stem}.npz").open("wb") as file_:
            numpy.savez(file_, **sparse_weights.pack(weights))
        (path / f"{stem}.npy").unlink(missing_ok=True)
    else:
        numpy.save(path / f"{stem}.npy", weights)
        (path / f"{stem}.npz").unlink(missing_ok=True)


def _load_weights(path, stem: str) -> numpy.ndarray:
    """The vector ``_save_weights`` wrote, sparse or dense (label weights of
    format 1 are dense)."""
    if (path / f"{stem}.npz").exists():
        with numpy.load(path / f"{stem}.npz") as data:
            return sparse_weights.unpack(data, str(path / f"{stem}.npz"))
    return numpy.load(path / f"{stem}.npy")


def _bytes_weights(data: dict, name: str) -> numpy.ndarray:
    """``name``'s weights from ``to_bytes``' dict: ``{name}_sparse`` (packed)
    or ``{name}_weights`` (dense; the label weights of format 1)."""
    if f"{name}_sparse" in data:
        return sparse_weights.unpack(data[f"{name}_sparse"], "the serialized component")
    return data[f"{name}_weights"]


def _warm_table(weights: numpy.ndarray) -> WeightTable:
    table = WeightTable(weights.shape[0])
    zeros = numpy.zeros(weights.shape[0], dtype="float64")
    table.set_state(
        {"v": weights, "acc": zeros, "stamp": zeros.copy(), "scale": 1.0, "cum_scale": 0.0, "n_ticks": 0}
    )
    return table

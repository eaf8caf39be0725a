"""The ``arcstandard_svm`` pipeline component: greedy arc-standard parsing
with a one-vs-rest linear SVM oracle.

Follows Choo & Shivaditya (``../shared/seeds/004_ce218664735a9138.txt``): an
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
"""
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
import srsly
from spacy.attrs import DEP, HEAD, LOWER, POS, SENT_START, TAG
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import SimpleFrozenList, ensure_path, logger
from spacy.vocab import Vocab
from wasabi import msg

from ..decoders.trees import is_projective
from ..scoring import score_parse
from ..transition.arc_standard import oracle
from ..transition.features import ALL_GROUPS, ROOT_WORD, UNK_WORD, group_mask, pair_keys
from ..transition.parser import ArcStandardModel
from ..transition.svm import OneVsRestSVM
from ..transition.svm import _rebuild as rebuild_svm
from .base import DependencyPipe

FORMAT_VERSION = 1
TAG_ATTRS = {"xpos": TAG, "upos": POS}
NONPROJECTIVE = ("lift", "drop")
MOVES = {"S": 0, "L": 1, "R": 2}
HEAD_DEP = [HEAD, DEP]

DEFAULT_CONFIG = {
    "lam": 1e-5,
    "delta": 0.001,
    "feature_groups": list(ALL_GROUPS),
    "word_distance": "binned",
    "word_pair_limit": 100000,
    "rare_word_cutoff": 2,
    "average": True,
    "tag_column": "xpos",
    "n_buckets": 2**18,
    "nonprojective": "lift",
    "min_lifted_label_count": 5,
    "max_sentence_length": 250,
    "scorer": {"@scorers": "spacy_mstparse.parser_scorer.v1"},
}


@Language.factory(
    "arcstandard_svm",
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
    return ArcStandardSVM(
        nlp.vocab,
        name,
        lam=lam,
        delta=delta,
        feature_groups=feature_groups,
        word_distance=word_distance,
        word_pair_limit=word_pair_limit,
        rare_word_cutoff=rare_word_cutoff,
        average=average,
        tag_column=tag_column,
        n_buckets=n_buckets,
        nonprojective=nonprojective,
        min_lifted_label_count=min_lifted_label_count,
        max_sentence_length=max_sentence_length,
        scorer=scorer,
    )


class ArcStandardSVM(DependencyPipe):
    """Greedy arc-standard dependency parser with a one-vs-rest SVM oracle."""

    def __init__(
        self,
        vocab: Vocab,
        name: str = "arcstandard_svm",
        *,
        lam: float = 1e-5,
        delta: float = 0.001,
        feature_groups: Iterable[str] = ALL_GROUPS,
        word_distance: str = "binned",
        word_pair_limit: int = 100000,
        rare_word_cutoff: int = 2,
        average: bool = True,
        tag_column: str = "xpos",
        n_buckets: int = 2**18,
        nonprojective: str = "lift",
        min_lifted_label_count: int = 5,
        max_sentence_length: int = 250,
        scorer: Optional[Callable] = score_parse,
    ):
        feature_groups = list(feature_groups)
        group_mask(feature_groups, word_distance)  # validates the names
        if tag_column not in TAG_ATTRS:
            raise ValueError(f"[{name}] tag_column must be 'xpos' or 'upos', got {tag_column!r}")
        if nonprojective not in NONPROJECTIVE:
            raise ValueError(
                f"[{name}] nonprojective must be 'lift' or 'drop', got {nonprojective!r}"
            )
        if not lam > 0:
            raise ValueError(f"[{name}] lam must be > 0, got {lam}")
        if delta < 0:
            raise ValueError(f"[{name}] delta must be >= 0, got {delta}")
        if n_buckets < 1 or n_buckets & (n_buckets - 1):
            raise ValueError(f"[{name}] n_buckets must be a power of two, got {n_buckets}")
        if max_sentence_length < 1:
            raise ValueError(f"[{name}] max_sentence_length must be >= 1")
        if word_pair_limit < 0 or rare_word_cutoff < 0:
            raise ValueError(f"[{name}] word_pair_limit and rare_word_cutoff must be >= 0")
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "lam": float(lam),
            "delta": float(delta),
            "feature_groups": feature_groups,
            "word_distance": word_distance,
            "word_pair_limit": int(word_pair_limit),
            "rare_word_cutoff": int(rare_word_cutoff),
            "average": bool(average),
            "tag_column": tag_column,
            "n_buckets": int(n_buckets),
            "nonprojective": nonprojective,
            "min_lifted_label_count": int(min_lifted_label_count),
            "max_sentence_length": int(max_sentence_length),
            # set by initialize()
            "labels": [],
            "root_label": None,
            "classes": [],
            "lifted_labels": None,
            "unk_valence": [0.0, 0.0],
            "epoch_configs": 0,
            # training progress
            "epochs_done": 0,
            "error_history": [],
            "converged": False,
        }
        self._vocab_ids = numpy.zeros(0, dtype="uint64")
        self._valence = numpy.zeros((2, 0), dtype="float32")
        self._pairs = numpy.zeros(0, dtype="uint64")
        self.svm: Optional[OneVsRestSVM] = None
        self._model: Optional[ArcStandardModel] = None
        self._pred_model: Optional[ArcStandardModel] = None
        self._pred_weights: Optional[numpy.ndarray] = None
        self._epoch = [0, 0]  # configurations and errors in the current epoch
        self._counts = Counter()
        self._warned = set()

    # -- spaCy training-loop protocol (as mst_parser) ---------------------
    model = True
    FORMAT_VERSION = FORMAT_VERSION

    def finish_update(self, sgd) -> None:
        pass

    # -- labels and classes ------------------------------------------------
    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.cfg["labels"])

    @property
    def classes(self) -> List[Tuple[str, Optional[str]]]:
        """("SHIFT", None), ("LEFT-ARC", label), ("RIGHT-ARC", label), ..."""
        names = {"S": "SHIFT", "L": "LEFT-ARC", "R": "RIGHT-ARC"}
        labels = self.cfg["labels"]
        return [(names[m], labels[l] if l >= 0 else None) for m, l in self.cfg["classes"]]

    @property
    def converged(self) -> bool:
        return bool(self.cfg["converged"])

    def add_label(self, label: str) -> int:
        raise NotImplementedError(
            f"[{self.name}] labels are collected by initialize(); pass them with "
            "[initialize.components.<name>.labels] instead of add_label"
        )

    # -- encoding -----------------------------------------------------------
    def _encode(self, doc: Doc) -> Tuple[numpy.ndarray, ...]:
        """Word ids after the rare-word cut-off, tag ids and valence of every
        token of doc."""
        array = doc.to_array([LOWER, TAG_ATTRS[self.cfg["tag_column"]]]).astype("uint64", copy=False)
        return self._encode_array(array.reshape((-1, 2)))

    def _encode_array(self, array: numpy.ndarray) -> Tuple[numpy.ndarray, ...]:
        """As _encode, for rows (LOWER, tag) of one or more docs."""
        tags = numpy.ascontiguousarray(array[:, 1])
        words, known, pos = self._map_words(array[:, 0])
        unk_dl, unk_dr = self.cfg["unk_valence"]
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
        vocab = self._vocab_ids
        if vocab.shape[0]:
            pos = numpy.searchsorted(vocab, lower)
            pos[pos == vocab.shape[0]] = 0
            known = vocab[pos] == lower
        else:
            pos = numpy.zeros(lower.shape[0], dtype="int64")
            known = numpy.zeros(lower.shape[0], dtype=bool)
        words = numpy.ascontiguousarray(numpy.where(known, lower, numpy.uint64(UNK_WORD)), dtype="uint64")
        return words, known, pos

    # -- gold data ------------------------------------------------------------
    def _gold_sentences(self, eg: Example):
        """Yield (start, heads, deps) per reference sentence: heads[0] = -1,
        heads[i] the head position (0 = root) of word i, deps[i] its label;
        non-projective trees lifted (labels decorated) or skipped as set.
        Sentences that cannot be used are skipped with a warning."""
        ref = eg.reference
        if not ref.has_annotation("DEP"):
            return
        if len(eg.predicted) != len(ref) or any(
            p.text != r.text for p, r in zip(eg.predicted, ref)
        ):
            self._warn_once(
                "tokenization",
                f"[{self.name}] skipping training documents whose tokenization differs from "
                "the reference: arcstandard_svm trains on gold-tokenized text",
            )
            return
        for sent in ref.sents:
            start, end = sent.start, sent.end
            n = end - start
            heads = numpy.full(n + 1, -1, dtype="int32")
            deps: List[str] = [""] * (n + 1)
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
                deps[i] = token.dep_
            if not ok:
                self._warn_once(
                    "partial",
                    f"[{self.name}] skipping gold sentences with missing heads or heads "
                    "outside the sentence",
                )
                continue
            if n and int(numpy.count_nonzero(heads[1:] == 0)) != 1:
                self._warn_once(
                    "roots",
                    f"[{self.name}] skipping gold sentences with more than one root word "
                    "(arc-standard with one root builds trees with exactly one)",
                )
                continue
            if not is_projective(heads):
                self._counts["nonprojective"] += 1
                if self.cfg["nonprojective"] == "drop":
                    continue
                heads, deps = _lift(heads, deps)
                kept = self.cfg["lifted_labels"]
                if kept is not None:
                    deps = [d if d in kept else d.split(nonproj.DELIMITER)[0] for d in deps]
            yield start, heads, deps

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
        sentences = []  # (lower ids, heads, deps)
        n_trees = 0
        self._counts = Counter()
        self.cfg["lifted_labels"] = None
        for eg in get_examples():
            gold = list(self._gold_sentences(eg))
            if not gold:
                continue
            lower = eg.predicted.to_array(LOWER).astype("uint64").reshape(-1)
            for start, heads, deps in gold:
                n_trees += 1
                sentences.append((lower[start : start + len(heads) - 1], heads, deps))
        if not sentences:
            raise ValueError(
                f"[{self.name}] no usable gold trees in the training examples: the reference "
                "docs need heads and deps (is the training corpus parsed?)"
            )
        # decorated labels of lifted arcs: keep the frequent ones
        decorated = Counter(d for _, _, deps in sentences for d in deps if nonproj.DELIMITER in d)
        kept = {d for d, c in decorated.items() if c >= self.cfg["min_lifted_label_count"]}
        self.cfg["lifted_labels"] = sorted(kept)
        if len(kept) < len(decorated):
            sentences = [
                (lower, heads, [d if d in kept or nonproj.DELIMITER not in d
                                else d.split(nonproj.DELIMITER)[0] for d in deps])
                for lower, heads, deps in sentences
            ]
        # vocabulary and rare-word cut-off
        counts = Counter()
        for lower, _, _ in sentences:
            counts.update(lower.tolist())
        cutoff = self.cfg["rare_word_cutoff"]
        self._vocab_ids = numpy.array(
            sorted(w for w, c in counts.items() if c >= cutoff), dtype="uint64"
        )
        # labels, classes and root label
        left, right, root = Counter(), Counter(), Counter()
        for _, heads, deps in sentences:
            for i in range(1, len(heads)):
                if heads[i] == 0:
                    root[deps[i]] += 1
                elif heads[i] > i:
                    left[deps[i]] += 1
                else:
                    right[deps[i]] += 1
        if labels is not None:
            label_list = sorted(set(labels))
            left_labels = right_labels = set(label_list)
        else:
            label_list = sorted(set(left) | set(right) | set(root))
            left_labels, right_labels = set(left), set(right)
        root_label = root.most_common(1)[0][0] if root else None
        label_ids = {label: i for i, label in enumerate(label_list)}
        classes = [["S", -1]]
        classes += [["L", label_ids[l]] for l in label_list if l in left_labels and l != root_label]
        classes += [
            ["R", label_ids[l]]
            for l in label_list
            if l in right_labels or l == root_label
        ]
        self.cfg["labels"] = label_list
        self.cfg["root_label"] = root_label
        self.cfg["classes"] = classes
        # valence: average number of left / right dependents per word
        n_seen = Counter()
        n_left = Counter()
        n_right = Counter()
        known = set(self._vocab_ids.tolist())
        for lower, heads, _ in sentences:
            words = [w if w in known else UNK_WORD for w in lower.tolist()]
            n_seen.update(words)
            for i in range(1, len(heads)):
                h = heads[i]
                if h > 0:
                    (n_left if i < h else n_right)[words[h - 1]] += 1
        vocab = self._vocab_ids.tolist()
        self._valence = numpy.array(
            [[n_left[w] / n_seen[w] for w in vocab], [n_right[w] / n_seen[w] for w in vocab]],
            dtype="float32",
        ).reshape(2, len(vocab))
        if n_seen[UNK_WORD]:
            self.cfg["unk_valence"] = [
                n_left[UNK_WORD] / n_seen[UNK_WORD],
                n_right[UNK_WORD] / n_seen[UNK_WORD],
            ]
        else:
            self.cfg["unk_valence"] = [0.0, 0.0]
        # oracle configurations: epoch size and the most frequent word pairs
        n_configs = 0
        keys = []
        for lower, heads, _ in sentences:
            moves, s0, b0 = oracle(heads)
            n_configs += moves.shape[0]
            with_root = numpy.empty(len(lower) + 1, dtype="uint64")
            with_root[0] = ROOT_WORD
            with_root[1:] = self._map_words(lower)[0]
            keys.append(pair_keys(with_root[s0], with_root[b0]))
        limit = self.cfg["word_pair_limit"]
        if keys and limit:
            unique, freq = numpy.unique(numpy.concatenate(keys), return_counts=True)
            order = numpy.lexsort((unique, -freq))[:limit]
            self._pairs = numpy.sort(unique[order])
        else:
            self._pairs = numpy.zeros(0, dtype="uint64")
        self.cfg["epoch_configs"] = int(n_configs)
        self.cfg["n_train_trees"] = n_trees
        self.cfg["vocab_size"] = int(self._vocab_ids.shape[0])
        self.svm = OneVsRestSVM(
            self.cfg["n_buckets"], len(classes), self.cfg["lam"], self.cfg["average"]
        )
        self._pred_model = self._pred_weights = None
        self.cfg["epochs_done"] = 0
        self.cfg["error_history"] = []
        self.cfg["converged"] = False
        self._epoch = [0, 0]
        self._model = None
        self.cfg["n_nonprojective_trees"] = self._counts["nonprojective"]

    def _require_initialized(self) -> None:
        if self.svm is None:
            raise ValueError(
                f"[{self.name}] the component is not initialized: call nlp.initialize() "
                "or load a trained pipeline before parsing"
            )

    def _make_model(self, svm: OneVsRestSVM) -> ArcStandardModel:
        root = self.cfg["root_label"]
        root_id = self.cfg["labels"].index(root) if root in self.cfg["labels"] else -1
        return ArcStandardModel(
            svm,
            numpy.array([MOVES[m] for m, _ in self.cfg["classes"]], dtype="int8"),
            numpy.array([l for _, l in self.cfg["classes"]], dtype="int32"),
            root_id,
            group_mask(self.cfg["feature_groups"], self.cfg["word_distance"]),
            self._pairs,
        )

    @property
    def transition_model(self) -> ArcStandardModel:
        """The model that training updates (its SVMs hold the running sums)."""
        if self._model is None:
            self._require_initialized()
            self._model = self._make_model(self.svm)
        return self._model

    def prediction_weights(self) -> numpy.ndarray:
        """The weights w the parser predicts with ((n_buckets, n_classes)
        float32): the average of the SVM iterates with ``average``, else the
        last iterate; computed once after each round of updates."""
        if self._pred_weights is None:
            self._require_initialized()
            self._pred_weights = self.svm.prediction_weights()
        return self._pred_weights

    @property
    def predictor(self) -> ArcStandardModel:
        if self._pred_model is None:
            weights = self.prediction_weights()
            svm = rebuild_svm(
                weights.shape[0], weights.shape[1], self.cfg["lam"],
                {"table": weights, "t": max(1, int(self.svm.t)), "lam": self.cfg["lam"]},
            )
            self._pred_model = self._make_model(svm)
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
        if self.cfg["converged"]:
            if "converged" not in self._warned:
                self._warned.add("converged")
                logger.info("[%s] training has converged; update() does nothing", self.name)
            return losses
        model = self.transition_model
        self._pred_model = self._pred_weights = None
        label_ids = {label: i for i, label in enumerate(self.cfg["labels"])}
        left_class = {l: c for c, (m, l) in enumerate(self.cfg["classes"]) if m == "L"}
        right_class = {l: c for c, (m, l) in enumerate(self.cfg["classes"]) if m == "R"}
        for eg in examples:
            gold = list(self._gold_sentences(eg))
            if not gold:
                continue
            self._check_tags(eg.predicted)
            n_tokens = len(eg.predicted)
            gold_heads = numpy.zeros(n_tokens, dtype="int32")
            gold_classes = numpy.zeros(n_tokens, dtype="int32")
            bounds = []
            for start, heads, deps in gold:
                n = len(heads) - 1
                classes = []
                for i in range(1, n + 1):
                    table = left_class if heads[i] > i else right_class
                    classes.append(table.get(label_ids.get(deps[i], -1), -1))
                if -1 in classes:
                    self._warn_once(
                        "labels",
                        f"[{self.name}] skipping gold sentences with a label (or label and "
                        "direction) not seen at initialization",
                    )
                    continue
                gold_heads[start : start + n] = heads[1:]
                gold_classes[start : start + n] = classes
                bounds.append((start, start + n))
            if not bounds:
                continue
            words, tags, dl, dr = self._encode(eg.predicted)
            n_configs, n_wrong, _ = model.train_doc(
                words, tags, dl, dr, numpy.array(bounds, dtype="int32"), gold_heads, gold_classes
            )
            losses[self.name] += n_wrong
            self._epoch[0] += n_configs
            self._epoch[1] += n_wrong
            if self._epoch[0] >= self.cfg["epoch_configs"] > 0:
                self._end_epoch()
                if self.cfg["converged"]:
                    break
        return losses

    def _end_epoch(self) -> None:
        """Apply the stopping rule: converged when this epoch's training error
        is less than ``delta`` below the previous epoch's."""
        n_configs, n_wrong = self._epoch
        error = n_wrong / n_configs if n_configs else 0.0
        history = self.cfg["error_history"]
        if history and history[-1] - error < self.cfg["delta"]:
            self.cfg["converged"] = True
        history.append(error)
        self.cfg["epochs_done"] += 1
        self._epoch = [0, 0]
        if self.cfg["converged"]:
            msg.info(
                f"[{self.name}] SVM training converged after {len(history)} epochs "
                f"(training error {error:.4f}, previous {history[-2]:.4f}, delta "
                f"{self.cfg['delta']}); further updates are no-ops"
            )

    # -- prediction ---------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]):
        """Parse a batch: the docs' words are encoded and parsed together (one
        numpy pass and one nogil call per batch). Returns, per doc, its
        sentence bounds and the (HEAD, DEP) array to write, or None."""
        model = self.predictor
        docs = list(docs)
        attrs = [LOWER, TAG_ATTRS[self.cfg["tag_column"]], SENT_START]
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
                self._check_tags(doc)
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
        if getattr(self, "_label_cache", None) is None or self._label_cache[0] != self.cfg["labels"]:
            labels = list(self.cfg["labels"])
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

    def _check_tags(self, doc: Doc) -> None:
        attr = "TAG" if self.cfg["tag_column"] == "xpos" else "POS"
        if not doc.has_annotation(attr):
            self._warn_once(
                attr,
                f"[{self.name}] docs have no {attr} annotation but the parser's features read "
                f"it (tag_column={self.cfg['tag_column']!r}). Add a tagger before the parser, "
                "or train with spacy_mstparse.GoldAnnotationsCorpus.v1.",
            )

    # -- serialization --------------------------------------------------------------
    SETTINGS = ("feature_groups", "word_distance", "word_pair_limit", "rare_word_cutoff", "tag_column", "n_buckets")

    def _serial_cfg(self) -> dict:
        self._require_initialized()
        return {
            **self.cfg,
            "svm_t": int(self.svm.t),
            "epoch_progress": list(self._epoch),
            **self._format_header(),
        }

    def _arrays(self) -> Dict[str, numpy.ndarray]:
        return {
            "weights": self.prediction_weights(),
            "vocab": self._vocab_ids,
            "valence": self._valence,
            "pairs": self._pairs,
        }

    def _load(self, cfg: dict, arrays: Dict[str, numpy.ndarray], where: str) -> None:
        self._check_format(cfg, where)
        for key in self.SETTINGS:
            if key in cfg and cfg[key] != self.cfg[key]:
                raise ValueError(
                    f"[{self.name}] {where} was trained with {key} = {cfg[key]!r} but the "
                    f"config asks for {self.cfg[key]!r}"
                )
        for key in cfg:
            if key not in ("svm_t", "epoch_progress", "format_version", "spacy_mstparse_version"):
                self.cfg[key] = cfg[key]
        weights = numpy.ascontiguousarray(arrays["weights"], dtype="float32")
        expected = (self.cfg["n_buckets"], len(self.cfg["classes"]))
        if weights.shape != expected:
            raise ValueError(
                f"[{self.name}] {where}: SVM weights have shape {weights.shape}, expected {expected}"
            )
        # Prediction uses the saved weights as they are; training further
        # warm-starts the SVMs from them (w = S / (lambda t) with the saved t).
        self.svm = OneVsRestSVM(
            expected[0], expected[1], self.cfg["lam"], self.cfg["average"]
        )
        self.svm.set_weights(weights, max(1, int(cfg["svm_t"])))
        self._pred_weights = weights
        self._pred_model = None
        self._vocab_ids = numpy.ascontiguousarray(arrays["vocab"], dtype="uint64")
        self._valence = numpy.ascontiguousarray(arrays["valence"], dtype="float32").reshape(2, -1)
        self._pairs = numpy.ascontiguousarray(arrays["pairs"], dtype="uint64")
        self._epoch = list(cfg.get("epoch_progress", [0, 0]))
        self._model = None

    def to_bytes(self, *, exclude=SimpleFrozenList()) -> bytes:
        return srsly.msgpack_dumps({"cfg": self._serial_cfg(), **self._arrays()})

    def from_bytes(self, bytes_data: bytes, *, exclude=SimpleFrozenList()):
        data = srsly.msgpack_loads(bytes_data)
        self._load(data["cfg"], data, "the serialized component")
        return self

    def to_disk(self, path, *, exclude=SimpleFrozenList()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self._serial_cfg())
        for key, array in self._arrays().items():
            numpy.save(path / f"{key}.npy", array)

    def from_disk(self, path, *, exclude=SimpleFrozenList()):
        path = ensure_path(path)
        cfg = self._read_cfg(path)
        arrays = {}
        for key in ("weights", "vocab", "valence", "pairs"):
            file = path / f"{key}.npy"
            if not file.exists():
                raise ValueError(f"[{self.name}] {path} lacks {file.name}")
            arrays[key] = numpy.load(file)
        self._load(cfg, arrays, str(path))
        return self

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_model"] = state["_pred_model"] = None  # rebuilt from the SVM and arrays
        state["_label_cache"] = None
        return state


def _lift(heads: numpy.ndarray, deps: List[str]) -> Tuple[numpy.ndarray, List[str]]:
    """Pseudo-projective lifting (Nivre & Nilsson 2005, HEAD encoding) with
    spaCy's ``nonproj.projectivize``: heads 0..n with the root at 0 ->
    spaCy's convention (root word heads itself) and back."""
    n = len(heads) - 1
    root_word = int(numpy.flatnonzero(heads[1:] == 0)[0])
    spacy_heads = [root_word if heads[i] == 0 else int(heads[i]) - 1 for i in range(1, n + 1)]
    proj_heads, proj_deps = nonproj.projectivize(spacy_heads, deps[1:])
    out = numpy.full(n + 1, -1, dtype="int32")
    for i, h in enumerate(proj_heads):
        out[i + 1] = 0 if h == i else h + 1
    return out, [""] + list(proj_deps)

"""What the two parser components share: the spaCy ``Pipe`` plumbing of a
parser with its own (non-thinc) linear model.

``mst_parser`` (graph-based, McDonald et al. 2005) and ``arcstandard_svm``
(transition-based) differ in their models and data, not in how they sit in a
spaCy pipeline: both are trainable without thinc's optimizer, parse each
sentence (``doc.sents``, or a documented fallback) in chunks of at most
``max_sentence_length`` words, warn once per missing annotation, score with
the project's scorer, and save a ``cfg`` with the model format version,
refusing other versions with an error naming both. Both read the gold
trees of the reference docs the same way (``gold_sentences``), check the tag
columns their features read (``check_tags``) and serialize through one table
of named parts (``_serial_parts`` / ``_load_parts``, see ``serialization.py``),
which ``to_bytes``, ``to_disk``, their inverses and pickling all use.
"""
import warnings
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.attrs import DEP, HEAD, ORTH, SENT_START
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import minibatch

from .. import __version__
from ..corpus.conll import doc_label
from ..features.doc_arrays import SentenceEncoder
from . import serialization
from .serialization import ModelDataError

# The DEP id of a token without an annotated head (spaCy: Token.has_head()
# is dep != 0).
MISSING_DEP = 0

# Tokens after which the fallback sentence splitter ends a sentence.
SENTENCE_FINAL = frozenset([".", "!", "?", "...", "…", "!!", "??", "?!", "!?"])

# The scores ``spacy train`` weighs (and reports) for both parsers.
SCORE_WEIGHTS = {
    "dep_uas": 0.5,
    "dep_las": 0.5,
    "dep_las_per_type": None,
    "dep_uas_with_punct": None,
    "dep_las_with_punct": None,
    "sents_p": None,
    "sents_r": None,
    "sents_f": None,
}


def same_words(eg: Example) -> bool:
    """Whether the example's predicted doc has the reference's words (gold
    tokenization: token i of one is token i of the other)."""
    return len(eg.predicted) == len(eg.reference) and numpy.array_equal(
        eg.predicted.to_array(ORTH), eg.reference.to_array(ORTH))


def aligned_parse(eg: Example) -> Tuple[list, list]:
    """``eg.get_aligned_parse(projectivize=False)``: the reference's head
    (token index) and label of each predicted token, None where unaligned;
    read from the reference's arrays when both docs have the same words."""
    y = eg.reference
    if not same_words(eg):
        return eg.get_aligned_parse(projectivize=False)
    columns = y.to_array([HEAD, DEP])
    heads = (numpy.arange(len(y), dtype="int64") + columns[:, 0].astype("int64")).tolist()
    strings = y.vocab.strings
    return heads, [strings[d] for d in columns[:, 1].tolist()]


class DependencyPipe(serialization.PartsSerializer, Pipe):
    """Base class of the two parser components.

    Subclasses set ``FORMAT_VERSION`` (the one format they load), provide ``predict``, ``set_annotations``,
    ``tag_attrs`` (the doc attributes their features read), and the
    serializer table ``_serial_parts`` / ``_load_parts``; ``self.cfg`` must
    hold ``max_sentence_length``, and ``labels`` unless ``label_data`` is
    overridden.
    """

    FORMAT_VERSION = 1
    # Attributes rebuilt by ``from_bytes`` when unpickling (not pickled).
    TRANSIENT_ATTRS: Tuple[str, ...] = ()

    # No thinc model: the parsers update their own weights inside update().
    model = True

    @property
    def is_trainable(self) -> bool:
        return True

    def finish_update(self, sgd) -> None:
        pass

    def use_params(self, params):
        """Prediction always uses the component's own (averaged) weights;
        spaCy's optimizer averages do not apply (a plain generator, as
        ``Language.use_params`` expects)."""
        yield

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations([doc], self.predict([doc]))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128):
        """The docs, annotated batch by batch. A subclass whose parsing runs
        in C without the GIL splits ``predict`` into ``prepare_batch``
        (Python), ``parse_prepared(prepared, n_threads)`` (C; threads may
        share a batch) and ``predictions(prepared)``. With ``n_threads`` > 1
        a worker thread parses each batch while this thread prepares the
        next batch, then helps parse what is left of it, and annotates it
        while the worker parses the next: the Python work no longer runs
        alone (same parses)."""
        n_threads = self.cfg.get("n_threads", 1)
        batches = minibatch(stream, size=batch_size)
        if n_threads <= 1 or not hasattr(self, "parse_prepared"):
            for batch in batches:
                self.set_annotations(batch, self.predict(batch))
                yield from batch
            return
        with ThreadPoolExecutor(max_workers=1) as worker:
            parsing = None   # (batch, prepared, the worker's future)
            for batch in batches:
                prepared = self.prepare_batch(batch)    # while the worker parses
                parsed = parsing and self._join(*parsing)
                parsing = (batch, prepared, worker.submit(self.parse_prepared, prepared,
                                                          n_threads - 1))
                if parsed:
                    yield from self._annotated(*parsed)  # while the worker parses
            if parsing is not None:
                yield from self._annotated(*self._join(*parsing))

    def _join(self, batch: List[Doc], prepared, running: Future) -> tuple:
        """Parse the sentences of the batch still unclaimed, wait for the worker."""
        self.parse_prepared(prepared, 1)
        running.result()
        return batch, prepared

    def _annotated(self, batch: List[Doc], prepared) -> List[Doc]:
        self.set_annotations(batch, self.predictions(prepared))
        return batch

    # -- labels ---------------------------------------------------------------
    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.label_data)

    @property
    def label_data(self) -> List[str]:
        """The labels in the order of the model (``self.cfg["labels"]``
        unless a subclass keeps them elsewhere)."""
        return list(self.cfg["labels"])

    def label_string_ids(self, labels: Iterable[str]) -> numpy.ndarray:
        """The string ids of ``labels`` as the Doc gets them (a model's
        ``root``, e.g. one trained before the Doc said ``ROOT``, as ``ROOT``:
        ``doc_label``), then 0 (no label) for label index -1."""
        strings = self.vocab.strings
        return numpy.array([strings.add(doc_label(label)) for label in labels] + [0],
                           dtype="uint64")

    def add_label(self, label: str) -> int:
        raise NotImplementedError(
            f"[{self.name}] labels are collected by initialize(); pass them with "
            f"[initialize.components.{self.name}.labels] instead of add_label"
        )

    # -- gold data and input checks -----------------------------------------------
    def label_census(self, examples: Iterable[Example], labels: Optional[List[str]] = None
                     ) -> Tuple[List[str], Optional[str]]:
        """The sorted label inventory (``labels`` if given, else every label of
        the reference trees) and the most frequent label of root words."""
        label_counts: Counter = Counter()
        root_counts: Counter = Counter()
        for eg in examples:
            for _, heads, deps in self.gold_sentences(eg):
                for c in range(1, len(heads)):
                    if deps[c]:
                        label_counts[deps[c]] += 1
                        root_counts[deps[c]] += heads[c] == 0
        label_list = (sorted({doc_label(label) for label in labels}) if labels is not None
                      else sorted(label_counts))
        if not label_list:
            raise ValueError(
                f"[{self.name}] no dependency labels found in the training examples: "
                "the reference docs need heads and deps (is the training corpus parsed?)")
        roots = Counter({label: n for label, n in root_counts.items() if n}).most_common(1)
        return label_list, roots[0][0] if roots else None

    def gold_sentences(self, eg: Example, partial: bool = True):
        """Yield (sentence start, gold heads, gold labels) for each reference
        sentence: ``heads[0] = -1``, ``heads[i]`` the head position of word i
        (0 = root), ``deps[i]`` its label ("" when unlabelled).

        A word without a head (spaCy's missing annotation: ``not
        token.has_head()``) gets head -1 and label "" when ``partial``;
        otherwise its sentence is skipped. spaCy derives a reference's
        sentences from its heads, and a partial tree's fragments come out as
        sentences of their own: so for a reference with missing heads the
        sentences are those of the predicted doc when it has boundaries
        (e.g. ``GoldAnnotationsCorpus``, a senter), else the whole doc is one
        sentence. A sentence without any known head is left out. Documents
        whose tokenization differs from the reference and sentences with
        heads outside the sentence are skipped. Every skip is warned about
        (once, never silently)."""
        ref = eg.reference
        if not ref.has_annotation("DEP"):
            return
        if not same_words(eg):
            self._warn_once(
                "tokenization",
                f"[{self.name}] skipping training documents whose tokenization differs from "
                f"the reference: {self.name} trains on gold-tokenized text",
            )
            return
        columns = ref.to_array([HEAD, DEP])
        positions = numpy.arange(len(ref), dtype="int64")
        head_of = positions + columns[:, 0].astype("int64")   # HEAD is an offset
        dep_ids = columns[:, 1]
        known = dep_ids != MISSING_DEP                          # Token.has_head()
        if partial and not known.all():
            spans = ([(sent.start, sent.end) for sent in eg.predicted.sents]
                     if eg.predicted.has_annotation("SENT_START") else [(0, len(ref))])
        else:
            spans = [(sent.start, sent.end) for sent in ref.sents]
        for start, end in spans:
            sent_known = known[start:end]
            if partial and not sent_known.any():
                continue
            h = head_of[start:end]
            if not (partial or sent_known.all()) or not (
                    (h[sent_known] >= start) & (h[sent_known] < end)).all():
                self._warn_once(
                    "partial",
                    f"[{self.name}] skipping gold sentences with "
                    + ("" if partial else "missing heads or ")
                    + "heads outside the sentence",
                )
                continue
            heads = numpy.full(end - start + 1, -1, dtype="int32")
            heads[1:][sent_known] = numpy.where(h == positions[start:end], 0,
                                                h - start + 1)[sent_known]
            deps: List[str] = [""] + [self._dep_label(d, ref) if k else ""
                                      for d, k in zip(dep_ids[start:end].tolist(),
                                                      sent_known.tolist())]
            yield start, heads, deps

    _dep_labels: Dict[int, str] = {}

    @classmethod
    def _dep_label(cls, dep_id: int, doc: Doc) -> str:
        """The label of a DEP id as ``doc_label`` reads it (a gold "root" of
        old DocBins as "ROOT"); ids are hashes of the strings, so the cache
        holds across vocabs."""
        label = cls._dep_labels.get(dep_id)
        if label is None:
            label = cls._dep_labels[dep_id] = doc_label(doc.vocab.strings[dep_id])
        return label

    @property
    def tag_attrs(self) -> Tuple[str, ...]:
        """The doc attributes (``"POS"``, ``"TAG"``) the features read."""
        raise NotImplementedError

    # the SentenceEncoder of a pipe whose features read one (mst_parser)
    encoder: Optional[SentenceEncoder] = None

    def check_tags(self, doc: Doc) -> None:
        """Warn once per missing tag column that the features read."""
        for attr in self.tag_attrs:
            if not doc.has_annotation(attr):
                self._warn_once(
                    attr,
                    f"[{self.name}] docs have no {attr} annotation but the parser's features "
                    "read it. Add a tagger before the parser (configs/mst_parser_tagged.cfg), "
                    "or give it gold tags (spacy_mstparse.GoldAnnotationsCorpus.v1 in training, "
                    "--gold-tags in the CLI).",
                )
        if self.encoder is not None and self.encoder.supertags and \
                not self.encoder.has_supertags(doc):
            self._warn_once(
                "supertags",
                f"[{self.name}] docs have no supertags (doc._.supertag_ids) but the parser's "
                "features read them (features.supertags = true). Add an mst_supertagger before "
                "the parser, and to [training] annotating_components so that the parser trains "
                "on them (configs/mst_parser_tagged.cfg).",
            )

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message)

    # -- sentences ------------------------------------------------------------
    def sentence_spans(
        self, doc: Doc, sent_starts: Optional[numpy.ndarray] = None
    ) -> List[Tuple[int, int]]:
        """The (start, end) word ranges of the doc's sentences when
        boundaries are set, otherwise split after sentence-final
        punctuation. ``sent_starts``: the doc's SENT_START column, if the
        caller has already read it."""
        n = len(doc)
        if n == 0:
            return []
        if sent_starts is None:
            sent_starts = doc.to_array(SENT_START)
        flags = sent_starts.reshape(-1).tolist()   # plain lists: most docs are short
        # spaCy's has_annotation("SENT_START"): any token after the first set
        if n > 1 and any(flags[1:]):
            starts = [i for i, flag in enumerate(flags) if flag == 1]
            if not starts or starts[0] != 0:
                starts.insert(0, 0)
            return list(zip(starts, starts[1:] + [n]))
        spans = []
        start = 0
        for token in doc:
            if token.text in SENTENCE_FINAL and not (
                token.i + 1 < n and doc[token.i + 1].text in SENTENCE_FINAL
            ):
                spans.append((start, token.i + 1))
                start = token.i + 1
        if start < n:
            spans.append((start, n))
        return spans

    def chunk_spans(self, spans: List[Tuple[int, int]]) -> List[Tuple[int, int, bool]]:
        """(start, end, continues) chunks of at most ``max_sentence_length``
        words (so decoding is never cubic in a long sentence); ``continues``
        is True for every chunk after the first of a sentence."""
        limit = self.cfg["max_sentence_length"]
        return [
            (chunk, min(end, chunk + limit), chunk != start)
            for start, end in spans
            for chunk in range(start, end, limit)
        ]

    def sentence_bounds(
        self, doc: Doc, sent_starts: Optional[numpy.ndarray] = None
    ) -> List[Tuple[int, int]]:
        """The (start, end) word ranges parsed as separate trees: the
        sentences, cut into chunks of at most ``max_sentence_length``."""
        return [(s, e) for s, e, _ in self.chunk_spans(self.sentence_spans(doc, sent_starts))]

    # -- scoring --------------------------------------------------------------
    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        validate_examples(examples, f"{type(self).__name__}.score")
        return self.scorer(examples, **kwargs)

    # -- serialization --------------------------------------------------------
    def _format_header(self) -> dict:
        """Keys every saved ``cfg`` carries, checked by ``_check_format``."""
        return {"format_version": self.FORMAT_VERSION, "spacy_mstparse_version": __version__}

    def _check_format(self, cfg: dict, where: str) -> None:
        """One model format loads: this version's (no migrations before the
        first release). Anything else is refused in one line."""
        version = cfg.get("format_version")
        if version != self.FORMAT_VERSION:
            raise ModelDataError(
                f"[{self.name}] {where}: saved in model format {version} by spacy-mstparse "
                f"{cfg.get('spacy_mstparse_version', '?')}; spacy-mstparse {__version__} "
                f"reads format {self.FORMAT_VERSION} only: retrain the pipeline with this version"
            )

    # The table: name (= file name) -> function giving its bytes.
    def _serial_parts(self) -> Dict[str, Callable[[], bytes]]:
        raise NotImplementedError

    def _load_parts(self, parts: Dict[str, bytes], where: Callable[[str], str]) -> None:
        """Restore the component from ``{name: bytes}``; ``where(name)`` says
        where a part came from, for error messages. Excluded parts are absent.
        The dict is the component's to consume (popping a large part frees its
        bytes as soon as it is decoded)."""
        raise NotImplementedError

    def _require_part(self, parts: Dict[str, bytes], name: str, where: Callable[[str], str]) -> bytes:
        if name not in parts:
            raise ModelDataError(f"{where(name)}: missing (the saved component is incomplete)")
        return parts[name]

    @property
    def is_initialized(self) -> bool:
        raise NotImplementedError

    def _require_initialized(self) -> None:
        if not self.is_initialized:
            raise ValueError(f"[{self.name}] the component is not initialized: call "
                             "nlp.initialize() or load a trained pipeline before parsing")

    def __reduce__(self):
        """Pickled through ``to_bytes``: the settings and the learner as
        objects, the model as its serialized parts. (spaCy's ``Pipe`` is a
        Cython class whose own pickling would copy ``__dict__`` as it is.)"""
        state = {k: v for k, v in self.__dict__.items() if k not in self.TRANSIENT_ATTRS}
        state["name"] = self.name
        model = self.to_bytes() if self.is_initialized else None
        return (_unpickle_pipe, (type(self), state, model))

    def _restore_pickled(self, state: dict, model: Optional[bytes]) -> None:
        self.__dict__.update(state)
        self.name = state["name"]
        for attr in self.TRANSIENT_ATTRS:
            self.__dict__.setdefault(attr, None)
        if model is not None:
            self.from_bytes(model)


def _unpickle_pipe(cls, state: dict, model: Optional[bytes]):
    pipe = cls.__new__(cls)
    pipe._restore_pickled(state, model)
    return pipe

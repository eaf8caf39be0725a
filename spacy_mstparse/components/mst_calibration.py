"""Calibrating an ``mst_parser``'s probabilities on parsed sentences with gold
trees: the head temperature T of p(tree) proportional to exp(score / T)
and the label temperature of the labeler's distribution p(labels | tree)
(temperature scaling, Guo et al. 2017: ``graph.temperature``), and the
expected calibration error (15 bins; Naeini et al. 2015) of
``token._.head_prob`` against head correctness and of ``token._.dep_prob``
against label correctness over the words whose predicted head is right,
at T = 1 and at the fitted temperatures.

What the parser's ``score`` runs on the dev examples spaCy's training loop
evaluates after updates (so a trained pipeline is calibrated on the dev
corpus ``spacy train`` reads), and what ``calibrate`` runs on another
treebank. The parses, head and label probabilities are those the pipe
gives at run time: the sentences (chunks) of the predicted docs, the tags
its earlier components assigned.
"""
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example

from ..corpus.conll_reader import doc_label
from ..decoders.dispatch import DECODERS
from ..graph.calibration_metrics import calibration_report
from ..graph.marginals import arc_marginals
from ..graph.temperature import fit_scalar, head_log_likelihood, label_log_likelihood
from .base import aligned_parse

THRESHOLDS = (0.9, 0.99)
# The temperatures searched (graph.temperature.fit_scalar): low, high, grid
# points over log T (about 0.9 apart), at most 10 evaluations of Brent's
# method between the best grid point's neighbours, stopping when T is known
# within 3%. Fitted head temperatures are near 0.2-0.4 and label
# temperatures near 15 on full treebanks; the range leaves room on both sides.
FIT_SEARCH = {"low": 0.01, "high": 500.0, "grid": 13, "refine": 10, "tol": 0.03}
# Words the temperatures are fitted on (every k-th sentence up to about this
# many words: one number each, which a few thousand words determine); the
# errors are measured on every word scored.
MAX_FIT_WORDS = 5000
# The sentences (chunks) a fit reads are at most this long, unless fewer
# than half the words it wants are left: the cost of the scores and
# marginals grows with the cube of the length (in the Czech CLTT dev set,
# legal text, the sentences over 100 words hold a quarter of the words and
# 96% of that cost; fitted without them, T moved by under 1% and the errors
# measured on every word stayed level). The fits of a training (``score``,
# ``before_to_disk``) score only these chunks and measure the errors on
# them; ``calibrate`` and an evaluation without a fit read every word.
MAX_FIT_LENGTH = 100
# The calibration errors the parser's ``score`` reports (``score_keys``),
# shown in spaCy's training output and meta.json, weighing nothing.
SCORE_WEIGHTS = {"head_ece": 0.0, "dep_ece": 0.0, "head_ece_t1": 0.0, "dep_ece_t1": 0.0}
# Gold head / label codes besides positions and label ids.
OUTSIDE, UNKNOWN = -1, -2


class Scored(NamedTuple):
    """One parsed sentence (chunk) with its gold tree, as calibration sees it."""
    sentence: Any                 # the encoded Sentence
    arc: numpy.ndarray            # arc scores
    sib: Optional[numpy.ndarray]  # sibling scores (order 2 and 3) or None
    gold: numpy.ndarray           # gold heads (int32, entry 0 = -1; OUTSIDE: outside
                                  # the chunk, UNKNOWN: not annotated / not aligned)
    predicted: numpy.ndarray      # the parser's heads
    labels: numpy.ndarray         # the parser's label ids
    gold_labels: numpy.ndarray    # gold label ids (OUTSIDE: a label the model lacks)
    tags: List[str]               # the words' coarse tags (token.pos_)


def _short_suffice(lengths: Sequence[int], max_length: int, max_words: int) -> bool:
    """Whether the chunks of at most ``max_length`` words, of chunks of these
    lengths, hold at least half of ``max_words`` words (or of all there are)."""
    return 2 * sum(n for n in lengths if n <= max_length) >= min(max_words, sum(lengths))


def _short_chunks(chunked: list, max_length: int) -> list:
    """``chunked`` with only its chunks of at most ``max_length`` words,
    unless those hold under half of the words a fit reads (``MAX_FIT_WORDS``,
    or all there are): then unchanged."""
    lengths = [end - start for *_, chunks in chunked for start, end, _ in chunks]
    if not _short_suffice(lengths, max_length, MAX_FIT_WORDS):
        return chunked
    return [(*rest, [c for c in chunks if c[1] - c[0] <= max_length]) for *rest, chunks in chunked]


def _scored_docs(pipe, parsed: Sequence[Tuple[Doc, Sequence[Optional[int]],
                                                Sequence[Optional[str]]]],
                 max_length: Optional[int] = None) -> List[Scored]:
    """The chunks of the parsed docs of ``parsed`` (doc, the gold head
    (token index) and the gold label of each of its tokens, None: unknown),
    the docs encoded together; with ``max_length``, those of at most that
    many words (``_short_chunks``)."""
    # labels as the Doc says them (a model's "root" is "ROOT" there)
    label_ids = {doc_label(label): i for i, label in enumerate(pipe.cfg["labels"])}
    chunked = [(doc, heads, deps, pipe.chunk_spans(pipe.sentence_spans(doc)))
               for doc, heads, deps in parsed]
    if max_length is not None:
        chunked = _short_chunks(chunked, max_length)
    encoded = pipe.encoder.encode_docs([(doc, [(s, e) for s, e, _ in chunks])
                                        for doc, _, _, chunks in chunked])
    out = []
    for (doc, heads, deps, chunks), sentences in zip(chunked, encoded):
        for (start, end, _), sentence in zip(chunks, sentences):
            gold = numpy.full(end - start + 1, -1, dtype="int32")
            gold_labels = numpy.full(end - start + 1, -1, dtype="int32")
            for c, i in enumerate(range(start, end), 1):
                h = heads[i]
                if h is None:
                    gold[c] = UNKNOWN
                else:
                    gold[c] = 0 if h == i else (h - start + 1 if start <= h < end else OUTSIDE)
                gold_labels[c] = (UNKNOWN if deps[i] is None
                                  else label_ids.get(doc_label(deps[i]), OUTSIDE))
            if (gold[1:] == UNKNOWN).all():
                continue
            factors = pipe.graph.scores(sentence)
            predicted = pipe.graph.decode(factors)[0]
            labels = pipe.graph.label(sentence, predicted)
            out.append(Scored(sentence, factors.arc, factors.sib, gold, predicted, labels,
                              gold_labels, [t.pos_ for t in doc[start:end]]))
    return out


def scored_examples(pipe, examples: Iterable[Example],
                    max_length: Optional[int] = None) -> List[Scored]:
    """Every chunk of the examples' predicted docs with a gold head (the
    reference's, aligned to the predicted tokens); with ``max_length``, of
    at most that many words (``_short_chunks``)."""
    pipe.prediction_weights()
    return _scored_docs(pipe, [(eg.predicted, *aligned_parse(eg))
                               for eg in examples if eg.reference.has_annotation("DEP")],
                        max_length)


def scored_docs(pipe, gold_docs: Sequence[Doc], docs: Sequence[Doc]) -> List[Scored]:
    """Every chunk of ``docs`` (the gold docs' words, annotated by the
    pipeline before the parser) with the gold docs' trees."""
    pipe.prediction_weights()
    return _scored_docs(pipe, [(doc, [t.head.i for t in gold], [t.dep_ for t in gold])
                               for gold, doc in zip(gold_docs, docs)])


def head_probabilities(items: Sequence[Scored], temperature, projective: bool):
    """(head_prob of each predicted head, whether it is the gold head) at
    one temperature, or at one per item (a number or one per word); words
    with an unknown gold head left out."""
    probs, correct = [], []
    temperatures = temperature if isinstance(temperature, list) else [temperature] * len(items)
    for it, t in zip(items, temperatures):
        words = numpy.flatnonzero(it.gold != UNKNOWN)
        words = words[words > 0]
        marg = arc_marginals(it.arc, t, projective, it.sib).probs
        probs.append(marg[it.predicted[words], words])
        correct.append(it.predicted[words] == it.gold[words])
    if not probs:
        return numpy.zeros(0), numpy.zeros(0, dtype=bool)
    return numpy.concatenate(probs), numpy.concatenate(correct)


def _label_words(it: Scored) -> numpy.ndarray:
    """The words whose label probability is measured: predicted head right,
    gold label known."""
    words = numpy.flatnonzero((it.predicted == it.gold) & (it.gold_labels != UNKNOWN))
    return words[words > 0]


def label_probabilities(model, items: Sequence[Scored], temperatures: Sequence[float]):
    """(dep_prob of each predicted label, whether it is the gold label) over
    the words whose predicted head is right, at each of ``temperatures``."""
    probs: List[list] = [[] for _ in temperatures]
    correct = []
    for it in items:
        words = _label_words(it)
        if len(words):
            for out, marg in zip(probs, model.label_marginals_at(it.sentence, it.predicted,
                                                                 temperatures)):
                out.append(marg[words, it.labels[words]])
            correct.append(it.labels[words] == it.gold_labels[words])
    if not correct:
        return [(numpy.zeros(0), numpy.zeros(0, dtype=bool)) for _ in temperatures]
    right = numpy.concatenate(correct)
    return [(numpy.concatenate(p), right) for p in probs]


def _fit_sample(items: Sequence[Scored], max_words: Optional[int]) -> List[Scored]:
    """Every k-th item of at most ``MAX_FIT_LENGTH`` words (of any length
    when those hold under half of ``max_words``, or of the words there
    are), k chosen so that about ``max_words`` words remain; every item
    when ``max_words`` is None."""
    if max_words is None:
        return list(items)
    lengths = [len(it.gold) - 1 for it in items]
    if _short_suffice(lengths, MAX_FIT_LENGTH, max_words):
        items = [it for it, n in zip(items, lengths) if n <= MAX_FIT_LENGTH]
        lengths = [n for n in lengths if n <= MAX_FIT_LENGTH]
    words = sum(lengths)
    if words <= max_words:
        return list(items)
    step = int(numpy.ceil(words / max_words))
    return list(items[::step])


def fit_temperatures(pipe, items: Sequence[Scored], max_words: Optional[int] = MAX_FIT_WORDS,
                     before: Tuple[float, float] = (1.0, 1.0)) -> Dict[str, Any]:
    """Fit the head and label temperatures on ``items`` (on a sample of about
    ``max_words`` words) and report the errors at the ``before`` (head,
    label) temperatures and at the fitted ones on all of them. Does not
    change the pipe."""
    graph = pipe.graph
    projective = DECODERS[graph.decoder].projective
    sample = _fit_sample(items, max_words)
    # the search climbs from the pipe's temperatures: those fitted last (to
    # the weights of the previous evaluation), 1 before the first fit
    heads = [(it.arc, it.gold, it.sib) for it in sample]  # unknown heads (< 0) left out
    head_t, _ = fit_scalar(lambda t: head_log_likelihood(heads, t, projective), **FIT_SEARCH,
                           start=pipe.cfg["temperature"])
    label_t = None
    if graph.labeler is not None:
        labels = [(it.sentence, it.predicted, _gold_where(it)) for it in sample]
        label_t, _ = fit_scalar(lambda t: label_log_likelihood(graph, labels, t), **FIT_SEARCH,
                                start=pipe.cfg["label_temperature"])
    result = report(pipe, items, before, (head_t, label_t))
    result["fitted_on_words"] = sum(len(it.gold) - 1 for it in sample)
    return result


def _gold_where(it: Scored) -> numpy.ndarray:
    """Gold label ids on the words whose predicted head is right, -1 elsewhere."""
    gold = numpy.full(len(it.gold), -1, dtype="int32")
    words = _label_words(it)
    gold[words] = it.gold_labels[words]
    return gold


def report(pipe, items: Sequence[Scored], before: Tuple[float, float],
           after: Tuple[float, Optional[float]]) -> Dict[str, Any]:
    """The errors of head_prob and (with a labeler) dep_prob over ``items``
    at the ``before`` and ``after`` (head, label) temperatures."""
    graph = pipe.graph
    projective = DECODERS[graph.decoder].projective
    parts = {"head": (lambda ts: [head_probabilities(items, t, projective) for t in ts], 0)}
    if graph.labeler is not None:
        parts["label"] = (lambda ts: label_probabilities(graph, items, ts), 1)
    out: Dict[str, Any] = {"sentences": len(items), "fitted_on_words": 0}
    for part, (probabilities, k) in parts.items():
        at_before, at_after = probabilities([before[k], after[k]])
        out[part] = {"temperature": float(after[k]), "temperature_before": float(before[k]),
                     "before": calibration_report(*at_before, THRESHOLDS),
                     "after": calibration_report(*at_after, THRESHOLDS)}
    return out


def apply_temperatures(pipe, fitted: Dict[str, Any]) -> None:
    """Set the fitted temperatures in the pipe's cfg, with a summary."""
    pipe.cfg["temperature"] = fitted["head"]["temperature"]
    if "label" in fitted:
        pipe.cfg["label_temperature"] = fitted["label"]["temperature"]
    pipe.cfg["calibration"] = summary(fitted)


def summary(fitted: Dict[str, Any]) -> Dict[str, Any]:
    """The saved record of a fit: temperatures, words, ECE before / after."""
    out = {"sentences": fitted["sentences"], "fitted_on_words": fitted["fitted_on_words"]}
    for part in ("head", "label"):
        if part in fitted:
            rep = fitted[part]
            out[part] = {"temperature": rep["temperature"], "words": rep["after"]["words"],
                         "ece_before": rep["before"]["ece"], "ece": rep["after"]["ece"]}
    return out


def score_keys(fitted: Optional[Dict[str, Any]]) -> Dict[str, float]:
    """The calibration scores the parser reports: ``head_ece`` / ``dep_ece``
    at its temperatures and ``head_ece_t1`` / ``dep_ece_t1`` at T = 1."""
    out = {}
    for part, key in (("head", "head_ece"), ("label", "dep_ece")):
        if fitted and part in fitted:
            out[key] = fitted[part]["after"]["ece"]
            out[f"{key}_t1"] = fitted[part]["before"]["ece"]
    return out


def calibrate_on_examples(pipe, examples: Sequence[Example], fit: bool) -> Dict[str, float]:
    """What the parser's ``score`` adds: with ``fit`` (after updates), fit
    and set the temperatures on the examples' chunks of at most
    ``MAX_FIT_LENGTH`` words (``_short_chunks``: the fits of a training
    skip the long sentences, whose marginals cost the most); the errors, on
    the same chunks (every chunk without ``fit``), as score keys."""
    items = scored_examples(pipe, examples, MAX_FIT_LENGTH if fit else None)
    if not items or not any((it.gold[1:] >= 0).any() for it in items):
        return {}
    if fit:
        fitted = fit_temperatures(pipe, items)
        apply_temperatures(pipe, fitted)
    else:  # the errors at T = 1 and at the pipe's temperatures
        fitted = report(pipe, items, (1.0, 1.0),
                        (pipe.cfg["temperature"], pipe.cfg["label_temperature"]))
    return score_keys(fitted)


def calibrate_in_pipeline(nlp, name: str, examples: Sequence[Example]) -> None:
    """Fit the temperatures of ``nlp``'s parser ``name`` on ``examples`` as
    its ``score`` in ``nlp.evaluate`` would, without the evaluation: the
    components before it annotate the examples' predicted docs, the parser
    parses them once, here."""
    names = nlp.pipe_names
    with nlp.select_pipes(enable=names[:names.index(name)]):
        # on copies, as spaCy's evaluate works: the examples may be kept (a cached corpus)
        docs = list(nlp.pipe(eg.predicted.copy() for eg in examples))
    nlp.get_pipe(name).calibrate([Example(doc, eg.reference) for doc, eg in zip(docs, examples)])

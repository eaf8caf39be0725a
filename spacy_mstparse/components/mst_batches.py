"""How the ``mst_parser`` pipe predicts a batch of docs, in three steps that
``DependencyPipe.pipe`` overlaps: ``prepare_batch`` (Python: the docs'
sentences and chunks, the tag checks, the docs that need more than a plain
parse analysed one by one, the others encoded in one table and made a
``graph.batch.BatchParse``), ``parse_prepared`` (C without the GIL, which
several threads may share) and ``predictions`` (the ``(chunks, parses)`` of
every doc)."""
from typing import Iterable

from spacy.tokens import Doc

from ..graph.analysis import analyse
from . import extensions


def prepare_batch(pipe, docs: Iterable[Doc]) -> tuple:
    """(chunks of every doc, the analysed parses or None for the plain docs,
    the plain docs' encoded sentences, their ``BatchParse`` or None). The
    plain docs: no probabilities, n-best lists or constraints."""
    pipe.prediction_weights()
    cfg = pipe.cfg
    plain = not cfg["probabilities"] and cfg["n_best"] == 1
    chunked, results, batch = [], [], []
    for doc in docs:
        chunks = pipe.chunk_spans(pipe.sentence_spans(doc))
        if chunks:
            pipe.check_tags(doc)
        chunked.append(chunks)
        if plain and chunks and not extensions.has_constraints(doc):
            batch.append((doc, [(start, end) for start, end, _ in chunks]))
            results.append(None)
        else:
            results.append(analyse_doc(pipe, doc, chunks))
    encoded = pipe.encoder.encode_docs(batch)  # one table for all the docs' words
    sentences = [sentence for doc in encoded for sentence in doc]
    return chunked, results, encoded, pipe.graph.batch_parse(sentences) if sentences else None


def parse_prepared(pipe, prepared: tuple, n_threads: int) -> None:
    """Parse the plain sentences of a prepared batch with ``n_threads``
    threads (other Python threads may join: ``BatchParse``)."""
    if prepared[3] is not None:
        prepared[3].run(n_threads)


def predictions(prepared: tuple) -> list:
    """``(chunks, parses)`` of every doc of a prepared batch, once parsed."""
    chunked, results, encoded, job = prepared
    parses = iter(job.results() if job is not None else ())
    slots = (i for i, result in enumerate(results) if result is None)
    for i, sentences in zip(slots, encoded):
        results[i] = [next(parses) for _ in sentences]
    return list(zip(chunked, results))


def analyse_doc(pipe, doc: Doc, chunks) -> list:
    """``SentenceParse`` of every chunk ``(start, end, continues)`` of a
    doc under the settings (probabilities, n-best lists, constraints)."""
    cfg = pipe.cfg
    sentences = pipe.encoder.encode(doc, [(start, end) for start, end, _ in chunks])
    constrained = extensions.has_constraints(doc)
    return [analyse(pipe.graph, sentence, probabilities=cfg["probabilities"],
                    n_best=cfg["n_best"], temperature=cfg["temperature"],
                    label_temperature=cfg["label_temperature"],
                    constraints=(extensions.sentence_constraints(doc, start, end)
                                 if constrained else None), policy=pipe.constraint_policy)
            for (start, end, _), sentence in zip(chunks, sentences)]

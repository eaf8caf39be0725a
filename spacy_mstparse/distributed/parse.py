"""``ray-parse``: parse a file or a folder of files on Ray workers, with the
output of ``parse`` (the same steps of ``evaluation``: ``check_parse_args``,
``read_parse_input``, ``parse_items``, ``render_parses``).

The driver loads the pipeline once, reads and checks every input (CoNLL
files: all sentences validated, tag sources planned with ``parse``'s
warnings), cuts each file's items into chunks and puts the pipeline (its
config and ``nlp.to_bytes()``) in Ray's object store once. N ``ParseWorker``
actors each build the pipeline once from it; a chunk (gold Docs as a DocBin
with their CoNLL comments, or text lines) goes to the actors round-robin
and comes back as CoNLL-U text. The driver joins each file's chunks in input
order and writes the file atomically once all of them are back, so a dead
worker or a failed chunk leaves no output file (files of a folder finished
before the failure are complete).

``ParseBatch`` is the entry point for Ray Data: a callable class for
``Dataset.map_batches`` that parses a column of texts (one document per row,
as the lines of a text file given to ``parse``) into a column of CoNLL-U.
"""
import math
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .cluster import DistributedError, gather, kill_actors, ray_session, require_ray

INPUT_SUFFIXES = (".conllu", ".conll", ".conllx", ".txt")
CHUNKS_PER_WORKER = 4
MAX_CHUNK_DOCS = 2000


def _expected_errors() -> tuple:
    """Input errors a worker may raise that the CLI reports like ``parse``."""
    from ..corpus.conll import ConllFormatError, EmptyInputError, InvalidTreeError
    from ..evaluation import EvaluationError

    return (EvaluationError, ConllFormatError, EmptyInputError, InvalidTreeError)


def input_files(input_path: Path, output_path: Path) -> List[Tuple[Path, Path]]:
    """(input, output) pairs: the file itself, or every .conllu / .conll /
    .conllx / .txt file of a folder (sorted) -> OUTPUT/<stem>.conllu."""
    from ..evaluation import EvaluationError

    input_path, output_path = Path(input_path), Path(output_path)
    if not input_path.is_dir():
        return [(input_path, output_path)]
    if output_path.exists() and not output_path.is_dir():
        raise EvaluationError(f"{input_path} is a folder: the output {output_path} must be a folder too")
    files = sorted(p for p in input_path.iterdir()
                   if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES)
    if not files:
        raise EvaluationError(f"{input_path} holds no {' / '.join(INPUT_SUFFIXES)} file")
    pairs, seen = [], {}
    for path in files:
        out = output_path / f"{path.stem}.conllu"
        if out.name in seen:
            raise EvaluationError(f"{seen[out.name]} and {path} would both be written to {out}")
        seen[out.name] = path
        pairs.append((path, out))
    return pairs


def chunk_bounds(n_items: int, workers: int, chunk_size: Optional[int] = None) -> List[Tuple[int, int]]:
    """[start, end) of the chunks of a file (about CHUNKS_PER_WORKER per worker)."""
    size = chunk_size or min(MAX_CHUNK_DOCS, max(1, math.ceil(n_items / (workers * CHUNKS_PER_WORKER))))
    return [(i, min(n_items, i + size)) for i in range(0, n_items, size)]


class ParseWorker:
    """A Ray actor: the pipeline, built once from the object store."""

    def __init__(self, pipeline: Tuple[str, bytes]):
        from .train import pipeline_from_bytes

        self.nlp = pipeline_from_bytes(*pipeline)

    def ready(self) -> bool:
        return True

    def parse_chunk(self, fmt: str, payload, copy_attrs: Sequence[str], batch_size: int,
                    first_doc: int, first_sentence: int, input_path: str,
                    output_path: str) -> Dict[str, Any]:
        """CoNLL-U of one chunk (text lines, or DocBin bytes of gold Docs)."""
        from spacy.tokens import DocBin

        from ..corpus.conll import sentence_bounds
        from ..parsing import parse_items, render_parses

        items = payload if fmt == "text" else list(DocBin().from_bytes(payload).get_docs(self.nlp.vocab))
        docs, n_dropped = parse_items(self.nlp, fmt, items, copy_attrs, batch_size,
                                      progress=False, first_doc=first_doc)
        return {"text": render_parses(docs, input_path, output_path, first_sentence),
                "docs": len(docs), "tokens": sum(len(d) for d in docs),
                "sentences": sum(len(sentence_bounds(d)) for d in docs), "dropped": n_dropped}


def ray_parse(model, input_path, output_path, workers: int, address: Optional[str] = None,
              fmt: str = "auto", gold_tags: bool = False, batch_size: int = 64,
              chunk_size: Optional[int] = None) -> Dict[str, Any]:
    """Parse a file (or every file of a folder) on ``workers`` Ray actors and
    write what ``parse`` writes. Returns a summary (totals and per file)."""
    require_ray()
    from spacy.tokens import DocBin

    from ..corpus.atomic import atomic_write_text
    from ..evaluation import load_pipeline
    from ..parsing import check_parse_args, read_parse_input, warn_resegmented

    pairs = input_files(Path(input_path), Path(output_path))
    formats = [check_parse_args(inp, out, fmt, gold_tags, batch_size) for inp, out in pairs]
    nlp = load_pipeline(model)
    jobs = []
    for (inp, out), file_fmt in zip(pairs, formats):
        items, copy_attrs = read_parse_input(nlp, model, inp, file_fmt, gold_tags)
        jobs.append((inp, out, file_fmt, items, copy_attrs))
    start = time.perf_counter()
    files = []
    with ray_session(workers, address) as ray:
        pipeline_ref = ray.put((nlp.config.to_str(), nlp.to_bytes()))
        actor_cls = ray.remote(num_cpus=1)(ParseWorker)
        actors = [actor_cls.remote(pipeline_ref) for _ in range(workers)]
        try:
            gather([a.ready.remote() for a in actors],
                   [f"loading the pipeline on worker {i + 1}" for i in range(workers)])
            ready = time.perf_counter()
            submitted, k = [], 0
            for inp, out, file_fmt, items, copy_attrs in jobs:
                refs, names, n_sents = [], [], 0
                for a, b in chunk_bounds(len(items), workers, chunk_size):
                    if file_fmt == "text":
                        payload = items[a:b]
                    else:
                        payload = DocBin(docs=items[a:b], store_user_data=True).to_bytes()
                    actor = actors[k % workers]
                    k += 1
                    refs.append(actor.parse_chunk.remote(
                        file_fmt, ray.put(payload), copy_attrs, batch_size, a + 1, n_sents + 1,
                        str(inp), str(out)))
                    names.append(f"docs {a + 1}-{b} of {inp}")
                    n_sents += b - a  # CoNLL input: one sentence per Doc (text: per chunk)
                submitted.append((inp, out, file_fmt, refs, names))
            for inp, out, file_fmt, refs, names in submitted:
                parts = gather(refs, names, expected=_expected_errors())
                warn_resegmented(inp, sum(p["dropped"] for p in parts))
                atomic_write_text(out, "".join(p["text"] for p in parts))
                files.append({"input": str(inp), "output": str(out), "format": file_fmt,
                              **{key: sum(p[key] for p in parts)
                                 for key in ("docs", "sentences", "tokens")}})
        finally:
            kill_actors(actors)
    return {"input": str(input_path), "output": str(output_path), "workers": workers,
            "files": files, "seconds": time.perf_counter() - start,
            "startup_seconds": ready - start,
            **{key: sum(f[key] for f in files) for key in ("docs", "sentences", "tokens")}}


class ParseBatch:
    """Parse a column of texts with a pipeline, for Ray Data::

        ds.map_batches(ParseBatch, fn_constructor_kwargs={"model": "training/model-best"},
                       concurrency=2, batch_size=256)

    Each row's ``text_column`` is one document (whitespace normalized, as a
    line of a text file given to ``parse``); ``output_column`` gets its
    CoNLL-U (empty for an empty text). The pipeline loads once per instance."""

    def __init__(self, model, text_column: str = "text", output_column: str = "conllu",
                 batch_size: int = 64):
        from ..evaluation import load_pipeline, parser_components

        self.nlp = load_pipeline(model)
        self.model = model
        parser_components(self.nlp, model)
        self.text_column, self.output_column = text_column, output_column
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        import numpy

        from ..parsing import parse_items, render_parses

        texts = [" ".join(str(t).split()) for t in batch[self.text_column]]
        rows = [i for i, t in enumerate(texts) if t]
        docs, _ = parse_items(self.nlp, "text", [texts[i] for i in rows], (), self.batch_size,
                              progress=False)
        out = [""] * len(texts)
        for i, doc in zip(rows, docs):
            out[i] = render_parses([doc], "a Ray Data batch", "the output column")
        return {**batch, self.output_column: numpy.array(out, dtype=object)}

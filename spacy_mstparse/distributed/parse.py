"""``ray-parse``: parse a file or a folder of files on Ray workers, with the
output of ``parse`` (the same steps of ``parsing``: ``check_parse_args``,
``read_parse_input``, ``parse_items``, ``render_parses``).

The driver does no per-word work. It checks the arguments, cuts each input
file into byte ranges at sentence breaks (``corpus.byte_ranges.split_file``:
after blank lines for CoNLL, at line breaks for text; a scan that decodes
nothing) and puts the pipeline (its config and ``nlp.to_bytes()``) in Ray's
object store once; the actors import spaCy while the driver loads the
pipeline, then build it from the object store. Each chunk -- a byte range
with its first line number, its bytes read by the driver and sent through
the object store (workers on other nodes need no access to the file) -- is
decoded, validated, parsed and rendered by a worker with the steps of
``parse``, which returns CoNLL-U bytes. A worker
gets its next chunk when it returns one (two queued each), so both finish
together. The driver writes each file's chunks in input order into a
temporary file, renamed over the output when the last one is in: a dead
worker or a failed chunk leaves no output file (files of a folder finished
before the failure are complete).

Messages are ``parse``'s: errors name the file's own line numbers (a chunk
counts from its first line) and the numbers of its sentences (a chunk that
fails is parsed again with the counts of the chunks before it). The tag
plan (``plan_tags``: which tag columns come from the file) depends on the
pipeline and ``--gold-tags`` only; every chunk checks that its sentences
have those columns. The warnings of a file's chunks (the plan's, the
re-segmentation one) are shown once each when all its chunks are back, so
an input error comes without them, as in ``parse``. With several problems
in one file the first chunk's is reported (``parse``, reading the whole
file first, reports a malformed line before a sentence that fails later).

``ParseBatch`` is the entry point for Ray Data: a callable class for
``Dataset.map_batches`` that parses a column of texts (one document per row,
as the lines of a text file given to ``parse``) into a column of CoNLL-U.
"""
import math
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .cluster import DistributedError, gather, kill_actors, ray_session, require_ray

INPUT_SUFFIXES = (".conllu", ".conll", ".conllx", ".txt")
CHUNK_BYTES = 1 << 20  # about 16,000 words of CoNLL-U, 150,000 of text
MIN_CHUNKS_PER_WORKER = 4
QUEUED_PER_WORKER = 2


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


def n_chunks(n_bytes: int, workers: int, chunk_bytes: Optional[int] = None) -> int:
    """How many chunks to cut a file of ``n_bytes`` into: about ``chunk_bytes``
    (default ``CHUNK_BYTES``) each, at least ``MIN_CHUNKS_PER_WORKER`` per
    worker unless ``chunk_bytes`` is given."""
    if chunk_bytes:
        return max(1, math.ceil(n_bytes / chunk_bytes))
    return max(workers * MIN_CHUNKS_PER_WORKER, math.ceil(n_bytes / CHUNK_BYTES))


class Chunk(NamedTuple):
    """One byte range of one input file, the unit of work of a worker."""

    index: int  # chunk number within the file (0 = first)
    input_path: str
    output_path: str
    fmt: str
    byte_range: Tuple[int, int, int]  # corpus.byte_ranges.ByteRange

    def name(self) -> str:
        start, end, line = self.byte_range
        return f"{self.input_path} from line {line} (bytes {start}-{end})"


class ParseWorker:
    """A Ray actor: imports the parser at once, builds the pipeline (once)
    from the object store on ``load``, then parses chunks."""

    def __init__(self):
        from .. import parsing  # noqa: F401  (spaCy and the factories)

        self.nlp = None

    def load(self, pipeline: Tuple[str, bytes]) -> bool:
        from .train import pipeline_from_bytes

        self.nlp = pipeline_from_bytes(*pipeline)
        return True

    def parse_chunk(self, model: str, chunk: Chunk, data: bytes, gold_tags: bool,
                    batch_size: int, first_doc: int = 1, first_sentence: int = 1) -> Dict[str, Any]:
        """The CoNLL-U bytes of one chunk (``data``: its bytes), its counts
        and the warnings ``parse`` would give; ``first_doc`` /
        ``first_sentence``: the numbers in the file of its first item and
        sentence (messages)."""
        from ..corpus.byte_ranges import ByteRange
        from ..corpus.conll import sentence_bounds
        from ..parsing import parse_items, read_parse_input, render_parses

        with warnings.catch_warnings(record=True) as caught:  # the process's filters
            items, copy_attrs = read_parse_input(
                self.nlp, model, chunk.input_path, chunk.fmt, gold_tags,
                byte_range=ByteRange(*chunk.byte_range, data=data), first_doc=first_doc)
            docs, n_dropped = parse_items(self.nlp, chunk.fmt, items, copy_attrs, batch_size,
                                          progress=False, first_doc=first_doc)
            text = render_parses(docs, chunk.input_path, chunk.output_path, first_sentence)
        return {"conllu": text.encode("utf-8"), "docs": len(docs),
                "tokens": sum(len(d) for d in docs),
                "sentences": sum(len(sentence_bounds(d)) for d in docs), "dropped": n_dropped,
                "warnings": [(w.category, str(w.message)) for w in caught]}


def plan_chunks(pairs: Sequence[Tuple[Path, Path]], formats: Sequence[str], workers: int,
                chunk_bytes: Optional[int] = None) -> List[List[Chunk]]:
    """Every file's chunks (``split_file``); an empty file raises
    ``EmptyInputError`` as in ``parse``."""
    from ..corpus.byte_ranges import split_file
    from ..corpus.conll import EmptyInputError

    files = []
    for (inp, out), fmt in zip(pairs, formats):
        size = Path(inp).stat().st_size
        ranges = split_file(inp, n_chunks(size, workers, chunk_bytes),
                            at_blank_lines=fmt != "text")
        if not ranges:
            raise EmptyInputError(inp, "text") if fmt == "text" else EmptyInputError(inp)
        files.append([Chunk(i, str(inp), str(out), fmt, tuple(r[:3]))
                      for i, r in enumerate(ranges)])
    return files


def _in_order(ray, actors: Sequence[Any], chunks: Sequence[Chunk], submit) -> Iterator[Tuple[Chunk, Any]]:
    """(chunk, result ref) in input order, each once its task is done, while
    every actor is kept busy: it gets the next chunk when it returns one
    (``QUEUED_PER_WORKER`` queued each); ``submit(actor, chunk)`` -> ref."""
    refs: List[Any] = [None] * len(chunks)
    pending: Dict[Any, Tuple[int, int]] = {}
    done = set()
    next_chunk = 0

    def feed(a: int) -> None:
        nonlocal next_chunk
        if next_chunk < len(chunks):
            ref = submit(actors[a], chunks[next_chunk])
            refs[next_chunk] = ref
            pending[ref] = (next_chunk, a)
            next_chunk += 1

    for _ in range(QUEUED_PER_WORKER):
        for a in range(len(actors)):
            feed(a)
    for k, chunk in enumerate(chunks):
        while k not in done:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i, a = pending.pop(ref)
                done.add(i)
                feed(a)
        yield chunk, refs[k]
        refs[k] = None


def ray_parse(model, input_path, output_path, workers: int, address: Optional[str] = None,
              fmt: str = "auto", gold_tags: bool = False, batch_size: int = 64,
              chunk_bytes: Optional[int] = None) -> Dict[str, Any]:
    """Parse a file (or every file of a folder) on ``workers`` Ray actors and
    write what ``parse`` writes. Returns a summary (totals and per file).
    ``chunk_bytes``: the size of the chunks (default: ``n_chunks``)."""
    require_ray()
    from ..corpus.atomic import atomic_writer
    from ..corpus.byte_ranges import ByteRange
    from ..corpus.conll import EmptyInputError
    from ..evaluation import load_pipeline
    from ..parsing import check_parse_args, warn_resegmented

    pairs = input_files(Path(input_path), Path(output_path))
    formats = [check_parse_args(inp, out, fmt, gold_tags, batch_size) for inp, out in pairs]
    files = plan_chunks(pairs, formats, workers, chunk_bytes)
    start = time.perf_counter()
    loaded: Dict[str, Any] = {}
    loader = threading.Thread(target=lambda: loaded.update(nlp=_load(load_pipeline, model)),
                              daemon=True)
    loader.start()  # while Ray starts
    summaries = []
    with ray_session(workers, address) as ray:
        actor_cls = ray.remote(num_cpus=1)(ParseWorker)
        actors = [actor_cls.remote() for _ in range(workers)]
        try:
            loader.join()
            nlp = loaded["nlp"]
            if isinstance(nlp, BaseException):
                raise nlp
            pipeline_ref = ray.put((nlp.config.to_str(), nlp.to_bytes()))
            del nlp, loaded["nlp"]
            gather([a.load.remote(pipeline_ref) for a in actors],
                   [f"loading the pipeline on worker {i + 1}" for i in range(workers)])
            ready = time.perf_counter()

            def submit(actor, chunk: Chunk, first_doc: int = 1, first_sentence: int = 1):
                data = ray.put(ByteRange(*chunk.byte_range).read(chunk.input_path))
                return actor.parse_chunk.remote(str(model), chunk, data, gold_tags, batch_size,
                                                first_doc, first_sentence)

            stream = _in_order(ray, actors, [c for chunks in files for c in chunks], submit)
            for chunks in files:
                inp, out, file_fmt = chunks[0].input_path, chunks[0].output_path, chunks[0].fmt
                counts = {"docs": 0, "sentences": 0, "tokens": 0, "dropped": 0}
                caught: Dict[Tuple[type, str], None] = {}  # in order, once each
                with atomic_writer(out) as file_:
                    for chunk in chunks:
                        _, ref = next(stream)
                        part = _result(ref, chunk, lambda: submit(
                            actors[0], chunk, counts["docs"] + 1, counts["sentences"] + 1))
                        caught.update(dict.fromkeys(part["warnings"]))
                        file_.write(part["conllu"])
                        for key in counts:
                            counts[key] += part[key]
                    if counts["docs"] == 0:
                        raise EmptyInputError(inp, "text") if file_fmt == "text" else EmptyInputError(inp)
                    for category, message in caught:
                        warnings.warn(message, category)
                    warn_resegmented(inp, counts.pop("dropped"))
                summaries.append({"input": inp, "output": out, "format": file_fmt, **counts})
        finally:
            kill_actors(actors)
    return {"input": str(input_path), "output": str(output_path), "workers": workers,
            "files": summaries, "seconds": time.perf_counter() - start,
            "startup_seconds": ready - start,
            **{key: sum(f[key] for f in summaries) for key in ("docs", "sentences", "tokens")}}


def _load(load_pipeline, model):
    """The pipeline, or the error loading it (raised by the main thread)."""
    try:
        return load_pipeline(model)
    except BaseException as err:  # noqa: BLE001
        return err


def _result(ref, chunk: Chunk, again) -> Dict[str, Any]:
    """A chunk's result; an input error of a chunk after the first is raised
    from a second run (``again()``) numbered from the chunks before it."""
    try:
        return gather([ref], [chunk.name()], expected=_expected_errors())[0]
    except _expected_errors():
        if chunk.index == 0:
            raise
    gather([again()], [chunk.name()], expected=_expected_errors())
    raise DistributedError(f"{chunk.name()} failed once and not when parsed again")


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

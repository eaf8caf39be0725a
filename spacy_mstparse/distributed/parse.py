"""``ray-parse``: parse a file or a folder of files on Ray workers, with the
output of ``parse`` (the same steps of ``parsing``: ``check_parse_args``,
``read_parse_input``, ``parse_items``, ``render_parses``).

The driver checks the arguments and cuts each input file into byte ranges
at sentence breaks (``corpus.byte_ranges.split_file``: after blank lines for
CoNLL, at line breaks for text; a scan that decodes nothing). While Ray
starts and the actors import spaCy, a driver thread (``StartupShare``)
loads the pipeline -- put in Ray's object store once (its config and
``nlp.to_bytes()``), the actors build it from there -- and then parses
chunks from the front of the input itself until the actors are ready (the
cores are not busy while Ray starts; ``driver_share=False`` turns it off);
the actors take the rest. Each chunk -- a byte range
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
CHUNK_BYTES = 1 << 19  # about 7,500 words of CoNLL-U (0.3 s of parsing), 75,000 of text
MIN_CHUNKS_PER_WORKER = 4
QUEUED_PER_WORKER = 2


def _expected_errors() -> tuple:
    """Input errors a worker may raise that the CLI reports like ``parse``."""
    from ..corpus.conll import ConllFormatError, EmptyInputError, InvalidTreeError
    from ..pipeline_input import EvaluationError

    return (EvaluationError, ConllFormatError, EmptyInputError, InvalidTreeError)


def input_files(input_path: Path, output_path: Path) -> List[Tuple[Path, Path]]:
    """(input, output) pairs: the file itself, or every .conllu / .conll /
    .conllx / .txt file of a folder (sorted) -> OUTPUT/<stem>.conllu."""
    from ..pipeline_input import EvaluationError

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

        cpu = time.thread_time()
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
                "warnings": [(w.category, str(w.message)) for w in caught],
                "cpu_seconds": time.thread_time() - cpu}


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


class StartupShare(threading.Thread):
    """The driver's thread while Ray starts: loads the pipeline and its bytes
    for the object store (``pipeline``, or ``error``; ``loaded`` is set
    then), and with ``parse`` parses chunks from the front of the input with
    a ``ParseWorker``'s own steps until ``stop()`` (the actors are ready):
    ``results[k]`` is chunk k's result, or the exception it raised (the
    thread stops there). ``ParseWorker.parse_chunk`` records warnings with
    ``warnings.catch_warnings``, which is process-wide: the main thread
    only starts Ray and feeds the actors meanwhile, and emits none."""

    def __init__(self, model, chunks: Sequence[Chunk], gold_tags: bool, batch_size: int,
                 parse: bool = True):
        super().__init__(daemon=True)
        self.model, self.chunks, self.parse = model, chunks, parse
        self.args = (gold_tags, batch_size)
        self.loaded = threading.Event()
        self.pipeline: Optional[Tuple[str, bytes]] = None
        self.error: Optional[BaseException] = None
        self.results: Dict[int, Any] = {}
        self._lock = threading.Lock()
        self._stopped = False
        self._claimed = 0

    def run(self) -> None:
        from ..corpus.byte_ranges import ByteRange
        from ..pipeline_input import load_pipeline

        try:
            nlp = load_pipeline(self.model)
            self.pipeline = (nlp.config.to_str(), nlp.to_bytes())
        except BaseException as err:  # noqa: BLE001  (raised by the main thread)
            self.error = err
            return
        finally:
            self.loaded.set()
        worker = ParseWorker()
        worker.nlp = nlp
        while self.parse:
            with self._lock:
                if self._stopped or self._claimed == len(self.chunks):
                    return
                k = self._claimed
                self._claimed += 1
            chunk = self.chunks[k]
            try:
                data = ByteRange(*chunk.byte_range).read(chunk.input_path)
                self.results[k] = worker.parse_chunk(str(self.model), chunk, data, *self.args)
            except BaseException as err:  # noqa: BLE001
                self.results[k] = err
                return

    def stop(self) -> int:
        """Take no further chunk; returns how many were taken."""
        with self._lock:
            self._stopped = True
            return self._claimed


def _in_order(ray, actors: Sequence[Any], chunks: Sequence[Chunk], submit,
              local: StartupShare) -> Iterator[Tuple[Chunk, Any]]:
    """(chunk, its result ref, or for the chunks ``local`` took its result)
    in input order, each once done, while every actor is kept busy: it gets
    the next chunk when it returns one (``QUEUED_PER_WORKER`` queued each);
    ``submit(actor, chunk)`` -> ref."""
    refs: List[Any] = [None] * len(chunks)
    pending: Dict[Any, Tuple[int, int]] = {}
    n_local = local.stop()
    done = set(range(n_local))
    next_chunk = n_local

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
        if k < n_local:
            while local.is_alive() and k not in local.results:
                _collect(ray, pending, done, feed, timeout=0.05)
            if k not in local.results:  # stopped by an error before chunk k
                raise DistributedError(f"{chunk.name()} was not parsed")
            yield chunk, local.results.pop(k)
            continue
        while k not in done:
            _collect(ray, pending, done, feed)
        yield chunk, refs[k]
        refs[k] = None


def _collect(ray, pending: Dict[Any, Tuple[int, int]], done: set, feed,
             timeout: Optional[float] = None) -> None:
    """Wait for a task (at most ``timeout`` s); each one done frees its actor
    for the next chunk."""
    if not pending:
        if timeout:
            time.sleep(timeout)
        return
    ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
    for ref in ready:
        i, a = pending.pop(ref)
        done.add(i)
        feed(a)


def ray_parse(model, input_path, output_path, workers: int, address: Optional[str] = None,
              fmt: str = "auto", gold_tags: bool = False, batch_size: int = 64,
              chunk_bytes: Optional[int] = None, driver_share: bool = True,
              progress: Optional[bool] = None) -> Dict[str, Any]:
    """Parse a file (or every file of a folder) on ``workers`` Ray actors and
    write what ``parse`` writes. Returns a summary (totals and per file).
    ``chunk_bytes``: the size of the chunks (default: ``n_chunks``);
    ``driver_share``: the driver parses the first chunks while Ray starts;
    ``progress``: a bar of the chunks written (None: on a terminal)."""
    require_ray()
    from ..corpus.atomic import atomic_writer
    from ..corpus.byte_ranges import ByteRange
    from ..corpus.conll import EmptyInputError
    from ..parsing import check_parse_args, warn_resegmented
    from ..progress import progress_bar

    pairs = input_files(Path(input_path), Path(output_path))
    formats = [check_parse_args(inp, out, fmt, gold_tags, batch_size) for inp, out in pairs]
    files = plan_chunks(pairs, formats, workers, chunk_bytes)
    chunks = [c for file_chunks in files for c in file_chunks]
    start = time.perf_counter()
    local = StartupShare(model, chunks, gold_tags, batch_size, parse=driver_share)
    local.start()  # while Ray starts
    summaries = []
    cpu = {"driver": 0.0, "workers": 0.0}
    bar = progress_bar(total=len(chunks), desc=f"parsing on {workers} Ray workers",
                       unit=" chunks", show=progress)
    with bar, ray_session(workers, address) as ray:
        actor_cls = ray.remote(num_cpus=1)(ParseWorker)
        actors = [actor_cls.remote() for _ in range(workers)]
        try:
            local.loaded.wait()
            if local.error is not None:
                raise local.error
            pipeline_ref = ray.put(local.pipeline)
            local.pipeline = None
            gather([a.load.remote(pipeline_ref) for a in actors],
                   [f"loading the pipeline on worker {i + 1}" for i in range(workers)])
            ready = time.perf_counter()

            def submit(actor, chunk: Chunk, first_doc: int = 1, first_sentence: int = 1):
                data = ray.put(ByteRange(*chunk.byte_range).read(chunk.input_path))
                return actor.parse_chunk.remote(str(model), chunk, data, gold_tags, batch_size,
                                                first_doc, first_sentence)

            stream = _in_order(ray, actors, chunks, submit, local)
            for file_chunks in files:
                inp, out, file_fmt = (file_chunks[0].input_path, file_chunks[0].output_path,
                                      file_chunks[0].fmt)
                counts = {"docs": 0, "sentences": 0, "tokens": 0, "dropped": 0}
                caught: Dict[Tuple[type, str], None] = {}  # in order, once each
                with atomic_writer(out) as file_:
                    for chunk in file_chunks:
                        _, result = next(stream)
                        part = _result(result, chunk, lambda: submit(
                            actors[0], chunk, counts["docs"] + 1, counts["sentences"] + 1))
                        caught.update(dict.fromkeys(part["warnings"]))
                        file_.write(part["conllu"])
                        cpu["driver" if isinstance(result, dict) else "workers"] += part["cpu_seconds"]
                        for key in counts:
                            counts[key] += part[key]
                        bar.update()
                    if counts["docs"] == 0:
                        raise EmptyInputError(inp, "text") if file_fmt == "text" else EmptyInputError(inp)
                    for category, message in caught:
                        warnings.warn(message, category)
                    warn_resegmented(inp, counts.pop("dropped"))
                summaries.append({"input": inp, "output": out, "format": file_fmt, **counts})
        finally:
            local.stop()
            kill_actors(actors)
    return {"input": str(input_path), "output": str(output_path), "workers": workers,
            "files": summaries, "seconds": time.perf_counter() - start,
            "startup_seconds": ready - start, "chunks": len(chunks),
            "driver_chunks": local.stop(), "driver_cpu_seconds": cpu["driver"],
            "worker_cpu_seconds": cpu["workers"],
            **{key: sum(f[key] for f in summaries) for key in ("docs", "sentences", "tokens")}}


def _result(result, chunk: Chunk, again) -> Dict[str, Any]:
    """A chunk's result (a ref, or what the driver's thread returned or
    raised); an input error of a chunk after the first is raised from a
    second run (``again()``) numbered from the chunks before it."""
    try:
        if isinstance(result, dict):
            return result
        if isinstance(result, BaseException):
            raise result
        return gather([result], [chunk.name()], expected=_expected_errors())[0]
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
    CoNLL-U (empty for an empty text): a document (``# newdoc id``) named
    by the row's ``id_column`` (without one: its index in the batch), whose
    sentences are ``<id>-1``, ``<id>-2``, ... in ``# sent_id`` (so the ids
    stay unique across rows with ids). Ray Data may return the rows in
    another order: an id column is how to match them back to their inputs.
    The pipeline loads once per instance."""

    def __init__(self, model, text_column: str = "text", output_column: str = "conllu",
                 batch_size: int = 64, id_column: str = "id"):
        from ..pipeline_input import load_pipeline, parser_components

        self.nlp = load_pipeline(model)
        self.model = model
        parser_components(self.nlp, model)
        self.text_column, self.output_column = text_column, output_column
        self.id_column = id_column
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        import numpy

        from ..parsing import TextDoc, parse_items, render_parses

        texts = [" ".join(str(t).split()) for t in batch[self.text_column]]
        rows = [i for i, t in enumerate(texts) if t]
        ids = batch.get(self.id_column)  # the documents' ids (# newdoc id, sent_id ID-k)
        docs, _ = parse_items(self.nlp, "text", [TextDoc(str(i if ids is None else ids[i]),
                                                         texts[i]) for i in rows],
                              (), self.batch_size, progress=False)
        out = [""] * len(texts)
        for i, doc in zip(rows, docs):
            out[i] = render_parses([doc], "a Ray Data batch", "the output column")
        return {**batch, self.output_column: numpy.array(out, dtype=object)}

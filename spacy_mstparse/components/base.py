"""What the two parser components share: the spaCy ``Pipe`` plumbing of a
parser with its own (non-thinc) linear model.

``mst_parser`` (graph-based, McDonald et al. 2005) and ``arcstandard_svm``
(transition-based) differ in their models and data, not in how they sit in a
spaCy pipeline: both are trainable without thinc's optimizer, parse each
sentence (``doc.sents``, or a documented fallback) in chunks of at most
``max_sentence_length`` words, warn once per missing annotation, score with
the project's scorer, and save a ``cfg`` with the model format version,
refusing other versions with an error naming both.
"""
import warnings
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

import numpy
import srsly
from spacy.attrs import SENT_START
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import minibatch

from .. import __version__

# Tokens after which the fallback sentence splitter ends a sentence.
SENTENCE_FINAL = frozenset([".", "!", "?", "...", "…", "!!", "??", "?!", "!?"])


class DependencyPipe(Pipe):
    """Base class of the two parser components.

    Subclasses set ``FORMAT_VERSION`` and provide ``predict`` and
    ``set_annotations``; ``self.cfg`` must hold ``max_sentence_length``.
    """

    FORMAT_VERSION = 1

    @property
    def is_trainable(self) -> bool:
        return True

    def use_params(self, params):
        """Prediction always uses the component's own (averaged) weights;
        spaCy's optimizer averages do not apply (a plain generator, as
        ``Language.use_params`` expects)."""
        yield

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations([doc], self.predict([doc]))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128):
        for batch in minibatch(stream, size=batch_size):
            self.set_annotations(batch, self.predict(batch))
            yield from batch

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message)

    # -- sentences ------------------------------------------------------------
    def sentence_bounds(
        self, doc: Doc, sent_starts: Optional[numpy.ndarray] = None
    ) -> List[Tuple[int, int]]:
        """The (start, end) word ranges parsed as separate trees: the doc's
        sentences when boundaries are set, otherwise split after
        sentence-final punctuation; a range longer than
        ``max_sentence_length`` is cut into chunks of that length (so
        decoding is never cubic in a long document). ``sent_starts``: the
        doc's SENT_START column, if the caller has already read it."""
        n = len(doc)
        if n == 0:
            return []
        if sent_starts is None:
            sent_starts = doc.to_array(SENT_START).reshape(-1)
        # spaCy's has_annotation("SENT_START"): any token after the first set
        if n > 1 and sent_starts[1:].any():
            starts = numpy.flatnonzero(sent_starts == 1).tolist()
            if not starts or starts[0] != 0:
                starts.insert(0, 0)
            spans = list(zip(starts, starts[1:] + [n]))
        else:
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
        limit = self.cfg["max_sentence_length"]
        if all(end - start <= limit for start, end in spans):
            return spans
        return [
            (chunk, min(end, chunk + limit))
            for start, end in spans
            for chunk in range(start, end, limit)
        ]

    # -- scoring --------------------------------------------------------------
    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        validate_examples(examples, f"{type(self).__name__}.score")
        return self.scorer(examples, **kwargs)

    # -- serialization --------------------------------------------------------
    def _format_header(self) -> dict:
        """Keys every saved ``cfg`` carries, checked by ``_check_format``."""
        return {"format_version": self.FORMAT_VERSION, "spacy_mstparse_version": __version__}

    def _check_format(self, cfg: dict, where: str) -> None:
        version = cfg.get("format_version")
        readable = getattr(self, "READS_FORMATS", (self.FORMAT_VERSION,))
        if version not in readable:
            formats = " or ".join(str(v) for v in readable)
            raise ValueError(
                f"[{self.name}] {where} was saved by spacy-mstparse "
                f"{cfg.get('spacy_mstparse_version', '?')} in model format {version}; this "
                f"is spacy-mstparse {__version__}, which reads format {formats}. "
                "Retrain the pipeline or install the matching spacy-mstparse version."
            )

    def _read_cfg(self, path: Path) -> dict:
        """The saved ``cfg`` of a component directory, or an error naming it."""
        cfg_path = path / "cfg"
        if not cfg_path.exists():
            raise ValueError(f"[{self.name}] no component data at {path} (missing {cfg_path.name})")
        return srsly.read_json(cfg_path)

"""A spaCy corpus reader whose predicted docs carry the gold tags and gold
sentence boundaries (but no heads or labels).

Graph-based parsers are usually trained and evaluated with gold tokenization,
gold POS tags and gold sentences (CoNLL-X / CoNLL 2007 setting). With this
reader in the ``[corpora]`` block, the parser sees exactly that as input:

    [corpora.train]
    @readers = "spacy_mstparse.GoldAnnotationsCorpus.v1"
    path = ${paths.train}
    copy_tags = true
    copy_sents = true

``gold_tokens`` (default true) builds each predicted doc on the reference's
words and whitespace; with ``gold_tokens = false`` the predicted doc keeps the
tokenizer's tokens (as in ``spacy.Corpus.v1``) and annotations are copied only
through the alignment (tags only where one predicted token matches exactly one
reference token).
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Union

import numpy
import spacy
from spacy import util
from spacy.attrs import IDS, SENT_START
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.training.augment import dont_augment
from spacy.vocab import Vocab

from ..setting_types import config_errors
from ..tag_columns import CONLL_COLUMNS
from .conll import sentence_bounds
from .docbin import read_docbin

TAG_ATTRS = tuple(IDS[attr] for attr in CONLL_COLUMNS)  # POS, TAG, MORPH, LEMMA


def gold_sent_starts(doc: Doc) -> List[bool]:
    """True for the first token of each sentence of ``doc``: the sentences
    read from the treebank if ``user_data`` still holds them, else
    ``doc.sents``; a doc without any sentence information is one sentence."""
    starts = [False] * len(doc)
    for start, _ in sentence_bounds(doc):
        starts[start] = True
    return starts


def gold_annotated_doc(
    example: Example,
    copy_tags: bool = True,
    copy_sents: bool = True,
    gold_tokens: bool = True,
) -> Doc:
    """A new predicted doc for ``example``: the reference's tokens (or the
    predicted tokens if ``gold_tokens`` is false) with the reference's UPOS,
    XPOS, FEATS and lemmas (``copy_tags``) and sentence starts set to
    True/False for every token (``copy_sents``); no heads, no labels."""
    ref = example.reference
    source = ref if gold_tokens else example.predicted
    doc = Doc(
        example.predicted.vocab,
        words=[token.text for token in source],
        spaces=[bool(token.whitespace_) for token in source],
    )
    if len(doc) == 0:
        return doc
    attrs = []
    columns = []
    if copy_tags:
        attrs.extend(TAG_ATTRS)
        if gold_tokens:
            columns.append(ref.to_array(list(TAG_ATTRS)))
        else:
            for attr in TAG_ATTRS:
                aligned = example.get_aligned(attr)
                columns.append(
                    numpy.array([0 if v is None else v for v in aligned], dtype=numpy.uint64).reshape(-1, 1)
                )
    if copy_sents:
        if gold_tokens:
            starts = gold_sent_starts(ref)
        else:
            starts = [False] * len(doc)
            y2x = example.alignment.y2x
            for ref_i, is_start in enumerate(gold_sent_starts(ref)):
                if is_start:
                    aligned = y2x[ref_i]
                    if len(aligned):
                        starts[int(min(aligned))] = True
        starts[0] = True
        attrs.append(SENT_START)
        values = numpy.array([1 if s else -1 for s in starts], dtype=numpy.int64)
        columns.append(values.astype(numpy.uint64).reshape(-1, 1))
    if attrs:
        doc.from_array(attrs, numpy.hstack(columns).astype(numpy.uint64))
    return doc


class GoldAnnotationsCorpus(Corpus):
    """``spacy.training.Corpus`` whose examples' predicted docs are replaced by
    ``gold_annotated_doc``. Reads user_data with the DocBin files (quickly),
    so that treebank sentence boundaries stored by ``convert`` are used."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        gold_preproc: bool = False,
        max_length: int = 0,
        limit: int = 0,
        augmenter: Optional[Callable] = None,
        copy_tags: bool = True,
        copy_sents: bool = True,
        gold_tokens: bool = True,
    ) -> None:
        super().__init__(
            path, gold_preproc=gold_preproc, max_length=max_length, limit=limit, augmenter=augmenter
        )
        self.copy_tags = copy_tags
        self.copy_sents = copy_sents
        self.gold_tokens = gold_tokens

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for example in super().__call__(nlp):
            if self._annotated_early:
                yield example
                continue
            predicted = gold_annotated_doc(
                example,
                copy_tags=self.copy_tags,
                copy_sents=self.copy_sents,
                gold_tokens=self.gold_tokens,
            )
            yield Example(predicted, example.reference)

    @property
    def _annotated_early(self) -> bool:
        """Whether ``_make_example`` builds the final predicted doc: on the
        reference's words, when no augmenter may change the reference after."""
        return self.gold_tokens and self.augmenter is dont_augment

    def _make_example(self, nlp: Language, reference: Doc, gold_preproc: bool) -> Example:
        if self._annotated_early:
            predicted = gold_annotated_doc(Example(reference, reference), copy_tags=self.copy_tags,
                                           copy_sents=self.copy_sents, gold_tokens=True)
            return Example(predicted, reference)
        # With gold_tokens the predicted doc is rebuilt on the reference's
        # words after the augmenter: spaCy's example on those words, untokenized.
        return super()._make_example(nlp, reference, gold_preproc or self.gold_tokens)

    def read_docbin(self, vocab: Vocab, locs: Iterable[Union[str, Path]]) -> Iterator[Doc]:
        """Like ``Corpus.read_docbin``, with user_data decoded quickly."""
        i = 0
        for loc in locs:
            loc = util.ensure_path(loc)
            if not loc.parts[-1].endswith(".spacy"):
                continue
            for doc in read_docbin(loc, vocab):
                if len(doc):
                    yield doc
                    i += 1
                    if self.limit >= 1 and i >= self.limit:
                        return


@spacy.registry.readers("spacy_mstparse.GoldAnnotationsCorpus.v1")
def create_gold_annotations_corpus(
    path: Optional[Path],
    gold_preproc: bool = False,
    max_length: int = 0,
    limit: int = 0,
    augmenter: Optional[Callable] = None,
    copy_tags: bool = True,
    copy_sents: bool = True,
    gold_tokens: bool = True,
) -> Callable[[Language], Iterator[Example]]:
    """Arguments as ``spacy.Corpus.v1``, plus: ``copy_tags`` copies UPOS,
    XPOS, FEATS and lemmas from the reference into the predicted doc;
    ``copy_sents`` sets every predicted token's ``is_sent_start`` from the
    reference; ``gold_tokens`` builds the predicted doc on the reference's
    tokens instead of the tokenizer's."""
    if path is None:  # a config error, as spaCy prints it (no traceback)
        with config_errors("corpora"):
            raise ValueError(
                "spacy_mstparse.GoldAnnotationsCorpus.v1 needs a path to a .spacy file "
                "or a folder of them (set paths.train / paths.dev in the config, or give "
                "--paths.train / --paths.dev)"
            )
    return GoldAnnotationsCorpus(
        path,
        gold_preproc=gold_preproc,
        max_length=max_length,
        limit=limit,
        augmenter=augmenter,
        copy_tags=copy_tags,
        copy_sents=copy_sents,
        gold_tokens=gold_tokens,
    )

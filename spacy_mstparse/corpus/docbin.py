"""Load ``.spacy`` (DocBin) files together with each Doc's ``user_data``,
faster than ``DocBin.get_docs``.

``DocBin.get_docs`` decodes every Doc's user_data with ``srsly.msgpack_loads``,
which looks up the registered msgpack decoders through package entry points
on every call: about 1 ms per Doc, i.e. seconds per pass over a treebank
converted with one sentence per Doc. Here the decoder chain is built once per
file and applied through msgpack's public ``object_pairs_hook``; the result is
the same as spaCy's (tuples for lists, numpy arrays decoded).
"""
import functools
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple, Union

import srsly
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab


def _make_pairs_hook() -> Callable[[List[Tuple[Any, Any]]], Any]:
    object_hook = None
    for decoder in srsly.msgpack_decoders.get_all().values():
        object_hook = functools.partial(decoder, chain=object_hook)

    def pairs_hook(pairs: List[Tuple[Any, Any]]) -> Any:
        obj = dict(pairs)
        return object_hook(obj) if object_hook is not None else obj

    return pairs_hook


def loads_user_data(data: bytes, pairs_hook=None) -> Dict[Any, Any]:
    """Decode one Doc's user_data bytes as stored by DocBin."""
    if pairs_hook is None:
        pairs_hook = _make_pairs_hook()
    return srsly.msgpack.loads(data, raw=False, use_list=False, object_pairs_hook=pairs_hook)


def iter_docbin(
    doc_bin: DocBin, vocab: Vocab, user_data: bool = True
) -> Iterator[Doc]:
    """Yield the Docs of ``doc_bin``, with their user_data if it was stored
    and ``user_data`` is true."""
    stored = doc_bin.user_data
    pairs_hook = _make_pairs_hook() if user_data else None
    doc_bin.user_data = []  # keeps DocBin.get_docs from decoding it slowly
    try:
        for i, doc in enumerate(doc_bin.get_docs(vocab)):
            if pairs_hook is not None and i < len(stored) and stored[i] is not None:
                doc.user_data.update(loads_user_data(stored[i], pairs_hook))
            yield doc
    finally:
        doc_bin.user_data = stored


def read_docbin(path: Union[str, Path], vocab: Vocab, user_data: bool = True) -> Iterator[Doc]:
    """Yield the Docs of a ``.spacy`` file (see ``iter_docbin``)."""
    yield from iter_docbin(DocBin().from_disk(path), vocab, user_data=user_data)

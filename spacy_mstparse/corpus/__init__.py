"""Corpus I/O.

- ``conll``: CoNLL-U / CoNLL-X files <-> spaCy Docs (with validation)
- ``convert``: CoNLL -> ``.spacy`` DocBin (the ``convert`` command)
- ``readers``: the ``spacy_mstparse.GoldAnnotationsCorpus.v1`` corpus reader,
  which copies gold tags and sentence starts into the predicted docs
- ``docbin``: fast loading of DocBins with their user_data
- ``atomic``: atomic file writes
"""

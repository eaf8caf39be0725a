"""spacy-mstparse: graph-based (MST) dependency parsing for spaCy v3."""

__version__ = "0.1.0"

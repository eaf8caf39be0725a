"""The spaCy language a treebank's language code gets.

UD names each treebank's language by its ISO 639 code (``cs``, ``wo``,
``qtd``); spaCy has language classes for about half of them, and some of
those need a package of their own to start (``ja``, ``ko``, ``th``, ``vi``).
The tools that need only a vocabulary or a tokenizer (``convert``,
``clusters``, the languages benchmark) use the code itself where
``spacy.blank`` starts with it, and spaCy's multi-language class ``xx``
elsewhere, saying why.
"""
from functools import lru_cache
from typing import Optional, Tuple

MULTI_LANGUAGE = "xx"


@lru_cache(maxsize=None)
def _blank_problem(code: str) -> Optional[str]:
    import spacy

    try:
        spacy.blank(code)
    except ImportError as err:
        return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return None


def spacy_language(code: str) -> Tuple[str, Optional[str]]:
    """``(language, note)``: ``code`` and None when ``spacy.blank(code)``
    starts, else ``"xx"`` and a one-line note saying why."""
    problem = _blank_problem(code)
    if problem is None:
        return code, None
    return MULTI_LANGUAGE, (f"spaCy has no usable language '{code}' ({problem}); "
                            f"using '{MULTI_LANGUAGE}', its multi-language class")

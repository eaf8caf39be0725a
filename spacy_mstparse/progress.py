"""Progress bars of the long commands: a tqdm bar on stderr when stderr is a
terminal, nothing when it is piped or redirected (a log file, a test, a
``spacy project`` run captured by a CI) unless asked for.

``show``: None = on a terminal only, True / False = always / never. The bar
is removed when done (the commands print their own summary line).
"""
import sys
from typing import Any, Iterable, Optional

from tqdm import tqdm


def shows(show: Optional[bool] = None) -> bool:
    """Whether a bar is drawn: ``show``, or by default whether stderr is a terminal."""
    if show is not None:
        return bool(show)
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(iterable: Optional[Iterable[Any]] = None, *, total: Optional[int] = None,
                 desc: str = "", unit: str = "it", show: Optional[bool] = None) -> tqdm:
    """A tqdm bar over ``iterable`` (or updated by hand up to ``total``) on
    stderr, disabled unless ``shows(show)``."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=not shows(show), dynamic_ncols=True)

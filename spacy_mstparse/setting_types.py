"""Types of the config settings, so that spaCy rejects a bad value as a
config error.

spaCy's config validation (confection's type checker) checks every argument
of a factory and of a registered function (``@mst_learners``,
``@mst_features``) against its type hint before anything is built, in
``spacy train``, ``spacy debug config`` and ``nlp.add_pipe`` alike: a value
outside the type is a short "Config validation error" naming the setting,
not a traceback. The hints are plain types (``bool``, ``int``, ``str``,
``List[str]``, ``Optional[...]``), ``Literal[...]`` of the choices, or the
constrained types made here (``at_least``, ``power_of_two``, ``one_of``, ...),
which the checker calls through their ``__get_validators__`` hook and prints
by their description ("1000 is not a power of two >= 256").

How to type a new setting: annotate the argument, e.g.
``constraints: one_of("nonprojective", "drop", "strict")`` (or a
``Literal``), ``n_candidates: at_least(1)``, ``C: Optional[positive_number]``;
a component constructed in Python applies the same hints with
``check_settings``. Checks that involve several settings (order 3 with a
non-projective decoder) stay in the code that builds the object, inside
``config_errors``, which turns their ValueError into the same kind of error.
"""
import math
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Mapping

from confection import ConfigValidationError
from confection.typechecker import Ctx, check_type


class _Described(type):
    """Constrained types print as what they accept (in config errors)."""

    def __repr__(cls) -> str:
        return cls.description


def constrained(description: str, check: Callable[[Any], bool]) -> type:
    """A type for hints: the values for which ``check`` holds (it may raise
    TypeError / ValueError too), described as ``description``."""

    def validate(value):
        try:
            ok = check(value)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"{value!r} is not {description}")
        return value

    return _Described(description.replace(" ", "_"), (), {
        "description": description,
        "__get_validators__": classmethod(lambda cls: iter((validate,))),
    })


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def at_least(minimum: int) -> type:
    """Integers >= ``minimum``."""
    return constrained(f"an integer >= {minimum}", lambda v: _is_int(v) and v >= minimum)


def int_in(low: int, high: int) -> type:
    """Integers from ``low`` to ``high``."""
    return constrained(f"an integer from {low} to {high}",
                       lambda v: _is_int(v) and low <= v <= high)


def power_of_two(minimum: int) -> type:
    """Powers of two >= ``minimum`` (hashed table sizes)."""
    return constrained(f"a power of two >= {minimum}",
                       lambda v: _is_int(v) and v >= minimum and not v & (v - 1))


def one_of(*choices) -> type:
    """Exactly one of ``choices`` (as ``Literal``, with a shorter message)."""
    return constrained("one of " + ", ".join(map(repr, choices)),
                       lambda v: type(v) in {type(c) for c in choices} and v in choices)


def number_in(low: float, high: float, high_included: bool = True) -> type:
    """Finite numbers from ``low`` to ``high`` (included unless said)."""
    closing = "]" if high_included else ")"
    return constrained(f"a number in [{low}, {high}{closing}",
                       lambda v: _is_number(v) and low <= v and (v <= high if high_included
                                                                  else v < high))


positive_number = constrained("a finite number > 0", lambda v: _is_number(v) and v > 0)
unit_share = constrained("a number in (0, 1]", lambda v: _is_number(v) and 0 < v <= 1)
non_negative_number = constrained("a finite number >= 0", lambda v: _is_number(v) and v >= 0)
positive_int = at_least(1)
non_negative_int = at_least(0)
TABLE_SIZE = power_of_two(2**8)   # n_buckets, label_buckets: hashed weight tables


def check_settings(where: str, values: Mapping[str, Any], hints: Mapping[str, Any]) -> None:
    """The factory's type checks for a component constructed in Python:
    ValueError naming ``where`` and the first setting whose value is outside
    its type in ``hints`` (settings without a hint are not checked)."""
    for key, value in values.items():
        if key in hints and not check_type(value, hints[key], ctx=Ctx()):
            raise ValueError(f"[{where}] {key} = {value!r} is not {_describe(hints[key])}")


def _describe(hint) -> str:
    return hint.description if isinstance(hint, _Described) else str(hint).replace("typing.", "")


@contextmanager
def config_errors(where: str) -> Iterator[None]:
    """A ValueError raised inside (a check involving several settings, made
    where the object is built) becomes spaCy's config error for ``where``
    (e.g. "components.mst_parser"), which ``spacy train`` and ``spacy debug
    config`` print in a few lines."""
    try:
        yield
    except ConfigValidationError:
        raise
    except ValueError as err:
        raise ConfigValidationError(
            title="Config validation error", show_config=False,
            errors=[{"loc": [where], "msg": str(err), "type": "value_error"}]) from None


def hints_of(func: Callable) -> Dict[str, Any]:
    """The type hints of a factory or config function's settings."""
    return {k: v for k, v in func.__annotations__.items() if k != "return"}

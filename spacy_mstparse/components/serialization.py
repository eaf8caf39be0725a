"""One serializer for both parser components: a table of named parts.

A component lists its parts once (``DependencyPipe._serial_parts``): a name,
which is also the file name on disk (``cfg``, ``arc_weights.npz``, ...), and
a function giving the part's bytes. ``to_bytes`` is spaCy's msgpack of
``{name: bytes}`` (``spacy.util.to_bytes``) and ``to_disk`` writes one file
per name (``spacy.util.to_disk``), so the layout is the same on disk and in
bytes, and ``exclude`` drops parts by name (with or without the extension) in
all four directions. Pickling goes through ``to_bytes`` as well.

Parts are JSON (``dump_json``) or numpy arrays in an ``.npz`` archive
(``dump_arrays``; never pickled objects); weights with few non-zero entries
as a bitmap plus the values (``dump_sparse_vector``, or per row and entry
for a table, ``dump_sparse_rows``). Reading a damaged, truncated,
empty or foreign file raises ``ModelDataError``: one line naming the file and
what is wrong with it, which the CLI prints without a traceback.
"""
import io
import json
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple

import numpy
from spacy import util

from ..corpus.atomic import atomic_write_bytes
from ..learners import sparse_weights


class ModelDataError(ValueError):
    """A saved component that cannot be read: names the file and the problem."""


# What ``Language`` passes to every component as ``exclude`` ("vocab": the
# pipeline's shared ``Vocab``, saved by the pipeline, never by a component).
# It names no part, also when an older layout has a file called ``vocab``.
SHARED_NAMES = frozenset(["vocab"])


def excluded_names(names: Iterable[str], exclude: Iterable[str]) -> list:
    """What to pass to ``spacy.util`` as ``exclude``: the part names dropped
    by ``exclude`` and their stems (``"arc_weights"`` drops
    ``"arc_weights.npz"``; ``spacy.util.to_disk`` compares stems, ``to_bytes``
    whole names). ``SHARED_NAMES`` drop nothing."""
    exclude = set(exclude) - SHARED_NAMES
    dropped = [name for name in names if name in exclude or name.split(".")[0] in exclude]
    return dropped + [name.split(".")[0] for name in dropped]


def dump_json(data: Mapping) -> bytes:
    """Indented JSON with floats written exactly (Python's shortest repr, which
    reads back to the same double; srsly's ujson keeps only 10 digits)."""
    return json.dumps(data, indent=2, ensure_ascii=False,
                      default=_json_scalar).encode("utf8")


def _json_scalar(value):
    if isinstance(value, numpy.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def load_json(data: bytes, where: str) -> dict:
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise ModelDataError(f"{where}: empty file (expected the component's JSON settings)")
    try:
        value = json.loads(bytes(data).decode("utf8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ModelDataError(f"{where}: not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise ModelDataError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def id_list(value, where: str, key: str) -> list:
    """``value`` if it is a list of uint64 ids, else ModelDataError naming
    ``where`` and ``key``."""
    if not (isinstance(value, list)
            and all(isinstance(v, int) and 0 <= v < 2**64 for v in value)):
        raise ModelDataError(f"{where}: {key} must be a list of tag ids, got {value!r}")
    return value


def load_cfg(data, where: str) -> dict:
    """A component's saved settings: its JSON ``cfg``, or the msgpack dict of
    a serialization older than the JSON one (returned as it is, so that the
    component's format check names its version)."""
    return data if isinstance(data, dict) else load_json(data, where)


def dump_arrays(compress: bool = False, **arrays: numpy.ndarray) -> bytes:
    """An ``.npz`` archive of the arrays (no pickled objects), deflated with
    ``compress`` (``numpy.load`` reads both)."""
    buffer = io.BytesIO()
    (numpy.savez_compressed if compress else numpy.savez)(buffer, **arrays)
    return buffer.getvalue()


def load_arrays(data: bytes, where: str, keys: Iterable[str]) -> Dict[str, numpy.ndarray]:
    """The arrays of a ``dump_arrays`` archive; ``keys`` must be present."""
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise ModelDataError(f"{where}: empty file (expected a numpy .npz archive)")
    try:
        with numpy.load(io.BytesIO(bytes(data)), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (zipfile.BadZipFile, EOFError) as err:
        raise ModelDataError(f"{where}: damaged or truncated .npz archive ({err})") from None
    except (ValueError, OSError, KeyError) as err:
        raise ModelDataError(f"{where}: not a numpy .npz archive of weights ({err})") from None
    missing = [key for key in keys if key not in arrays]
    if missing:
        raise ModelDataError(f"{where}: the archive lacks {', '.join(missing)}")
    return arrays


def load_object(data: bytes, where: str, build: Callable[..., Any], keys: Iterable[str]):
    """``build(**arrays)`` of a ``dump_arrays`` archive with ``keys``; arrays
    ``build`` refuses (ValueError) are a ModelDataError naming the file."""
    arrays = load_arrays(data, where, keys)
    try:
        return build(**{key: arrays[key] for key in keys})
    except ValueError as err:
        raise ModelDataError(f"{where}: {err}") from None


def dump_sparse_vector(weights: numpy.ndarray) -> bytes:
    """A float32 vector as bitmap of non-zeros + their values (compact when
    most weights are 0, 1/32 larger than dense when none is)."""
    return dump_arrays(**sparse_weights.pack(weights))


# Entries unpacked at a time by ``load_sparse_vector`` (a multiple of 8, so
# that blocks start on a byte of the bitmap).
UNPACK_BLOCK = 1 << 20
# Set bits of each byte value.
_POPCOUNT = numpy.unpackbits(numpy.arange(256, dtype="uint8")[:, None], axis=1).sum(1)


def load_sparse_vector(data: bytes, where: str, shape: Optional[Tuple[int, ...]] = None
                       ) -> numpy.ndarray:
    """The float32 weights of a ``dump_sparse_vector`` archive, reshaped to
    ``shape`` if given (which must hold as many weights). Unpacked block by
    block into the result, so that loading a large table needs little more
    memory than the table itself (pass ``parts.pop(name)``, and the file's
    bytes can be freed before the table is allocated)."""
    arrays = load_arrays(data, where, ("n", "nonzero_bits", "values"))
    del data
    return _unpack_sparse(arrays, where, shape)


def _unpack_sparse(arrays: Dict[str, numpy.ndarray], where: str,
                   shape: Optional[Tuple[int, ...]]) -> numpy.ndarray:
    n_field = numpy.asarray(arrays["n"]).reshape(-1)
    if n_field.shape != (1,) or n_field[0] < 0:
        raise ModelDataError(f"{where}: field 'n' must be one non-negative count")
    n = int(n_field[0])
    if shape is not None and n != int(numpy.prod(shape)):
        raise ModelDataError(
            f"{where}: holds {n} weights, expected {' x '.join(map(str, shape))} = "
            f"{int(numpy.prod(shape))}"
        )
    bits = numpy.asarray(arrays["nonzero_bits"])
    values = numpy.asarray(arrays["values"])
    if bits.dtype != numpy.uint8 or bits.shape != ((n + 7) // 8,):
        raise ModelDataError(f"{where}: bitmap of {bits.shape} bytes does not fit n = {n}")
    out = numpy.empty(n, dtype="float32")
    used = 0
    try:
        for start in range(0, n, UNPACK_BLOCK):
            end = min(n, start + UNPACK_BLOCK)
            block_bits = bits[start // 8 : (end + 7) // 8]
            count = int(_POPCOUNT[block_bits].sum())
            out[start:end] = sparse_weights.unpack(
                {"n": numpy.array([end - start]), "nonzero_bits": block_bits,
                 "values": values[used : used + count]},
                where,
            )
            used += count
    except ValueError as err:
        raise ModelDataError(str(err)) from None
    if used != values.shape[0]:
        raise ModelDataError(
            f"{where}: the bitmap marks {used} non-zero weights but {values.shape[0]} values "
            "are stored"
        )
    return out if shape is None else out.reshape(shape)


def dump_weight_vector(weights, quantized: bool = False) -> bytes:
    """A weight vector as ``dump_sparse_vector`` writes it, or with
    ``quantized`` as the bitmap of its non-zeros plus their 8-bit codes into
    a 256-value codebook (``features.weights.quantize``: the codes prediction
    reads with ``quantize_weights``): n/8 + nnz + 1 KB bytes before the
    archive is deflated (the bitmap and the codes compress to about half).
    ``weights`` may be ``QuantizedWeights`` already (the codes prediction
    reads); then ``quantized`` must be true."""
    from ..features.weights import QuantizedWeights, quantize

    if isinstance(weights, QuantizedWeights):
        if not quantized:
            raise ValueError("8-bit weights can only be saved as 8-bit codes")
        q = weights
    elif not quantized:
        return dump_sparse_vector(weights)
    else:
        q = quantize(weights)
    nonzero = q.codes != 0
    return dump_arrays(compress=True, n=numpy.array([q.codes.shape[0]], dtype="int64"),
                       nonzero_bits=numpy.packbits(nonzero), codes=q.codes[nonzero],
                       codebook=q.codebook)


def load_weight_vector(parts: Dict[str, bytes], stem: str, where: Callable[[str], str],
                       current: Optional[numpy.ndarray] = None) -> numpy.ndarray:
    """The weight vector ``stem`` ("arc_weights", "label_weights") saved as
    ``<stem>.npz`` (float values or 8-bit codes, ``dump_weight_vector``);
    ``current`` when the part was excluded."""
    if f"{stem}.npz" in parts:
        name = where(f"{stem}.npz")
        arrays = load_arrays(parts.pop(f"{stem}.npz"), name, ("n", "nonzero_bits"))
        if "codes" in arrays:
            codes, book = numpy.asarray(arrays.pop("codes")), numpy.asarray(arrays["codebook"])
            if codes.dtype != numpy.uint8 or book.shape != (256,) or not (codes != 0).all():
                raise ModelDataError(f"{name}: 8-bit weights need non-zero uint8 codes and a "
                                     f"codebook of 256 values")
            arrays["values"] = book.astype("float32")[codes]
        elif "values" not in arrays:
            raise ModelDataError(f"{name}: the archive lacks values (or codes)")
        return _unpack_sparse(arrays, name, None)
    if current is not None:
        return current
    raise ModelDataError(f"{where(stem + '.npz')}: missing (the saved component is incomplete)")


def dump_sparse_rows(table: numpy.ndarray, index: Optional[numpy.ndarray] = None) -> bytes:
    """A 2-d float32 table as a bitmap of its non-zero rows (``row_bits``)
    plus those rows, in order, as a ``dump_sparse_vector`` (bitmap of their
    non-zero entries and the values). With ``index`` (one int32 per row of
    the full table: its row in ``table``, or -1 for an all-zero row),
    ``table`` holds only the rows the index points to."""
    table = numpy.asarray(table, dtype="float32")
    if table.ndim != 2:
        raise ValueError(f"expected a 2-d table, got shape {table.shape}")
    if index is None:
        nonzero_rows = (table != 0).any(axis=1)
        kept = table[nonzero_rows]
    else:
        nonzero_rows = index >= 0
        kept = table[index[nonzero_rows]]
    return dump_arrays(
        n_rows=numpy.array([nonzero_rows.shape[0]], dtype="int64"),
        row_bits=numpy.packbits(nonzero_rows),
        **sparse_weights.pack(kept.reshape(-1)),
    )


def load_sparse_rows(data: bytes, where: str, shape: Tuple[int, int]
                     ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """``(rows, index)`` from a ``dump_sparse_rows`` archive of a table of
    ``shape``: the non-zero rows (k x shape[1] float32) and the int32 index
    of each row of the full table into them (-1: all zero). The dense table
    is never built (pass ``parts.pop(name)`` to free the file's bytes early)."""
    arrays = load_arrays(data, where, ("n_rows", "row_bits", "n", "nonzero_bits", "values"))
    del data
    n_rows = numpy.asarray(arrays["n_rows"]).reshape(-1)
    if n_rows.shape != (1,) or int(n_rows[0]) != shape[0]:
        raise ModelDataError(f"{where}: holds a table of {n_rows.tolist()} rows, expected {shape[0]}")
    row_bits = numpy.asarray(arrays["row_bits"])
    if row_bits.dtype != numpy.uint8 or row_bits.shape != ((shape[0] + 7) // 8,):
        raise ModelDataError(f"{where}: row bitmap of {row_bits.shape} bytes does not fit "
                             f"{shape[0]} rows")
    nonzero_rows = numpy.unpackbits(row_bits, count=shape[0]).view(bool)
    k = int(nonzero_rows.sum())
    rows = _unpack_sparse(arrays, where, (k, shape[1]))
    index = numpy.full(shape[0], -1, dtype="int32")
    index[nonzero_rows] = numpy.arange(k, dtype="int32")
    return rows, index


def to_bytes(parts: Dict[str, Callable[[], bytes]], exclude) -> bytes:
    return util.to_bytes(parts, excluded_names(parts, exclude))


def from_bytes(data: bytes, names: Iterable[str], exclude, where: str) -> Dict[str, bytes]:
    """``{name: bytes}`` of the parts in ``data`` that are not excluded."""
    names = list(names)
    found: Dict[str, bytes] = {}
    setters = {name: (lambda value, name=name: found.__setitem__(name, value)) for name in names}
    try:
        util.from_bytes(data, setters, excluded_names(names, exclude))
    except (ValueError, TypeError) as err:  # msgpack's errors derive from ValueError
        raise ModelDataError(f"{where}: not a serialized component ({err})") from None
    return found


def to_disk(path: Path, parts: Dict[str, Callable[[], bytes]], exclude) -> None:
    """One file per part, each written atomically."""
    writers = {
        name: (lambda file_path, get=get: atomic_write_bytes(file_path, get()))
        for name, get in parts.items()
    }
    util.to_disk(path, writers, excluded_names(parts, exclude))


def from_disk(path: Path, exclude, where: str) -> Dict[str, bytes]:
    """``{file name: bytes}`` of every file of a component directory that
    is not excluded (files of older layouts included: the component decides)."""
    if not path.exists():
        raise ModelDataError(f"{where}: no such directory")
    if not path.is_dir():
        raise ModelDataError(f"{where}: not a directory")
    found: Dict[str, bytes] = {}
    names = sorted(p.name for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    readers = {
        name: (lambda file_path, name=name: found.__setitem__(name, file_path.read_bytes()))
        for name in names
    }
    util.from_disk(path, readers, excluded_names(names, exclude))
    return found


class PartsSerializer:
    """spaCy's four serialization methods for a component that lists its
    parts (``_serial_parts``: name -> function giving the bytes; the names
    it can read, ``_part_names``, default: the same) and restores them
    (``_load_parts(parts, where)``, ``where(name)`` naming the origin of a
    part for error messages)."""

    def _part_names(self) -> list:
        return list(self._serial_parts())

    def to_bytes(self, *, exclude=util.SimpleFrozenList()) -> bytes:
        return to_bytes(self._serial_parts(), exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude=util.SimpleFrozenList()):
        where = f"[{self.name}] the serialized component"
        parts = from_bytes(bytes_data, self._part_names(), exclude, where)
        self._load_parts(parts, lambda name: f"{where} (part {name!r})")
        return self

    def to_disk(self, path, *, exclude=util.SimpleFrozenList()) -> None:
        to_disk(util.ensure_path(path), self._serial_parts(), exclude)

    def from_disk(self, path, *, exclude=util.SimpleFrozenList()):
        path = util.ensure_path(path)
        parts = from_disk(path, exclude, f"[{self.name}] {path}")
        self._load_parts(parts, lambda name: f"[{self.name}] {path / name}")
        return self

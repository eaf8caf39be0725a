"""Atomic file writes: write to a temporary file next to the target, then
rename it over the target, so that a reader never sees a half-written file and
a failure leaves any previous file untouched (``atomic_writer`` for a file
written piece by piece); ``check_not_input`` refuses an
output path that is one of the inputs.
"""
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, Union


def _default_mode() -> int:
    """Permissions a newly created file would get under the current umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_writer(path: Union[str, Path]) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` piece by piece: it only replaces
    ``path`` when the ``with`` block ends without an exception (else the
    temporary file is removed). The parent folder is created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else _default_mode()
    fd, tmp_name = tempfile.mkstemp(
        dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "wb") as file_:
            yield file_
            file_.flush()
            os.fsync(file_.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: Union[str, Path], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (the parent folder is created)."""
    with atomic_writer(path) as file_:
        file_.write(data)


def atomic_write_text(path: Union[str, Path], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (UTF-8, ``\\n`` line ends)."""
    atomic_write_bytes(path, text.encode(encoding))


class OutputIsInputError(ValueError):
    """An output path that names an input file."""


def same_file(a: Union[str, Path], b: Union[str, Path]) -> bool:
    """Whether ``a`` and ``b`` name the same file: ``os.path.samefile`` when
    both exist (hard links, symlinks), else the same path once symlinks and
    relative parts are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def check_not_input(output: Union[str, Path], *inputs: Union[str, Path]) -> None:
    """Raise ``OutputIsInputError`` if ``output`` is one of ``inputs``."""
    for input_ in inputs:
        if same_file(output, input_):
            raise OutputIsInputError(
                f"Refusing to write {output}: it is the input file {input_} "
                "(give another output path)"
            )

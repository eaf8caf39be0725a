"""Byte ranges of a file cut at line breaks, for readers that work on a part
of a file (``ray-parse``'s workers): ``split_file`` finds the cut points
with a cheap scan (``mmap`` searches, no decoding), ``raw_lines`` yields the
lines of one range numbered as in the whole file.

A CoNLL file is cut only after a blank line (``\\n\\n`` or ``\\n\\r\\n``,
lines every reader takes as a sentence break), so each range holds whole
sentences with their comments; a text file is cut at any line break.
"""
import io
import mmap
import os
from pathlib import Path
from typing import Iterator, List, NamedTuple, Optional, Tuple, Union

PathLike = Union[str, Path]


class ByteRange(NamedTuple):
    """``[start, end)`` bytes of a file; ``first_line``: the line number
    (from 1) of the line starting at ``start``; ``data``: those bytes when
    they were read already (elsewhere: a Ray worker needs no access to the
    file), else None."""

    start: int
    end: int
    first_line: int
    data: Optional[bytes] = None

    def read(self, path: PathLike) -> bytes:
        """The range's bytes (``data``, or read from ``path``)."""
        if self.data is not None:
            return self.data
        with open(path, "rb") as file_:
            file_.seek(self.start)
            return file_.read(self.end - self.start)


def raw_lines(path: PathLike, byte_range: Optional[ByteRange] = None) -> Iterator[Tuple[int, bytes]]:
    """(line number, raw line with its line break) of the whole file, or of
    ``byte_range`` (numbered from its ``first_line``)."""
    if byte_range is not None:
        yield from enumerate(io.BytesIO(byte_range.read(path)), byte_range.first_line)
        return
    with open(path, "rb") as file_:
        yield from enumerate(file_, 1)


def _next_cut(mm: mmap.mmap, target: int, at_blank_lines: bool) -> int:
    """A cut point at or after ``target`` (the first one, except a
    ``\\n\\r\\n`` ending exactly at it), or the file size if none. The
    search looks at a window after ``target``, doubled until a cut is found,
    so it costs about the distance to the cut, not the rest of the file."""
    size = len(mm)
    seps = (b"\n\n", b"\n\r\n") if at_blank_lines else (b"\n",)
    start = max(0, target - (2 if at_blank_lines else 1))
    window = 1 << 16
    while True:
        end = min(size, start + window)
        cuts = [found + len(sep) for sep in seps
                for found in (mm.find(sep, start, end),) if found >= 0]
        if cuts:
            return min(cuts)
        if end == size:
            return size
        window *= 2


def split_file(path: PathLike, n_ranges: int, at_blank_lines: bool = True) -> List[ByteRange]:
    """Cut ``path`` into at most ``n_ranges`` byte ranges of about equal size
    at line breaks (after blank lines with ``at_blank_lines``); fewer when
    the file has fewer cut points. An empty file gives no range."""
    size = os.path.getsize(path)
    if size == 0:
        return []
    with open(path, "rb") as file_, mmap.mmap(file_.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        cuts = [0]
        for k in range(1, max(1, n_ranges)):
            target = max(size * k // n_ranges, cuts[-1] + 1)
            if target >= size:
                break
            cut = _next_cut(mm, target, at_blank_lines)
            if cut >= size:
                break
            if cut > cuts[-1]:
                cuts.append(cut)
        cuts.append(size)
        ranges, line = [], 1
        for start, end in zip(cuts, cuts[1:]):
            ranges.append(ByteRange(start, end, line))
            line += mm[start:end].count(b"\n")
    return ranges

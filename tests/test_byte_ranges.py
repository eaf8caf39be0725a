"""``split_file`` / ``raw_lines`` (the byte ranges ray-parse's workers read),
against the whole file read line by line: the ranges cover it exactly, CoNLL
cuts fall after blank lines only, each range numbers its lines as the file
does, and the CoNLL reader gives over the ranges what it gives over the file
(Docs and errors with the file's line numbers)."""
import pytest
import spacy

from spacy_mstparse.corpus.byte_ranges import ByteRange, raw_lines, split_file
from spacy_mstparse.corpus.conll import ConllFormatError, docs_to_conllu, read_conll

SENTENCE = "# sent_id = s{k}\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n"


def conll_text(n: int) -> str:
    """``n`` sentences separated by one to three blank lines, some with CRLF
    or spaces only, some sentences written with CRLF line ends."""
    parts = []
    for k in range(1, n + 1):
        block = SENTENCE.format(k=k)
        if k % 4 == 0:
            block = block.replace("\n", "\r\n")
        parts.append(block + ["\n", "\r\n", "\n  \n\n"][k % 3])
    return "\ufeff" + "".join(parts)


def is_blank(line: bytes) -> bool:
    return not line.decode("utf-8").strip()


@pytest.mark.parametrize("at_blank_lines", [True, False])
def test_ranges_cover_the_file_with_its_line_numbers(tmp_path, at_blank_lines):
    path = tmp_path / "f.conllu"
    path.write_bytes(conll_text(23).encode("utf-8"))
    data = path.read_bytes()
    whole = list(raw_lines(path))
    assert b"".join(line for _, line in whole) == data
    for n in range(1, 40):
        ranges = split_file(path, n, at_blank_lines=at_blank_lines)
        assert 1 <= len(ranges) <= n
        assert ranges[0].start == 0 and ranges[-1].end == len(data)
        assert all(a.end == b.start and a.start < a.end for a, b in zip(ranges, ranges[1:]))
        for r in ranges:
            assert r.first_line == data[:r.start].count(b"\n") + 1
            assert data[r.start - 1:r.start] in (b"", b"\n")
            if at_blank_lines and r.start:
                last_line = data[:r.start - 1].rsplit(b"\n", 1)[-1] + b"\n"
                assert is_blank(last_line)
        assert [pair for r in ranges for pair in raw_lines(path, r)] == whole
    # many ranges: every cut point of the file can be reached
    cuts = {r.start for r in split_file(path, len(data), at_blank_lines=at_blank_lines)}
    line_starts = {0} | {i + 1 for i, b in enumerate(data[:-1]) if b == ord("\n")}
    if at_blank_lines:
        after_blank = {i + 2 for i in range(len(data)) if data[i:i + 2] == b"\n\n"}
        after_blank |= {i + 3 for i in range(len(data)) if data[i:i + 3] == b"\n\r\n"}
        assert cuts == ({0} | after_blank) - {len(data)}
    else:
        assert cuts == line_starts


def test_empty_file_and_no_blank_line(tmp_path):
    empty = tmp_path / "e.conllu"
    empty.write_bytes(b"")
    assert split_file(empty, 4) == []
    one = tmp_path / "one.conllu"
    one.write_text(SENTENCE.format(k=1), encoding="utf-8")
    assert split_file(one, 4) == [ByteRange(0, one.stat().st_size, 1)]


def test_reading_the_ranges_is_reading_the_file(tmp_path):
    nlp = spacy.blank("en")
    path = tmp_path / "f.conllu"
    path.write_bytes(conll_text(23).encode("utf-8"))
    reference = docs_to_conllu(read_conll(path, nlp.vocab))
    for n in (2, 5, 11, 50):
        docs = [doc for r in split_file(path, n)
                for doc in read_conll(path, nlp.vocab, byte_range=r)]
        assert len(docs) == 23 and docs_to_conllu(docs) == reference
    # a malformed line: the range holding it names the file's line
    bad = conll_text(23).replace("s17\n1\tHi\thi\tINTJ", "s17\n1\tHi\thi\tNOUNX")
    path.write_bytes(bad.encode("utf-8"))
    with pytest.raises(ConllFormatError) as whole:
        list(read_conll(path, nlp.vocab))
    errors = []
    for r in split_file(path, 9):
        try:
            list(read_conll(path, nlp.vocab, byte_range=r))
        except ConllFormatError as err:
            errors.append(str(err))
    assert errors == [str(whole.value)] and whole.value.line_no > 60

"""HEAD / DEP rows of parsed chunks (components/parse_rows.py), against
rows worked out by hand."""
import numpy

from spacy_mstparse.components.parse_rows import doc_rows

LABEL_IDS = numpy.array([100, 200, 300, 0], dtype="uint64")   # labels 0-2, then -1
JOINED = 999


def as_int(rows):
    return rows.astype("int64").tolist()


def test_one_sentence_per_doc_and_two_docs_in_a_batch():
    # doc 1: "a b c" with b the root, a <- b (label 0), c <- b (label 2)
    # doc 2: "d e" with d the root, e <- d (label 1)
    items = [(3, [(0, 3, False)], [(numpy.array([0, 2, 0, 2]), numpy.array([-1, 0, 1, 2]))]),
             (2, [(0, 2, False)], [(numpy.array([0, 0, 1]), numpy.array([-1, 1, 1]))])]
    first, second = doc_rows(items, LABEL_IDS, JOINED)
    assert as_int(first) == [[1, 100], [0, 200], [-1, 300]]
    assert as_int(second) == [[0, 200], [-1, 200]]


def test_a_continuing_chunk_joins_its_root_to_the_first_chunk_root():
    # one sentence cut into chunks [0, 2) and [2, 4): roots at 1 and 2
    parses = [(numpy.array([0, 2, 0]), numpy.array([-1, 0, 1])),
              (numpy.array([0, 0, 1]), numpy.array([-1, 2, 0]))]
    (rows,) = doc_rows([(4, [(0, 2, False), (2, 4, True)], parses)], LABEL_IDS, JOINED)
    assert as_int(rows) == [[1, 100], [0, 200], [-1, JOINED], [-1, 100]]


def test_words_outside_the_chunks_get_no_head_and_no_label():
    parses = [(numpy.array([0, 0, 1]), numpy.array([-1, 0, 2]))]
    (rows,) = doc_rows([(4, [(1, 3, False)], parses)], LABEL_IDS, JOINED)
    assert as_int(rows) == [[0, 0], [0, 100], [-1, 300], [0, 0]]


def test_no_docs():
    assert doc_rows([], LABEL_IDS, JOINED) == []

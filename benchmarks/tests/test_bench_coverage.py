"""benchmarks/bench_coverage.py: the split of head_prob's coverage by
punctuation, against counts worked out by hand."""
import pytest

from benchmarks.bench_coverage import report, table

# (head_prob, head right?, punctuation?)
ROWS = [(0.95, True, False), (0.99, True, False), (0.5, False, False), (0.92, False, False),
        (0.97, True, True), (0.3, True, True)]


def test_groups_count_their_own_tokens():
    groups = report(ROWS)
    everything, words, punct = (groups[k] for k in ("all", "without punctuation", "punctuation"))
    assert everything["words"] == 6 and words["words"] == 4 and punct["words"] == 2
    assert words["share"] == pytest.approx(4 / 6)
    # words: 0.95, 0.99 and 0.92 pass 0.9, two of them right; only 0.99 passes 0.99
    assert words["coverage@0.9"] == pytest.approx(3 / 4)
    assert words["accuracy@0.9"] == pytest.approx(2 / 3)
    assert words["coverage@0.99"] == pytest.approx(1 / 4)
    assert punct["coverage@0.9"] == pytest.approx(1 / 2) and punct["accuracy@0.9"] == 1.0
    assert everything["coverage@0.9"] == pytest.approx(4 / 6)
    assert everything["accuracy"] == pytest.approx(4 / 6)
    assert "| without punctuation | 66.7% | 50.00% |" in table(groups)

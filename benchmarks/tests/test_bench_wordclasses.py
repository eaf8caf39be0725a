"""benchmarks/bench_wordclasses.py: the timing record and its table."""
from benchmarks import bench_wordclasses as bw


def test_induction_record_counts_the_corpus():
    sentences = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"]] * 5
    row = bw.time_induction(sentences, runs=2)
    assert (row["sentences"], row["tokens"], row["types"]) == (15, 45, 6)
    assert row["classed_words"] == 6 and 1 <= row["classes_used"] <= 6 and row["depth"] == 8
    assert len(row["seconds_runs"]) == 2 and row["seconds"] >= 0
    results = {"settings": {"runs": 2, "depth": 8, "min_count": 2, "passes": 10},
               "corpora": {"toy": row},
               "command_run": {"wall_seconds": 1.25, "peak_rss_mb": 100.0}}
    table = bw.markdown_table(results)
    assert "| toy | 15 | 45 | 6 | 6 |" in table
    assert "median of 2 runs" in table and "1.2 s wall" in table
    assert "depth 8 (256 classes), min_count 2, at most 10 passes" in table


def test_reads_a_treebank_s_words(tmp_path):
    path = tmp_path / "xx_toy-ud-train.conllu"
    path.write_text("# text = Hi there\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n"
                    "2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\n\n", encoding="utf-8")
    assert bw.read_words(path) == [["Hi", "there"]]

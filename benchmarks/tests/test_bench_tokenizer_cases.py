import spacy

from benchmarks import bench_tokenizer_cases as bt


def test_text_and_spans_follow_the_spaces():
    text, spans = bt.text_and_spans([("a)", True), ("x", False), (".", True)])
    assert text == "a) x. "
    assert spans == {(0, 2), (3, 4), (4, 5)}


def test_span_scores_by_hand():
    tokenizer = spacy.blank("xx").tokenizer
    assert [t.text for t in tokenizer("a) xy. ")] == ["a", ")", "xy", "."]
    scores = bt.span_scores(tokenizer, [bt.text_and_spans([("a)", True), ("xy", False), (".", True)])])
    # predicted a, ), xy, . against gold a), xy, . : 2 right of 4 predicted, of 3 gold
    assert scores["precision"] == 50.0 and round(scores["recall"], 4) == round(200 / 3, 4)
    assert round(scores["f1"], 4) == round(2 * 50 * (200 / 3) / (50 + 200 / 3), 4)
    assert scores["words"] == 3

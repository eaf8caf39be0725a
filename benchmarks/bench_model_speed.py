"""Parse speed of saved ``mst_parser`` pipelines side by side: the parser
step alone on a treebank with its gold words, sentences and tags (one
sentence per Doc, ``pipe`` in batches of 128), every pipeline once per round
in turn, medians over rounds of words/s and of each pipeline's time ratio to
the first one. Ratios within a round are what a shared machine can compare.

    python -m benchmarks.bench_model_speed MODEL_A MODEL_B ... \\
        --treebank ../shared/data/ud/en_ewt-ud-dev.conllu --runs 5 \\
        --output benchmarks/results/model_speed.json

Used to check that the features chosen from the treebank (``auto``) did not
slow the shipped configs down: the models of ``bench_languages``'
``mst-o1`` and ``mst-o1-before`` systems.
"""
import argparse
import statistics
import sys
from pathlib import Path
from typing import List, Optional

from benchmarks import common


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", type=Path, help="saved pipelines (the first: baseline)")
    p.add_argument("--treebank", type=Path, default=common.DATA / "en_ewt-ud-dev.conllu")
    p.add_argument("--runs", type=int, default=5, help="interleaved timing rounds")
    p.add_argument("--output", type=Path, default=common.RESULTS / "model_speed.json")
    args = p.parse_args(argv)
    import spacy

    pipes = []
    for model in args.models:
        nlp = spacy.load(model)
        pipes.append((common.rel(model), nlp.get_pipe("mst_parser")))
    examples = common.gold_examples(args.treebank, pipes[0][1].vocab)
    docs = [eg.predicted for eg in examples]
    words = sum(len(d) for d in docs)
    seconds = {name: [] for name, _ in pipes}
    for run in range(args.runs):
        for name, parser in pipes:
            _, took = common.timed_pipe(parser, docs)
            seconds[name].append(took)
        common.log(f"round {run + 1}: " + ", ".join(
            f"{name} {words / times[-1]:,.0f} w/s" for name, times in seconds.items()))
    base = seconds[pipes[0][0]]
    rows = {name: {"words_per_second_median": words / statistics.median(times),
                   "time_ratio_to_first_median": statistics.median(
                       t / b for t, b in zip(times, base)),
                   "seconds": times}
            for name, times in seconds.items()}
    results = {"command": common.invocation("bench_model_speed", argv),
               "code": common.working_tree_code(), "machine": common.machine_info(),
               "treebank": common.rel(args.treebank), "words": words, "runs": args.runs,
               "models": rows}
    table = "\n".join(
        ["| pipeline | words/s (median) | time / first (median) |", "| --- | ---: | ---: |"]
        + [f"| {name} | {row['words_per_second_median']:,.0f} | "
           f"{row['time_ratio_to_first_median']:.3f} |" for name, row in rows.items()])
    common.finish_results(results, args.output, table + "\n", None)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the arc filter (``filter_arcs``, ``spacy_mstparse/features/arc_filter.pyx``)
costs in accuracy and saves in scored arcs, per treebank and slack.

For every ``--model TREEBANK=PATH`` (an ``mst_parser`` pipeline trained on
TREEBANK's train split, e.g. by ``spacy train configs/mst_parser.cfg``) it
fits the filter on the train split with each ``--slacks`` value (the
distance bins allowed beyond the longest training arc of a head tag, child
tag and direction; the shipped filter uses ``SLACK``), installs it in the
trained model (prediction only: the weights are the same) and parses the
dev split (gold words, tags and sentences), next to the model without a
filter. Reported: dev UAS / LAS (the project's scorer, punctuation
excluded), the share of the dev arcs the parser scores, the share of dev
gold arcs the filter rules out (the most it could cost), and the CPU
seconds of one ``pipe`` over dev (indicative: one run, not interleaved;
``bench_shipped_speed`` measures speed).

    python -m benchmarks.bench_arc_filter --model en_ewt=PATH --model cs_cltt=PATH

Output: ``benchmarks/results/arc_filter.json`` and a Markdown table.
"""
import argparse
import time
from pathlib import Path

import numpy

from benchmarks import common
from benchmarks.bench_speed import uas_las


def filter_stats(arc_filter, sentences):
    """(share of arcs allowed, share of gold arcs ruled out) over ``sentences``
    ((Sentence, gold heads) pairs)."""
    allowed = total = gold_out = words = 0
    for sentence, heads in sentences:
        mask = arc_filter.allowed(sentence)
        n = sentence.n
        allowed += int(mask.sum())
        total += n * n
        gold_out += int((~mask[heads[1:], numpy.arange(1, n + 1)]).sum())
        words += n
    return allowed / total, gold_out / words


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", default=[], metavar="TREEBANK=PATH",
                   required=True, help="a pipeline trained on TREEBANK's train split")
    p.add_argument("--slacks", default="0,1,2,3")
    p.add_argument("--data-dir", type=Path, default=common.DATA)
    p.add_argument("--output", type=Path, default=common.RESULTS / "arc_filter.json")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    models = dict(item.split("=", 1) for item in args.model)
    slacks = [int(s) for s in args.slacks.split(",") if s.strip()]

    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.features.arc_filter import SLACK, ArcFilter
    from spacy_mstparse.pipeline_input import make_input_docs

    result = {"command": common.invocation("bench_arc_filter", argv),
              "commit": common.git("rev-parse", "HEAD"),
              "dirty": bool(common.git("status", "--porcelain", "--untracked-files=no")),
              "machine": common.machine_info(), "shipped_slack": SLACK, "treebanks": {}}
    rows = []
    for treebank, path in models.items():
        train, dev = (args.data_dir / f"{treebank}-ud-{split}.conllu" for split in ("train", "dev"))
        for f in (train, dev):
            if not f.exists():
                p.error(f"{f}: not found (--data-dir)")
        nlp = spacy.load(path)
        parser = nlp.get_pipe("mst_parser")
        common.log(f"{treebank}: encoding {train.name}")
        train_trees = common.encoded_gold(parser, common.gold_examples(train, nlp.vocab))
        dev_examples = common.gold_examples(dev, nlp.vocab)
        dev_trees = common.encoded_gold(parser, dev_examples)
        gold = list(read_conllu(dev, nlp.vocab, n_sents=1))
        docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
        list(parser.pipe(common.copy_docs(docs[:200]), batch_size=128))   # warm-up (8-bit codes)
        runs = {}
        for slack in [None] + slacks:
            arc_filter = None if slack is None else ArcFilter.fit(train_trees, slack)
            parser.graph.set_arc_filter(arc_filter)
            copies = common.copy_docs(docs)
            start = time.process_time()
            parsed = list(parser.pipe(copies, batch_size=128))
            seconds = time.process_time() - start
            uas, las = uas_las(parsed, gold)
            scored, ruled_out = (1.0, 0.0) if arc_filter is None else filter_stats(
                arc_filter, dev_trees)
            name = "none" if slack is None else f"slack {slack}"
            runs[name] = {"uas": uas, "las": las, "arcs_scored": scored,
                          "gold_arcs_ruled_out": ruled_out, "pipe_cpu_seconds": seconds}
            rows.append(f"| {treebank} | {name}{' (shipped)' if slack == SLACK else ''} | "
                        f"{uas:.2f} / {las:.2f} | {100 * scored:.1f}% | "
                        f"{100 * ruled_out:.2f}% | {seconds:.2f} |")
            common.log(rows[-1])
        result["treebanks"][treebank] = {"model": Path(path).name, "runs": runs}
    table = "\n".join(["| treebank | filter | dev UAS / LAS | arcs scored | gold arcs "
                       "ruled out | pipe CPU s |", "| --- | --- | ---: | ---: | ---: | ---: |"]
                      + rows) + "\n"
    common.finish_results(result, args.output, table, args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

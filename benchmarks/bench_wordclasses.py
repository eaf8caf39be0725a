"""Induced word classes (``spacy_mstparse.wordclasses``): time, coverage and
the parser's dev UAS with them.

1. Time: ``induce_word_classes`` on the words of each UD train file (depth
   8, and depth 6 for EWT; median of ``--repeats`` runs, in-process, one
   core), after reading the words (timed apart).
2. Coverage: the share of EWT dev tokens (punctuation included) that get a
   cluster (the form as written, else lower-cased, as ``ClusterTable.column``
   reads it) with classes induced from EWT train under each variant (min
   count 1 / 2 / 3, lower-cased corpus), and with spacy-lookups-data's
   English Brown clusters when installed.
3. UAS (``--variants``, optional): a first-order mst_parser trained
   in-process as ``bench_clusters`` does (gold tags, 5-best MIRA, batches of
   20, ``--epochs`` epochs) with ``cluster_bits = 6`` read from each
   variant's paths file (``lookups``: spacy-lookups-data's English Brown
   clusters), against none (``o1``).

Usage::

    .venv/bin/python -m benchmarks.bench_wordclasses
    .venv/bin/python -m benchmarks.bench_wordclasses --variants mc2,mc1,lower,lookups --epochs 3

Output: ``benchmarks/results/wordclasses.json`` and the figures on stdout.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

from benchmarks import common
from benchmarks.common import DATA

LOOKUPS = "lookups"   # UAS variant: spacy-lookups-data's English Brown clusters, for reference
TRAIN_FILES = ["en_ewt", "cs_cltt", "hu_szeged", "tr_imst"]
# name -> induce_word_classes keyword arguments
VARIANTS = {
    "mc1": {"min_count": 1},
    "mc2": {"min_count": 2},
    "mc3": {"min_count": 3},
    "lower": {"min_count": 2, "lowercase": True},
}


def treebank_words(path: Path, vocab):
    from spacy_mstparse.corpus.word_lists import treebank_sentences

    return list(treebank_sentences(path, vocab))


def time_induction(sentences, repeats: int, **kwargs) -> dict:
    from spacy_mstparse.wordclasses import induce_word_classes

    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        classes = induce_word_classes(sentences, **kwargs)
        seconds.append(time.perf_counter() - start)
    return {"seconds": seconds, "median_seconds": statistics.median(seconds),
            "words_with_class": len(classes), "objectives": list(classes.objectives)}


def coverage(table, dev_sentences) -> float:
    import numpy
    from spacy.strings import get_string_id

    words = [w for s in dev_sentences for w in s]
    orth = numpy.array([get_string_id(w) for w in words], dtype="uint64")
    lower = numpy.array([get_string_id(w.lower()) for w in words], dtype="uint64")
    return 100.0 * float((table.column(orth, lower, 6) != 0).mean())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--variants", default="", help=f"UAS runs: comma-separated of {','.join(VARIANTS)}")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--output", type=Path, default=common.RESULTS / "wordclasses.json")
    p.add_argument("--data-dir", type=Path, default=DATA)
    args = p.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(variants) - set(VARIANTS) - {LOOKUPS}
    if unknown:
        p.error(f"unknown variants {sorted(unknown)}: expected some of {', '.join(VARIANTS)}")

    import spacy
    from spacy.strings import get_string_id

    from spacy_mstparse.features.clusters import read_lookups_clusters
    from spacy_mstparse.wordclasses import induce_word_classes

    results = {"command": common.invocation("bench_wordclasses", argv),
               "commit": common.git("rev-parse", "HEAD"), "machine": common.machine_info(),
               "timing": {}, "coverage": {}, "uas": {}}
    vocab = spacy.blank("xx").vocab
    print("| train file | sentences | tokens | read s | depth | words with a class | induce s (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in TRAIN_FILES:
        start = time.perf_counter()
        sentences = treebank_words(args.data_dir / f"{name}-ud-train.conllu", vocab)
        read_seconds = time.perf_counter() - start
        for depth in ((6, 8) if name == "en_ewt" else (8,)):
            run = time_induction(sentences, args.repeats, depth=depth)
            run.update(sentences=len(sentences), tokens=sum(map(len, sentences)),
                       read_seconds=read_seconds, depth=depth)
            results["timing"][f"{name}_depth{depth}"] = run
            print(f"| {name} | {run['sentences']:,} | {run['tokens']:,} | {read_seconds:.1f} | "
                  f"{depth} | {run['words_with_class']:,} | {run['median_seconds']:.2f} |")
        common.save_results(results, args.output)

    train = treebank_words(args.data_dir / "en_ewt-ud-train.conllu", vocab)
    dev = treebank_words(args.data_dir / "en_ewt-ud-dev.conllu", vocab)
    paths_files = {}
    common.WORK.mkdir(parents=True, exist_ok=True)
    print("\n| EWT train classes | words with a class | dev tokens with a cluster (%) |")
    print("|---|---:|---:|")
    for variant, kwargs in VARIANTS.items():
        classes = induce_word_classes(train, **kwargs)
        paths_files[variant] = common.WORK / f"wordclasses_ewt_{variant}.tsv"
        classes.write_paths(paths_files[variant])
        covered = coverage(classes.to_cluster_table(get_string_id), dev)
        results["coverage"][variant] = {"kwargs": kwargs, "words": len(classes), "dev_tokens": covered}
        print(f"| {variant} {kwargs} | {len(classes):,} | {covered:.2f} |")
    try:
        table = read_lookups_clusters("en", get_string_id)
        covered = coverage(table, dev)
        results["coverage"]["spacy-lookups-data"] = {"words": len(table), "dev_tokens": covered}
        print(f"| spacy-lookups-data (en Brown clusters) | {len(table):,} | {covered:.2f} |")
    except Exception as err:  # noqa: BLE001 - the optional package; report and go on
        print(f"(spacy-lookups-data: {err})")
    common.save_results(results, args.output)

    if variants:
        uas_runs(args, variants, paths_files, results)
    return 0


def uas_runs(args, variants, paths_files, results) -> None:
    from benchmarks.bench_clusters import system_config
    from benchmarks.bench_grandparents import train_and_time
    from spacy_mstparse.features.clusters import LOOKUPS_SOURCE

    configs = {"o1": system_config("o1")}
    files = {}
    for variant in variants:
        configs[f"o1c6_{variant}"] = system_config("o1c6")
        files[f"o1c6_{variant}"] = (LOOKUPS_SOURCE if variant == LOOKUPS
                                    else str(paths_files[variant]))
    # train_and_time initializes the parsers once each, in the order of configs
    names = iter(configs)

    def initialize(parser, nlp, examples):
        name = next(names)
        if name in files:
            parser.initialize(lambda: examples, nlp=nlp, clusters=files[name])

    run_args = argparse.Namespace(data_dir=args.data_dir, train_limit=args.train_limit,
                                  epochs=args.epochs, seed=args.seed, runs=1,
                                  output=args.output.with_name(args.output.stem + "_uas.json"))
    uas = {"command": results["command"], "commit": results["commit"], "systems": {}}
    train_and_time(configs, run_args, uas, initialize=initialize)
    print("\n| system | UAS by epoch | best UAS |")
    print("|---|---|---:|")
    for name in configs:
        epochs = uas["systems"][name]["epochs"]
        results["uas"][name] = {"uas_by_epoch": [e["uas"] for e in epochs],
                                "las_by_epoch": [e["las"] for e in epochs],
                                "clusters": Path(files[name]).name if name in files else None}
        print(f"| {name} | {' / '.join('%.2f' % e['uas'] for e in epochs)} "
              f"| {max(e['uas'] for e in epochs):.2f} |")
    common.save_results(results, args.output)


if __name__ == "__main__":
    sys.exit(main())

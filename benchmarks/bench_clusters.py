"""Brown-cluster features (``cluster_bits``) against none, on EWT dev.

Koo, Carreras & Collins (2008) copy the dependency features with Brown
cluster path prefixes in place of POS tags. This trains each system
in-process (``common.train_epochs``: the component's ``update``, batches of
20, shuffle seed ``--seed``, gold tags, 5-best MIRA), evaluates UAS / LAS
(punctuation excluded) on EWT dev after every epoch, then times
``parser.pipe`` over dev round-robin (``--runs`` rounds, one core).

Systems: ``o1`` (``configs/mst_parser.cfg``), ``o2`` (``configs/mst_parser_o2.cfg``),
``o3`` (o2 + grandparents), each optionally followed by ``c<bits>``: a
cluster column of the first <bits> bits of each word's path (``c64``: the
whole path), from ``--clusters`` (default: the ``spacy-lookups-data``
table; ``pip install 'spacy-mstparse[clusters]'``).

Usage::

    .venv/bin/python -m benchmarks.bench_clusters --systems o1,o1c6,o1c64 --epochs 8

Output: ``benchmarks/results/clusters.json`` and a Markdown table.
"""
import argparse
import re
import statistics
import sys
from pathlib import Path

from benchmarks import common
from benchmarks.bench_grandparents import MIRA5, SYSTEMS as BASES
from benchmarks.bench_seed_tables import evaluate, sentence_arrays
from benchmarks.common import DATA

V2_FEATURES = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v2", "tag_columns": "both",
               "use_morph": False, "n_buckets": 2**22, "direction_backoff": True}


def system_config(name: str) -> dict:
    """The component config of a system name such as ``o2c6``."""
    match = re.fullmatch(r"(o[123])(?:c(\d+))?", name)
    if not match or match.group(1) not in BASES:
        raise ValueError(f"unknown system {name!r} (o1, o2 or o3, optionally + c<bits>)")
    config = dict(BASES[match.group(1)])
    features = dict(config.get("features", V2_FEATURES))
    features["cluster_bits"] = int(match.group(2) or 0)
    config["features"] = features
    return config


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--systems", default="o1,o1c6", help="comma-separated, e.g. o1,o1c6,o2c64")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--clusters", default=None, help="Brown paths file (default: spacy-lookups-data)")
    p.add_argument("--output", type=Path, default=common.RESULTS / "clusters.json")
    p.add_argument("--data-dir", type=Path, default=DATA)
    args = p.parse_args(argv)
    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    try:
        configs = {name: system_config(name) for name in names}
    except ValueError as err:
        p.error(str(err))

    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.evaluation import make_input_docs

    nlp = spacy.blank("en")
    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", nlp.vocab,
                                    args.train_limit)
    dev_gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", nlp.vocab, n_sents=1))
    dev = make_input_docs(dev_gold, nlp.vocab, gold_tags=True)
    gold_arrays = [sentence_arrays(d) for d in dev_gold]
    n_words = sum(len(d) for d in dev)
    results = {"command": common.invocation("bench_clusters", argv),
               "commit": common.git("rev-parse", "HEAD"), "machine": common.machine_info(),
               "dev_words": n_words, "systems": {}}
    parsers = {}
    for name in names:
        pipe_nlp = spacy.blank("en", vocab=nlp.vocab)
        parser = pipe_nlp.add_pipe("mst_parser", config={**configs[name], "learner": MIRA5})
        pipe_nlp.initialize(lambda: examples)
        if args.clusters:
            parser.initialize(lambda: examples, nlp=pipe_nlp, clusters=args.clusters)
        epochs = []

        def on_epoch(epoch, losses, seconds, parser=parser, epochs=epochs, name=name):
            scores = evaluate(parser, dev, gold_arrays)
            epochs.append({"epoch": epoch, "train_seconds": seconds, "uas": scores["uas"],
                           "las": scores["las"], "words_per_second": scores["words_per_second"]})
            common.log(f"{name} epoch {epoch}: UAS {scores['uas']:.2f} LAS {scores['las']:.2f} "
                       f"train {seconds:.0f}s, parse {scores['words_per_second']:,.0f} words/s")
            return False

        common.train_epochs(parser, examples, args.epochs, 20, common.numpy_orders(args.seed),
                            on_epoch)
        results["systems"][name] = {"config": configs[name], "epochs": epochs}
        parsers[name] = parser
        common.save_results(results, args.output)
    times = {name: [] for name in parsers}
    for r in range(args.runs):
        for name, parser in parsers.items():
            times[name].append(common.timed_pipe(parser, dev)[1])
        common.log(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in parsers))
    for name in parsers:
        run = results["systems"][name]
        run["seconds"] = times[name]
        run["words_per_second_median"] = n_words / statistics.median(times[name])
        run[f"time_vs_{names[0]}"] = statistics.median(
            b / a for a, b in zip(times[names[0]], times[name]))
    common.save_results(results, args.output)
    print(f"| system | UAS by epoch | LAS by epoch | best UAS / LAS | words/s (median of "
          f"{args.runs}) | time / {names[0]} |")
    print("|---|---|---|---:|---:|---:|")
    for name in names:
        run = results["systems"][name]
        best = max(run["epochs"], key=lambda e: e["uas"])
        print(f"| {name} | {' / '.join('%.2f' % e['uas'] for e in run['epochs'])} "
              f"| {' / '.join('%.2f' % e['las'] for e in run['epochs'])} "
              f"| {best['uas']:.2f} / {best['las']:.2f} (epoch {best['epoch']}) "
              f"| {run['words_per_second_median']:,.0f} | {run[f'time_vs_{names[0]}']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

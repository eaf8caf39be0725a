"""Parse speed of first- vs second-order ``mst_parser``, measured interleaved.

The seed-tables benchmark times each parser right after its own training,
so on a shared machine its speed column mixes in whatever else was running
then. This script trains a first-order and a second-order parser (PA-I, gold
tags, ``--epochs`` epochs on EWT train; the speed of a linear model does not
depend on how long it trained) for each decoder, then times ``parser.pipe``
over EWT dev round-robin, ``--runs`` times each, and reports the median
words/s and the ratios within the same round. One process, one core.

``--systems`` picks other parsers to time against each other, e.g. the
first-order parser with and without the direction back-off features
(``o1-eisner`` vs ``o1-eisner-v1``, ``FirstOrderFeatures.v1``).

Usage::

    .venv/bin/python -m benchmarks.bench_order_speed            # ~10 min
    .venv/bin/python -m benchmarks.bench_order_speed --train-limit 2000 --runs 3
    .venv/bin/python -m benchmarks.bench_order_speed --systems o1-eisner,o1-eisner-v1 \
        --output benchmarks/results/direction_backoff_speed.json

Output: ``benchmarks/results/order_speed.json`` and a Markdown table on stdout.
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

from benchmarks import common
from benchmarks.common import DATA, FEATURES_V1, PA_I

SYSTEMS = {
    f"o{order}-{decoder}{suffix}": {"order": order, "decoder": decoder, **extra}
    for order in (1, 2)
    for decoder in ("eisner", "chu_liu_edmonds")
    for suffix, extra in (("", {}), ("-v1", {"features": FEATURES_V1}))
}
DEFAULT_SYSTEMS = "o1-eisner,o1-chu_liu_edmonds,o2-eisner,o2-chu_liu_edmonds"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--systems", default=DEFAULT_SYSTEMS,
                   help=f"comma-separated, from: {', '.join(SYSTEMS)}")
    p.add_argument("--output", type=Path, default=common.RESULTS / "order_speed.json")
    p.add_argument("--data-dir", type=Path, default=DATA,
                   help="where en_ewt-ud-{train,dev}.conllu are (default ../shared/data/ud)")
    args = p.parse_args(argv)
    names = common.choose_names(p, args.systems, SYSTEMS, "system")

    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.blank("en")
    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", nlp.vocab,
                                    args.train_limit)
    dev_gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", nlp.vocab, n_sents=1))
    dev = make_input_docs(dev_gold, nlp.vocab, gold_tags=True)
    n_words = sum(len(d) for d in dev)
    systems = {}
    for name in names:
        pipe_nlp = spacy.blank("en", vocab=nlp.vocab)
        parser = pipe_nlp.add_pipe("mst_parser", config={**SYSTEMS[name], "learner": PA_I})
        pipe_nlp.initialize(lambda: examples)
        seconds = common.train_epochs(parser, examples, args.epochs, 20, common.numpy_orders(0))
        common.log(f"{name}: trained in {seconds:.0f}s")
        systems[name] = parser
    times = {name: [] for name in systems}
    for r in range(args.runs):
        for name, parser in systems.items():
            times[name].append(common.timed_pipe(parser, dev)[1])
        common.log(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in systems))
    result = {
        "command": common.invocation("bench_order_speed", argv),
        "machine": common.machine_info(),
        "commit": common.git("rev-parse", "HEAD"),
        "dev_words": n_words,
        "seconds": times,
        "words_per_second_median": {n: n_words / statistics.median(t) for n, t in times.items()},
        "slowdown_o2_vs_o1_median_of_ratios": {
            dec: statistics.median(
                b / a for a, b in zip(times[f"o1-{dec}"], times[f"o2-{dec}"]))
            for dec in ("eisner", "chu_liu_edmonds")
            if f"o1-{dec}" in times and f"o2-{dec}" in times
        },
        f"time_vs_{names[0]}_median_of_ratios": {
            n: statistics.median(b / a for a, b in zip(times[names[0]], times[n]))
            for n in names
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1))
    wps = result["words_per_second_median"]
    ratios = result[f"time_vs_{names[0]}_median_of_ratios"]
    print(f"| parser | words/s (median of {args.runs}) | time / {names[0]} time |")
    print("|---|---:|---:|")
    for n in names:
        print(f"| {n} | {wps[n]:,.0f} | {ratios[n]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

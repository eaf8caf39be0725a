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
whole path) from ``--clusters`` (default: the ``spacy-lookups-data``
table; ``pip install 'spacy-mstparse[clusters]'``), then optionally by
``b<k>``: an arc table of 2^k weights instead of 2^22 (e.g. ``o2c6b24``),
then optionally by ``s``: the sibling model's stop factors
(``sibling_stops``, Koo & Collins 2010; order 2 or 3, e.g. ``o2c6b24s``),
then optionally by ``q``: predict with 8-bit weights
(``quantize_weights``; trained as without it), then optionally by
``m``: the FEATS features of head and child (``use_morph``, e.g.
``o2c6b24sm``), then optionally by ``k<n>``: n-best MIRA instead of 5-best
(e.g. ``o2c6b24sk10``).

Usage::

    .venv/bin/python -m benchmarks.bench_clusters --systems o1,o1c6,o1c64 --epochs 8

Output: ``benchmarks/results/clusters.json`` and a Markdown table.
"""
import argparse
import re
import sys
from pathlib import Path

from benchmarks import common
from benchmarks.bench_grandparents import MIRA5, SYSTEMS as BASES, train_and_time
from benchmarks.common import DATA

V2_FEATURES = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v2", "tag_columns": "both",
               "use_morph": False, "n_buckets": 2**22, "direction_backoff": True}


def system_config(name: str) -> dict:
    """The component config of a system name such as ``o2c6``."""
    match = re.fullmatch(
        r"(o[123])(?:c(\d+))?(?:b(\d+))?(s)?(q)?(m)?(?:k(\d+))?(?:C(\d+(?:\.\d+)?))?", name)
    if not match or match.group(1) not in BASES or (match.group(4) and match.group(1) == "o1"):
        raise ValueError(f"unknown system {name!r} (o1, o2 or o3, optionally + c<bits>, "
                         "then optionally + b<log2 of the arc table size>, then for o2 / o3 "
                         "optionally + s for stop factors, then optionally + q for 8-bit "
                         "weights, then optionally + m for morphological features, then "
                         "optionally + k<n> for n-best MIRA, then optionally + C<value> for "
                         "MIRA's clipping constant)")
    config = dict(BASES[match.group(1)])
    features = dict(config.get("features", V2_FEATURES))
    features["cluster_bits"] = int(match.group(2) or 0)
    if match.group(3):
        features["n_buckets"] = 2 ** int(match.group(3))
    features["sibling_stops"] = bool(match.group(4))
    features["use_morph"] = bool(match.group(6))
    config["features"] = features
    if match.group(5):
        config["quantize_weights"] = True
    if match.group(7):
        config["learner"] = {**MIRA5, "k": int(match.group(7))}
    if match.group(8):
        config["learner"] = {**config.get("learner", MIRA5), "C": float(match.group(8))}
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

    results = {"command": common.invocation("bench_clusters", argv),
               "commit": common.git("rev-parse", "HEAD"), "machine": common.machine_info(),
               "systems": {}}

    def initialize(parser, nlp, examples):
        if args.clusters:
            parser.initialize(lambda: examples, nlp=nlp, clusters=args.clusters)

    train_and_time(configs, args, results, initialize=initialize)
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

"""Whether a held-out trial on the training set predicts the better decoder
(a candidate rule for ``decoder = "auto"``, measured and not adopted).

For each treebank (UD training files in ../shared/data/ud, gold tags) this
runs ``held_out_trial`` (cross-fitting: each part of the training set
parsed by models trained on the other parts, with Eisner and with
Chu-Liu-Edmonds, through ``GraphTrainer``) for every (folds, epochs, seed)
asked for, and records each decoder's held-out UAS (all words), the
difference, and the trial's time against one full training epoch measured
just before it in the same process (default learner: MIRA, k = 5). The
full runs it is compared with are ``bench_seed_tables --eval-split dev``
(BENCHMARKS.md, "Projective vs non-projective decoding, and `auto`").

Usage::

    .venv/bin/python -m benchmarks.bench_decoder_choice --treebanks hu_szeged,tr_imst \\
        --folds 2,4 --epochs 1,2 --seeds 0,1

Results: ``benchmarks/results/decoder_choice.json`` / ``.md``.
"""
import argparse
import copy
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, Sequence, Tuple

import numpy

from benchmarks import common
from benchmarks.bench_seed_tables import TREEBANKS
from benchmarks.common import DATA, MIRA_K5

# Danish DDT has no training file here: its dev file is the cross-fitted
# training set (no test file is read).
CORPORA = {**{name: (lang, train) for name, (lang, train, _, _) in TREEBANKS.items()},
           "da_ddt_dev": ("da", "da_ddt-ud-dev.conllu")}


def held_out_trial(features, order: int, make_learner, gold: Sequence[Tuple[object, numpy.ndarray]],
                   *, folds: int = 2, epochs: int = 1, seed: int = 0,
                   decoders: Sequence[str] = ("eisner", "chu_liu_edmonds")) -> Dict[str, int]:
    """Correct heads of each decoder on held-out parts of ``gold`` =
    [(Sentence, heads)], each part parsed by models trained on the others
    (a fresh ``make_learner()`` per model). Also ``words``: the words
    parsed per decoder."""
    from spacy_mstparse.graph import GraphModel, GraphTrainer

    if folds < 2:
        raise ValueError(f"a held-out trial needs folds >= 2, got {folds}")
    rng = numpy.random.RandomState(seed)
    parts = numpy.array_split(rng.permutation(len(gold)), folds)
    correct = {name: 0 for name in decoders}
    words = 0
    for f, held in enumerate(parts):
        train = [gold[i] for g, part in enumerate(parts) if g != f for i in part]
        orders = [rng.permutation(len(train)) for _ in range(epochs)]
        for name in decoders:
            model = GraphModel(features, order=order, decoder=name)
            trainer = GraphTrainer(model, make_learner())
            trainer.begin(train)
            for perm in orders:
                trainer.train((train[i][0], train[i][1], None) for i in perm)
                trainer.flush()
            arc_weights = trainer.prediction_weights()[0]  # (no labeler here)
            for i in held:
                sentence, heads = gold[i]
                predicted = model.decode(model.scores(sentence, arc_weights))[0]
                correct[name] += int(numpy.count_nonzero(predicted[1:] == heads[1:]))
        words += sum(len(gold[i][1]) - 1 for i in held)
    return {**correct, "words": words}


def learner_factory(variant: str):
    """Fresh MIRA learners of a variant: ``k5`` (the default), ``k1``,
    ``k5la`` (k = 5 with the Hamming loss added to the scores it decodes)."""
    from spacy_mstparse.registry import make_mira

    k = int(variant[1:].removesuffix("la"))

    def make():
        learner = make_mira(k=k)
        learner.loss_augmented = variant.endswith("la")
        return learner
    return make


def run_treebank(name: str, args) -> Dict[str, Any]:
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401 (factory)
    from spacy_mstparse.graph import GraphModel, GraphTrainer
    from spacy_mstparse.graph.decoder_choice import nonprojective_arc_share

    lang, train_file = CORPORA[name]
    nlp = spacy.blank(lang)
    parser = nlp.add_pipe("mst_parser", config={"learner": MIRA_K5})
    examples = common.gold_examples(Path(args.data_dir) / train_file, nlp.vocab, args.train_limit)
    nlp.initialize(lambda: examples)
    gold = common.encoded_gold(parser, examples)
    share = nonprojective_arc_share([heads for _, heads in gold])
    # One full-data epoch with Eisner: the unit of the trial's cost.
    model = GraphModel(parser.model_features, order=args.order, decoder="eisner")
    trainer = GraphTrainer(model, copy.deepcopy(parser.learner))
    trainer.begin(gold)
    start = time.perf_counter()
    trainer.train((s, h, None) for s, h in gold)
    trainer.flush()
    trainer.prediction_weights()
    epoch_seconds = time.perf_counter() - start
    out = {"treebank": name, "sentences": len(gold), "nonprojective_arc_share": share,
           "order": args.order, "epoch_seconds": epoch_seconds, "trials": []}
    common.log(f"{name}: {len(gold)} sentences, non-projective arcs {100 * share:.2f}%, "
               f"one epoch {epoch_seconds:.1f}s")
    for variant, folds, epochs, seed in itertools.product(args.variants, args.folds, args.epochs,
                                                         args.seeds):
        start = time.perf_counter()
        trial = held_out_trial(parser.model_features, args.order, learner_factory(variant), gold,
                               folds=folds, epochs=epochs, seed=seed)
        seconds = time.perf_counter() - start
        words = trial["words"]
        row = {"variant": variant, "folds": folds, "epochs": epochs, "seed": seed,
               "words": words,
               "uas_eisner": 100.0 * trial["eisner"] / words,
               "uas_cle": 100.0 * trial["chu_liu_edmonds"] / words,
               "seconds": seconds, "epochs_equivalent": seconds / epoch_seconds}
        row["cle_minus_eisner"] = row["uas_cle"] - row["uas_eisner"]
        out["trials"].append(row)
        common.log(f"{name} {variant} folds={folds} epochs={epochs} seed={seed}: Eisner "
                   f"{row['uas_eisner']:.2f} CLE {row['uas_cle']:.2f} "
                   f"({row['cle_minus_eisner']:+.2f}), {seconds:.0f}s = "
                   f"{row['epochs_equivalent']:.1f} epochs")
    return out


def markdown(results: Dict[str, Any]) -> str:
    lines = ["Held-out trial of `auto` (cross-fitting on the training set, MIRA k = 5): "
             "held-out UAS (all words)", "",
             "| treebank | order | non-proj. arcs | learner | folds | epochs | seed | Eisner | CLE "
             "| CLE - Eisner | cost (full-data epochs) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for tb in results["treebanks"].values():
        for t in tb["trials"]:
            lines.append(f"| {tb['treebank']} | {tb['order']} | "
                         f"{100 * tb['nonprojective_arc_share']:.2f}% | {t.get('variant', 'k5')} "
                         f"| {t['folds']} | {t['epochs']} | {t['seed']} | {t['uas_eisner']:.2f} "
                         f"| {t['uas_cle']:.2f} | {t['cle_minus_eisner']:+.2f} "
                         f"| {t['epochs_equivalent']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--treebanks", default=",".join(CORPORA))
    p.add_argument("--folds", default="2")
    p.add_argument("--epochs", default="1")
    p.add_argument("--seeds", default="0")
    p.add_argument("--variants", default="k5",
                   help="MIRA variants: kK (k best trees), kKla (loss-augmented decoding too)")
    p.add_argument("--order", type=int, default=1)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--data-dir", default=str(DATA))
    p.add_argument("--output", type=Path, default=common.RESULTS / "decoder_choice.json")
    args = p.parse_args(argv)
    args.folds = [int(x) for x in args.folds.split(",")]
    args.epochs = [int(x) for x in args.epochs.split(",")]
    args.seeds = [int(x) for x in args.seeds.split(",")]
    args.variants = args.variants.split(",")
    results: Dict[str, Any] = {"treebanks": {}}
    if args.output.exists():
        results = json.loads(args.output.read_text())
    results.setdefault("invocations", []).append(
        {"command": common.invocation("bench_decoder_choice", argv),
         "code": common.working_tree_code(), "machine": common.machine_info()})
    for name in args.treebanks.split(","):
        got = run_treebank(name, args)
        key = f"{name}/o{args.order}"
        if key in results["treebanks"]:
            got["trials"] = results["treebanks"][key]["trials"] + got["trials"]
        results["treebanks"][key] = got
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=1))
    table = markdown(results)
    print(table)
    args.output.with_suffix(".md").write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

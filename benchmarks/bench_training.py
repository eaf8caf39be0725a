"""Training speed of ``mst_parser`` with one thread against ``--threads``
threads (parallel loss-augmented k-best decoding inside a block of
``parallel_batch`` sentences, delayed updates; ``graph/training.py``), and
the dev accuracy of both (issue 14).

Both parsers train with the component defaults (first order, 5-best MIRA,
Eisner) on EWT train with gold tags, in batches of about 1,000 words as
``spacy train`` with ``configs/mst_parser.cfg`` makes them
(``minibatch_by_words``), each epoch in the same shuffled order for both.
The epochs are interleaved (one epoch of one parser, then one of the other,
the order alternating), so both see the same machine load. Per epoch: wall
seconds, CPU seconds of the process (all threads) and the load average;
then dev UAS / LAS (gold tags, one sentence per doc) of each.

    .venv/bin/python -m benchmarks.bench_training                  # ~5-8 min quiet
    .venv/bin/python -m benchmarks.bench_training --train-limit 2000 --epochs 2  # smoke
"""
import argparse
import os
import time
from pathlib import Path

import numpy

from benchmarks import common
from benchmarks.common import DATA


def score(nlp, dev_gold):
    """Dev UAS / LAS (percent) of ``nlp`` on gold-tagged copies of ``dev_gold``."""
    from spacy.training import Example

    from spacy_mstparse.pipeline_input import make_input_docs
    from spacy_mstparse.scoring import score_parse

    docs = list(nlp.pipe(make_input_docs(dev_gold, nlp.vocab, gold_tags=True)))
    scores = score_parse([Example(p, g) for p, g in zip(docs, dev_gold)])
    return 100 * scores["dep_uas"], 100 * scores["dep_las"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2, help="n_threads of the parallel run")
    p.add_argument("--parallel-batch", default="",
                   help="comma-separated parallel_batch values: one parallel run each "
                        "(default: one run with the component's default)")
    p.add_argument("--batch-words", type=int, default=1000,
                   help="words per update, as spacy train's batch_by_words")
    p.add_argument("--train-limit", type=int, default=0, help="training sentences (0 = all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path, default=common.RESULTS / "training.json")
    p.add_argument("--data-dir", type=Path, default=DATA,
                   help="where en_ewt-ud-{train,dev}.conllu are (default ../shared/data/ud)")
    args = p.parse_args(argv)

    import spacy
    from spacy.training.batchers import minibatch_by_words

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu

    result = {"command": common.invocation("bench_training", argv),
              "commit": common.git("rev-parse", "HEAD"),
              "dirty": bool(common.git("status", "--porcelain", "--untracked-files=no")),
              "machine": common.machine_info()}
    nlp = spacy.blank("en")
    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", nlp.vocab,
                                    args.train_limit)
    dev_gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", nlp.vocab, n_sents=1))
    systems = {"t1": {"n_threads": 1}}
    if not args.parallel_batch:
        systems[f"t{args.threads}"] = {"n_threads": args.threads}
    for size in (int(b) for b in args.parallel_batch.split(",") if b):
        systems[f"t{args.threads}-b{size}"] = {"n_threads": args.threads, "parallel_batch": size}
    pipes = {}
    for name, config in systems.items():
        pipe_nlp = spacy.blank("en", vocab=nlp.vocab)
        parser = pipe_nlp.add_pipe("mst_parser", config=config)
        pipe_nlp.initialize(lambda: examples)
        pipes[name] = (pipe_nlp, parser)
        systems[name] = {"config": {k: parser.cfg[k] for k in ("n_threads", "parallel_batch")},
                         "epochs": []}
    rng = numpy.random.RandomState(args.seed)
    names = list(systems)
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(examples))
        batches = list(minibatch_by_words([examples[i] for i in order], size=args.batch_words,
                                          tolerance=0.2, discard_oversize=False))
        for name in (names if epoch % 2 else names[::-1]):   # interleaved, alternating
            parser = pipes[name][1]
            losses = {}
            wall, cpu = time.perf_counter(), time.process_time()
            for batch in batches:
                parser.update(batch, losses=losses)
            parser.prediction_weights()   # averaging counts as training time
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            systems[name]["epochs"].append({"wall_s": wall, "cpu_s": cpu,
                                            "loss": losses["mst_parser"],
                                            "loadavg": list(os.getloadavg())})
            common.log(f"{name} epoch {epoch}: {wall:.1f}s wall, {cpu:.1f}s cpu, "
                       f"loss {losses['mst_parser']:.0f}, load {os.getloadavg()[0]:.1f}")
    for name, info in systems.items():
        pipes[name][1].cfg["n_threads"] = 1   # parse the same way for both
        info["dev_uas"], info["dev_las"] = score(pipes[name][0], dev_gold)
        info["total_wall_s"] = sum(e["wall_s"] for e in info["epochs"])
        info["total_cpu_s"] = sum(e["cpu_s"] for e in info["epochs"])
    base = systems["t1"]
    for info in systems.values():
        info["speedup"] = base["total_wall_s"] / info["total_wall_s"]
        info["uas_minus_t1"] = info["dev_uas"] - base["dev_uas"]
    result.update(systems=systems, epochs=args.epochs, train_sentences=len(examples),
                  batch_words=args.batch_words, dev_sentences=len(dev_gold))
    rows = ["| run | n_threads | parallel_batch | total wall s | wall s / epoch | CPU s | "
            "x t1 | dev UAS | dev LAS | UAS - t1 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, info in systems.items():
        rows.append(f"| `{name}` | {info['config']['n_threads']} | {info['config']['parallel_batch']} "
                    f"| {info['total_wall_s']:.1f} | {info['total_wall_s'] / args.epochs:.1f} "
                    f"| {info['total_cpu_s']:.1f} | {info['speedup']:.2f} | {info['dev_uas']:.2f} "
                    f"| {info['dev_las']:.2f} | {info['uas_minus_t1']:+.2f} |")
    common.finish_results(result, args.output, "\n".join(rows) + "\n", None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

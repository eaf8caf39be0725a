"""Parse speed of ``mst_parser`` (first and second order; float or 8-bit
weights; 1 or more threads), ``arcstandard_svm`` and spaCy's own parser,
measured interleaved in one process on held-out EWT, with the accuracy of
each ``mst_parser`` variant, a profile of where its parse time goes, and
its training time per epoch.

What it does, in one process:

1. trains ``mst_parser`` first order with the component defaults (5-best
   MIRA, Eisner; ``--epochs`` epochs) and second order (PA-I, Eisner) on
   EWT train with gold tags, timing every epoch;
   ``arcstandard_svm`` (defaults, ``--svm-epochs``) and spaCy's parser
   (``spacy init config -p parser -o efficiency``, tok2vec also embedding POS
   and TAG as ``bench_peers``; ``--spacy-epochs`` epochs with
   ``nlp.update``) on the first ``--peer-train-limit`` sentences: the parse
   speed of these does not depend on how long they trained;
2. parses EWT dev (gold words, sentences and tags; one sentence per Doc;
   ``pipe`` with batches of 128) ``--runs`` rounds, every system once per
   round in turn (copies of the docs, copying untimed), and reports the
   median words/s and the median over rounds of each system's time ratio
   to spaCy's parser (component alone; the tok2vec it listens to is timed
   separately) and to the first-order float baseline: ratios within a
   round are what a shared machine can still compare;
3. UAS / LAS (punctuation excluded) of each ``mst_parser`` variant, and
   whether 1 and n threads give identical parses;
4. a profile of the first-order parse: encoding, arc scoring, decoding,
   labelling and the rest of ``pipe``, float and 8-bit weights.

Systems: ``o1``/``o2`` = first/second order; ``-q8`` = 8-bit quantized
prediction weights (``quantize_weights``); ``-tN`` = ``n_threads = N``;
``-pK`` = arc pruning to the K best heads per word (the ``keep_heads`` setting);
``o1-python`` = the per-sentence Python prediction path (``analyse``)
that ``pipe`` used before the batch parser.

``--shipped``: the shipped configs instead, as ``spacy train`` makes
them, against spaCy's standard efficiency pipeline trained on all of EWT
(``benchmarks/bench_shipped_speed.py``; the other options are its own).

Usage (about 15 min with 2 epochs on an idle 2-core machine)::

    .venv/bin/python -m benchmarks.bench_speed
    .venv/bin/python -m benchmarks.bench_speed --train-limit 2000 --epochs 1 --runs 3  # smoke

Output: ``benchmarks/results/speed.json`` (with the load averages during
the run: on a shared machine absolute speeds are depressed and a
multi-thread speed-up needs idle cores) and a Markdown table on stdout.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from benchmarks import common
from benchmarks.common import DATA, PA_I


def spacy_parser(examples, epochs, vocab):
    """spaCy's parser, efficiency config, tok2vec embedding POS and TAG."""
    import spacy
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=["parser"], optimize="efficiency")
    embed = config["components"]["tok2vec"]["model"]["embed"]
    embed["attrs"] = list(embed["attrs"]) + ["POS", "TAG"]
    embed["rows"] = list(embed["rows"]) + [100, 500]
    nlp = spacy.util.load_model_from_config(config, vocab=vocab, auto_fill=True)
    optimizer = nlp.initialize(lambda: examples)
    start = time.perf_counter()
    for _ in range(epochs):
        for batch in spacy.util.minibatch(examples, 64):
            nlp.update(batch, sgd=optimizer)
    return nlp, time.perf_counter() - start


def uas_las(parsed, gold):
    from spacy.training import Example

    from spacy_mstparse.scoring import score_parse

    scores = score_parse([Example(p, g) for p, g in zip(parsed, gold)])
    return 100 * scores["dep_uas"], 100 * scores["dep_las"]


def heads_of(docs):
    return [[t.head.i for t in d] for d in docs]


def python_path_pipe(parser, docs):
    """The per-sentence Python prediction (``analyse`` for every sentence),
    float weights, no pruning."""
    parser.cfg["quantize_weights"] = False
    parser.cfg["keep_heads"] = 0
    parser.prediction_weights()
    for doc in docs:
        chunks = parser.chunk_spans(parser.sentence_spans(doc))
        parser.set_annotations([doc], [(chunks, parser.analyse_doc(doc, chunks))])
    return docs


def profile(parser, docs, quantized, repeats=3):
    """Seconds of each stage of the first-order parse of ``docs``."""
    graph = parser.graph
    parser.cfg["quantize_weights"] = quantized
    parser.cfg["keep_heads"] = 0
    parser.prediction_weights()
    bounds = [parser.sentence_bounds(d) for d in docs]

    def best(fn):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - start)
        return min(times), out

    t_encode, sents = best(lambda: [s for d, b in zip(docs, bounds)
                                    for s in parser.encoder.encode(d, b)])
    t_score, factors = best(lambda: [graph.scores(s) for s in sents])
    t_decode, trees = best(lambda: [graph.decode(f)[0] for f in factors])
    t_label, _ = best(lambda: [graph.label(s, h) for s, h in zip(sents, trees)])
    t_batch, _ = best(lambda: graph.parse_batch(sents))
    parser.cfg["quantize_weights"] = quantized
    parser.cfg["n_threads"] = 1
    t_pipe = min(common.timed_pipe(parser, docs)[1] for _ in range(repeats))
    return {"encode": t_encode, "arc_scoring": t_score, "decode": t_decode, "label": t_label,
            "parse_batch (score+decode+label in C)": t_batch, "pipe_total": t_pipe,
            "pipe_rest (sentences, encode, write back)": t_pipe - t_batch}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--shipped" in argv:  # the shipped configs against spaCy's standard pipeline
        from benchmarks import bench_shipped_speed
        return bench_shipped_speed.main([a for a in argv if a != "--shipped"])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=2, help="mst_parser training epochs")
    p.add_argument("--train-limit", type=int, default=0,
                   help="mst_parser training sentences (0 = all of EWT train)")
    p.add_argument("--peer-train-limit", type=int, default=2000,
                   help="training sentences of arcstandard_svm and spaCy's parser")
    p.add_argument("--spacy-epochs", type=int, default=1)
    p.add_argument("--svm-epochs", type=int, default=1)
    p.add_argument("--runs", type=int, default=5, help="interleaved timing rounds")
    p.add_argument("--threads", type=int, default=2, help="n_threads of the -tN systems")
    p.add_argument("--no-o2", action="store_true", help="skip the second-order parser")
    p.add_argument("--o2-epochs", type=int, default=1, help="second-order training epochs")
    p.add_argument("--prune", default="6,10",
                   help="arc pruning (the keep_heads setting) values to time: -pK systems")
    p.add_argument("--output", type=Path, default=common.RESULTS / "speed.json")
    p.add_argument("--data-dir", type=Path, default=DATA,
                   help="where en_ewt-ud-{train,dev}.conllu are (default ../shared/data/ud)")
    args = p.parse_args(argv)
    args.prune = [int(k) for k in args.prune.split(",") if k]

    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    result = {"command": common.invocation("bench_speed", argv),
              "commit": common.git("rev-parse", "HEAD"),
              "dirty": bool(common.git("status", "--porcelain", "--untracked-files=no")),
              "machine": common.machine_info(), "loadavg": {"start": list(os.getloadavg())}}
    nlp = spacy.blank("en")
    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", nlp.vocab,
                                    args.train_limit)
    peer_examples = examples[:args.peer_train_limit] if args.peer_train_limit else examples
    dev_gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", nlp.vocab, n_sents=1))
    dev = make_input_docs(dev_gold, nlp.vocab, gold_tags=True)
    n_words = result["dev_words"] = sum(len(d) for d in dev)

    # -- training ---------------------------------------------------------------
    parsers, epoch_seconds = {}, {}
    orders = [("o1", {}), ("o2", {"order": 2, "learner": PA_I})]
    for name, config in orders[:1] if args.no_o2 else orders:
        pipe_nlp = spacy.blank("en", vocab=nlp.vocab)
        parser = pipe_nlp.add_pipe("mst_parser", config=config)
        pipe_nlp.initialize(lambda: examples)
        times = epoch_seconds[name] = []

        def on_epoch(epoch, losses, seconds, times=times):
            times.append(seconds - sum(times))
            common.log(f"{name}: epoch {epoch} in {times[-1]:.0f}s")

        epochs = args.epochs if name == "o1" else args.o2_epochs
        common.train_epochs(parser, examples, epochs, 16, common.numpy_orders(0), on_epoch)
        parsers[name] = parser
    result["train_seconds_per_epoch"] = epoch_seconds
    result["train_config"] = {"o1": "component defaults (5-best MIRA, Eisner)",
                              "o2": "order 2, PA-I C=0.05, Eisner", "epochs": args.epochs,
                              "o2_epochs": args.o2_epochs,
                              "sentences": len(examples), "batch_size": 16}
    svm_nlp = spacy.blank("en", vocab=nlp.vocab)
    svm = svm_nlp.add_pipe("arcstandard_svm")
    svm_nlp.initialize(lambda: peer_examples)
    for _ in range(args.svm_epochs):
        for batch in spacy.util.minibatch(peer_examples, 16):
            svm.update(batch)
    common.log("arcstandard_svm trained")
    sp_nlp, sp_seconds = spacy_parser(peer_examples, args.spacy_epochs, nlp.vocab)
    common.log(f"spaCy parser trained in {sp_seconds:.0f}s")
    sp_tok2vec, sp_parser = sp_nlp.get_pipe("tok2vec"), sp_nlp.get_pipe("parser")

    # -- the systems -------------------------------------------------------------------
    def mst(name, quantized, threads, keep=0):
        parser = parsers[name]

        def run(docs):
            parser.cfg["quantize_weights"] = quantized
            parser.cfg["n_threads"] = threads
            parser.cfg["keep_heads"] = keep
            return list(parser.pipe(docs, batch_size=128))
        return run

    systems = {"spacy-parser": lambda docs: list(sp_parser.pipe(docs, batch_size=128)),
               "spacy-tok2vec": lambda docs: list(sp_tok2vec.pipe(docs, batch_size=128)),
               "arcstandard_svm": lambda docs: list(svm.pipe(docs, batch_size=128)),
               "o1-python": lambda docs: python_path_pipe(parsers["o1"], docs)}
    for name in parsers:
        for quantized in (False, True):
            for threads in (1, args.threads):
                systems[f"{name}{'-q8' if quantized else ''}-t{threads}"] = \
                    mst(name, quantized, threads)
        for keep in args.prune:
            systems[f"{name}-q8-t1-p{keep}"] = mst(name, True, 1, keep)
    # spaCy's parser reads the tensor its tok2vec wrote: time tok2vec, then
    # the parser on the tok2vec's output, as separate entries
    def timed(name, docs):
        copies = common.copy_docs(docs)
        if name == "spacy-parser":
            copies = list(sp_tok2vec.pipe(copies, batch_size=128))
        start = time.perf_counter()
        out = systems[name](copies)
        return out, time.perf_counter() - start

    parsed = {}
    for name in systems:  # warm-up (quantizes the weights once), accuracy
        parsed[name] = timed(name, dev)[0]
    accuracy = {name: uas_las(parsed[name], dev_gold) for name in systems
                if name.startswith(("o1", "o2", "arcstandard", "spacy-parser"))}
    result["uas_las"] = accuracy
    result["identical_parses_1_vs_n_threads"] = {
        f"{n}{q}": heads_of(parsed[f"{n}{q}-t1"]) == heads_of(parsed[f"{n}{q}-t{args.threads}"])
        for n in parsers for q in ("", "-q8")}
    result["identical_parses_batch_vs_python_path"] = \
        heads_of(parsed["o1-t1"]) == heads_of(parsed["o1-python"])
    del parsed
    common.log("accuracy: " + ", ".join(f"{n} {u:.2f}" for n, (u, _) in accuracy.items()))

    times = {name: [] for name in systems}
    loads = []
    for r in range(args.runs):
        for name in systems:
            times[name].append(timed(name, dev)[1])
        loads.append(list(os.getloadavg()))
        common.log(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in systems))
    result["loadavg"]["rounds"] = loads
    result["seconds"] = times
    wps = result["words_per_second_median"] = {
        n: n_words / statistics.median(t) for n, t in times.items()}

    def ratio(num, den):
        return statistics.median(times[den][i] / times[num][i] for i in range(args.runs))

    result["speed_vs_spacy_parser_median_of_ratios"] = {
        n: ratio(n, "spacy-parser") for n in systems}
    result["speed_vs_o1-t1_median_of_ratios"] = {n: ratio(n, "o1-t1") for n in systems}

    # -- profile ----------------------------------------------------------------------------
    result["profile_o1_seconds"] = {
        "float": profile(parsers["o1"], dev, False), "q8": profile(parsers["o1"], dev, True)}
    result["loadavg"]["end"] = list(os.getloadavg())
    args.output.parent.mkdir(parents=True, exist_ok=True)
    common.save_results(result, args.output)

    vs_sp = result["speed_vs_spacy_parser_median_of_ratios"]
    vs_o1 = result["speed_vs_o1-t1_median_of_ratios"]
    print(f"dev words: {n_words}; load average at start {result['loadavg']['start']}, "
          f"end {result['loadavg']['end']}")
    print(f"| system | words/s (median of {args.runs}) | x spaCy parser | x o1-t1 | UAS | LAS |")
    print("|---|---:|---:|---:|---:|---:|")
    for n in systems:
        u, l = accuracy.get(n, (None, None))
        print(f"| {n} | {wps[n]:,.0f} | {vs_sp[n]:.2f} | {vs_o1[n]:.2f} | "
              f"{common.num(u, '.2f')} | {common.num(l, '.2f')} |")
    print("training seconds per epoch:", {k: [round(x) for x in v] for k, v in epoch_seconds.items()})
    for kind, stages in result["profile_o1_seconds"].items():
        print(f"profile o1 {kind}: " + ", ".join(f"{k} {v:.2f}s" for k, v in stages.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

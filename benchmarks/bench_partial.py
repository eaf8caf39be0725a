"""Training ``mst_parser`` from partial annotation: the learning curve on EWT.

Trains a default ``mst_parser`` (first order unless ``--order 2``; Eisner,
MIRA k=5) in process with gold tags on the first ``--train-sents`` EWT
train sentences, ``--epochs`` epochs, under three annotations of the same
sentences:

- ``full``: every gold head;
- ``arcs-X%``: each word's head (and label) kept with probability X
  (``--shares``, default 0.5; seed 0), the others removed: the reference
  keeps spaCy's missing annotation (head None, dep None), which the parser
  trains on as unknown heads (the best completion of the known arcs under
  the current weights, ``graph.training``);
- ``sentences-X%``: a random X of the sentences (seed 0), complete.

``arcs-X%`` and ``sentences-X%`` hold about the same number of annotated
arcs. Dev UAS/LAS (EWT dev, gold words, sentences and tags, punctuation
excluded, as ``attachment_scores``) after every epoch. Writes
benchmarks/results/partial_annotation.json (``--out``).

    python -m benchmarks.bench_partial [--train-sents 4000 --epochs 3 --order 1 --shares 0.5]
"""
import argparse
from pathlib import Path

import numpy

from benchmarks.common import (
    RESULTS,
    add_treebank_options,
    copy_docs,
    gold_examples,
    invocation,
    log,
    machine_info,
    numpy_orders,
    resolve_treebanks,
    save_results,
    train_epochs,
)


def hide_heads(examples, share: float, seed: int = 0):
    """The examples with each reference word's head and label removed with
    probability ``share``; also the number of arcs kept."""
    from spacy.tokens import Doc
    from spacy.training import Example

    rs = numpy.random.RandomState(seed)
    out, kept = [], 0
    for eg in examples:
        ref = eg.reference
        keep = rs.rand(len(ref)) >= share
        kept += int(keep.sum())
        partial = Doc(ref.vocab, words=[t.text for t in ref],
                      spaces=[bool(t.whitespace_) for t in ref],
                      heads=[t.head.i if k else None for t, k in zip(ref, keep)],
                      deps=[t.dep_ if k else None for t, k in zip(ref, keep)],
                      pos=[t.pos_ for t in ref], tags=[t.tag_ for t in ref],
                      sent_starts=[bool(t.is_sent_start) for t in ref])
        out.append(Example(eg.predicted, partial))
    return out, kept


def some_of_the_sentences(examples, share: float, seed: int = 0):
    """A random ``share`` of the examples (complete), and their arcs."""
    rs = numpy.random.RandomState(seed)
    chosen = sorted(rs.permutation(len(examples))[: int(round(share * len(examples)))])
    subset = [examples[i] for i in chosen]
    return subset, sum(len(eg.reference) for eg in subset)


def dev_scores(nlp, gold, docs):
    from spacy_mstparse.scoring import attachment_scores

    parsed = list(nlp.get_pipe("mst_parser").pipe(copy_docs(docs), batch_size=128))
    gh, gl, ph, pl = [], [], [], []
    for g, d in zip(gold, parsed):
        gh += [t.head.i for t in g]
        gl += [t.dep_ for t in g]
        ph += [t.head.i for t in d]
        pl += [t.dep_ for t in d]
    return attachment_scores(gh, gl, ph, pl)


def run(name, examples, order, epochs, gold, docs):
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401  (factory)

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={"order": order})
    nlp.initialize(lambda: examples)
    curve = []

    def on_epoch(epoch, losses, seconds):
        scores = dev_scores(nlp, gold, docs)
        curve.append({"epoch": epoch, "train_seconds": seconds, "uas": scores["uas"],
                      "las": scores["las"], "loss": losses.get("mst_parser", 0.0)})
        log(f"{name}: epoch {epoch}, {seconds:.0f} s, dev UAS {scores['uas']:.2f} "
            f"LAS {scores['las']:.2f}")
        return False

    train_epochs(parser, examples, epochs, 16, numpy_orders(0), on_epoch)
    return {"curve": curve, "unusable_sentences": parser.trainer.unusable}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_treebank_options(parser)
    parser.add_argument("--train-sents", type=int, default=4000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--order", type=int, default=1, choices=(1, 2))
    parser.add_argument("--shares", default="0.5",
                        help="comma-separated shares of the arcs kept (arcs-X%%) and of the "
                             "sentences kept (sentences-X%%)")
    parser.add_argument("--out", type=Path, default=RESULTS / "partial_annotation.json")
    args = parser.parse_args(argv)
    resolve_treebanks(parser, args)
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    vocab = spacy.blank("en").vocab
    examples = gold_examples(args.train, vocab, limit=args.train_sents)
    gold = list(read_conllu(args.dev, vocab))
    docs = make_input_docs(gold, vocab, gold_tags=True)
    n_arcs = sum(len(eg.reference) for eg in examples)
    shares = [float(x) for x in args.shares.split(",")]
    results = {"command": invocation("bench_partial", argv), "machine": machine_info(),
               "setup": {"train_sentences": len(examples), "epochs": args.epochs,
                         "order": args.order, "shares_kept": shares,
                         "config": "mst_parser defaults (eisner, MIRA k=5), gold tags"},
               "runs": {}}
    conditions = [("full", examples, n_arcs)]
    for share in shares:
        conditions.append((f"arcs-{round(100 * share)}%", *hide_heads(examples, 1.0 - share)))
        conditions.append((f"sentences-{round(100 * share)}%",
                           *some_of_the_sentences(examples, share)))
    for name, data, kept in conditions:
        out = run(name, data, args.order, args.epochs, gold, docs)
        out.update(sentences=len(data), annotated_arcs=kept)
        results["runs"][name] = out
        save_results(results, args.out)
    for name, out in results["runs"].items():
        last = out["curve"][-1]
        per_epoch = ", ".join("%.2f" % c["uas"] for c in out["curve"])
        print(f"{name:>14}: {out['sentences']} sentences, {out['annotated_arcs']} arcs, "
              f"dev UAS {last['uas']:.2f} LAS {last['las']:.2f} (by epoch: {per_epoch})")


if __name__ == "__main__":
    main()

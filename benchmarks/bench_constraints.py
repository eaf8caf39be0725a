"""Fixed heads under the constraint policies: EWT dev with 20% of every
sentence's gold heads fixed.

Trains a first-order ``mst_parser`` with the component settings of
configs/mst_parser.cfg (Eisner, MIRA k=5, GraphFeatures.v2) in process with
gold tags for ``--epochs`` epochs on EWT train (or loads ``--model``, a
directory this script saved before: ``--save``). Then, in every dev sentence
(projective or not), ``--share`` of the words (rounded, at random, seed
``--seed``) get ``token._.fixed_head`` = their gold head, and dev is parsed
with ``nlp.pipe``, once per policy (``--policies``; the default policy is
``nonprojective``). Reported per policy: whether an exception was raised
(``strict`` raises on the first sentence whose fixed arcs cross), the share of
fixed heads the parse kept, ConstraintWarnings, how many sentences were
decoded over all trees (Chu-Liu-Edmonds) because no projective tree held
their fixed arcs, and the UAS of the unfixed words (punctuation excluded,
as ``scoring.attachment_scores``; and with punctuation) against the
unconstrained parse's UAS of the same words. Also an alternative fallback,
measured only (``reattached``): ``drop``'s trees with the fixed heads they
left out attached afterwards, where no cycle arises. Writes
benchmarks/results/constraints.json (``--out``).

    python -m benchmarks.bench_constraints [--epochs 2 --share 0.2 --seed 0]
"""
import argparse
import time
import warnings
from pathlib import Path

import numpy

from benchmarks.common import (
    REPO_ROOT,
    RESULTS,
    add_treebank_options,
    copy_docs,
    git,
    gold_examples,
    invocation,
    log,
    machine_info,
    numpy_orders,
    resolve_treebanks,
    save_results,
    train_epochs,
)

CONFIG = REPO_ROOT / "configs" / "mst_parser.cfg"


def component_settings() -> dict:
    """The mst_parser block of configs/mst_parser.cfg (without ``factory``)."""
    from spacy.util import load_config

    block = dict(load_config(CONFIG, interpolate=False)["components"]["mst_parser"])
    block.pop("factory")
    return block


def train(args, vocab_nlp):
    from spacy_mstparse.components import mst_parser  # noqa: F401  (factory)

    nlp = vocab_nlp
    parser = nlp.add_pipe("mst_parser", config=component_settings())
    examples = gold_examples(args.train, nlp.vocab, limit=args.train_sents)
    nlp.initialize(lambda: examples)
    seconds = train_epochs(parser, examples, args.epochs, 16, numpy_orders(0),
                           lambda e, losses, s: log(f"epoch {e}: {s:.0f} s") and False)
    return nlp, {"train_sentences": len(examples), "epochs": args.epochs,
                 "train_seconds": seconds}


def fix_heads(gold, docs, share: float, seed: int):
    """Copies of ``docs`` with ``share`` of each sentence's words (rounded)
    fixed to their gold heads, and the fixed token indices per doc."""
    rs = numpy.random.RandomState(seed)
    out, fixed = [], []
    for g, doc in zip(gold, copy_docs(docs)):
        chosen = sorted(rs.choice(len(doc), size=int(round(share * len(doc))), replace=False))
        for i in chosen:
            doc[int(i)]._.fixed_head = doc[g[int(i)].head.i]
        out.append(doc)
        fixed.append(set(int(i) for i in chosen))
    return out, fixed


def needs_all_trees(gold, fixed) -> list:
    """The sentences whose fixed gold arcs no projective tree holds (they cross)."""
    from spacy_mstparse.graph.constraints import Constraints

    out = []
    for k, (g, chosen) in enumerate(zip(gold, fixed)):
        heads = {i + 1: (0 if g[i].head.i == i else g[i].head.i + 1) for i in chosen}
        if heads and not Constraints(len(g), heads).feasible(None, True):
            out.append(k)
    return out


def unfixed_scores(gold, parsed, fixed, only=None) -> dict:
    """Heads right among the unfixed words (of the sentences ``only``, None:
    all), punctuation (label punct) excluded and not; ``parsed``: per
    sentence the token index of each word's head."""
    from spacy_mstparse.scoring import PUNCT_LABELS

    n = right = n_all = right_all = 0
    for k, (g, d, chosen) in enumerate(zip(gold, parsed, fixed)):
        if only is not None and k not in only:
            continue
        for i, t in enumerate(g):
            if i in chosen:
                continue
            ok = d[i] == t.head.i
            n_all += 1
            right_all += ok
            if t.dep_.lower() not in PUNCT_LABELS:
                n += 1
                right += ok
    return {"words": n, "uas": 100.0 * right / n, "words_all": n_all,
            "uas_all": 100.0 * right_all / n_all}


def reattached(gold, parsed, fixed, fallback) -> tuple:
    """An alternative to the Chu-Liu-Edmonds fallback, measured here only:
    the fixed heads the ``drop`` parse ``parsed`` left out attached to its
    trees afterwards (the word's head set to its fixed head, its subtree
    moving with it, no other word changing), one after the other, unless one
    would close a cycle; then the sentence's ``fallback`` parse (the
    default's). Returns (heads per sentence, counts)."""
    missed = attached = fell_back = 0
    out = []
    for g, d, alt, chosen in zip(gold, parsed, fallback, fixed):
        heads, ok = list(d), True
        for i in sorted(chosen):
            h = g[i].head.i
            if heads[i] == h:
                continue
            missed += 1
            x, seen = h, set()
            while heads[x] != x and x != i and x not in seen:
                seen.add(x)
                x = heads[x]
            if x != i and h != i:   # i is not above h: no cycle (a root fix is never dropped
                heads[i] = h        # from gold heads: gold has one root)
                attached += 1
            else:
                ok = False
        out.append(heads if ok else list(alt))
        fell_back += not ok
    return out, {"left_out": missed, "attachable": attached, "sentences_fallback": fell_back}


def parse_with(nlp, policy: str, docs):
    """``nlp.pipe`` over ``docs`` (fresh ones: parsing annotates them) under
    ``policy``: (docs or None, the exception's text, warnings, seconds)."""
    from spacy_mstparse.graph.constraints import ConstraintWarning

    parser = nlp.get_pipe("mst_parser")
    parser.constraint_policy = policy
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConstraintWarning)
        try:
            parsed = list(nlp.pipe(docs, batch_size=128))
            error = None
        except Exception as err:   # what strict does to a batch: recorded, not raised
            parsed, error = None, f"{type(err).__name__}: {err}"
    seconds = time.perf_counter() - start
    ours = [str(w.message) for w in caught if issubclass(w.category, ConstraintWarning)]
    return parsed, error, ours, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_treebank_options(parser)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-sents", type=int, default=0, help="0: all")
    parser.add_argument("--share", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policies", default="nonprojective,drop,strict")
    parser.add_argument("--model", type=Path, default=None,
                        help="a pipeline saved by --save (no training)")
    parser.add_argument("--save", type=Path, default=None, help="save the trained pipeline")
    parser.add_argument("--out", type=Path, default=RESULTS / "constraints.json")
    args = parser.parse_args(argv)
    resolve_treebanks(parser, args)
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    results = {"command": invocation("bench_constraints", argv), "commit": git("rev-parse", "HEAD"),
               "machine": machine_info()}
    if args.model:
        nlp = spacy.load(args.model)
        results["model"] = {"loaded": str(args.model.name)}
    else:
        nlp, results["model"] = train(args, spacy.blank("en"))
        if args.save:
            nlp.to_disk(args.save)
    results["model"]["settings"] = "configs/mst_parser.cfg's mst_parser block, gold tags"
    gold = list(read_conllu(args.dev, nlp.vocab))
    docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
    fixed = fix_heads(gold, docs, args.share, args.seed)[1]
    n_fixed = sum(len(f) for f in fixed)
    crossing = set(needs_all_trees(gold, fixed))
    results["setup"] = {"dev_sentences": len(gold), "share_fixed": args.share, "seed": args.seed,
                        "fixed_heads": n_fixed,
                        "sentences_with_crossing_fixed_arcs": len(crossing),
                        "decoder": nlp.get_pipe("mst_parser").decoder}
    free, _, _, free_seconds = parse_with(nlp, "strict", copy_docs(docs))
    free = [[t.head.i for t in d] for d in free]
    results["unconstrained"] = {**unfixed_scores(gold, free, fixed), "seconds": free_seconds,
                                "crossing": unfixed_scores(gold, free, fixed, crossing)}
    log(f"unconstrained: UAS of the unfixed words {results['unconstrained']['uas']:.2f}")
    results["policies"], parses = {}, {}
    for policy in args.policies.split(","):
        constrained = fix_heads(gold, docs, args.share, args.seed)[0]
        parsed, error, caught, seconds = parse_with(nlp, policy, constrained)
        row = {"exception": error, "warnings": len(caught), "seconds": seconds}
        if parsed is not None:
            parsed = [[t.head.i for t in d] for d in parsed]
            parses[policy] = parsed
            kept = sum(parsed[k][i] == gold[k][i].head.i
                       for k, chosen in enumerate(fixed) for i in chosen)
            row.update(fixed_kept=kept, fixed_kept_share=100.0 * kept / n_fixed,
                       **unfixed_scores(gold, parsed, fixed))
            row["uas_change"] = row["uas"] - results["unconstrained"]["uas"]
            row["uas_all_change"] = row["uas_all"] - results["unconstrained"]["uas_all"]
            row["crossing"] = unfixed_scores(gold, parsed, fixed, crossing)
        results["policies"][policy] = row
        log(f"{policy}: {row}")
        save_results(results, args.out)
    if "drop" in parses and "nonprojective" in parses:
        heads, counts = reattached(gold, parses["drop"], fixed, parses["nonprojective"])
        kept = sum(heads[k][i] == gold[k][i].head.i for k, chosen in enumerate(fixed)
                   for i in chosen)
        results["alternative_reattach"] = {
            **counts, "fixed_kept_share": 100.0 * kept / n_fixed,
            **unfixed_scores(gold, heads, fixed),
            "crossing": unfixed_scores(gold, heads, fixed, crossing)}
        log(f"drop, then the left-out fixed heads attached: {results['alternative_reattach']}")
    import os

    results["machine"]["loadavg_at_end"] = list(os.getloadavg())
    save_results(results, args.out)
    base = results["unconstrained"]
    print(f"{results['setup']['fixed_heads']} fixed heads in {len(gold)} dev sentences "
          f"({len(crossing)} with crossing fixed arcs); unconstrained UAS of the unfixed "
          f"words {base['uas']:.2f} ({base['words']} words; in the sentences with crossing "
          f"fixed arcs {base['crossing']['uas']:.2f}, {base['crossing']['words']} words)")
    for policy, row in results["policies"].items():
        if row["exception"]:
            print(f"{policy:>13}: raised {row['exception'][:100]}")
        else:
            print(f"{policy:>13}: fixed heads kept {row['fixed_kept_share']:.2f}%, UAS of the "
                  f"unfixed words {row['uas']:.2f} ({row['uas_change']:+.2f}; "
                  f"{row['crossing']['uas']:.2f} with crossing fixed arcs), "
                  f"{row['warnings']} warnings")
    alt = results.get("alternative_reattach")
    if alt:
        print(f"drop + left-out fixed heads attached ({alt['attachable']} of {alt['left_out']}; "
              f"else the default's tree: {alt['sentences_fallback']} sentences): fixed heads "
              f"kept {alt['fixed_kept_share']:.2f}%, UAS of the unfixed words {alt['uas']:.2f} "
              f"({alt['crossing']['uas']:.2f} with crossing fixed arcs)")


if __name__ == "__main__":
    main()

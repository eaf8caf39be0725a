"""One system, one process: train UDPipe 1, or parse a treebank's dev file
with a spaCy pipeline or a UDPipe 1 model while timing the parser alone.

Helper of ``benchmarks/bench_peers.py``, which starts it as a subprocess,
``python -m benchmarks.peer_runner ...`` from the repository root (so that
each run has its own peak RSS, one process, no warm caches from another
system). Subcommands:

``udpipe-train TRAIN.conllu MODEL [--options OPTS]``
    Trains UDPipe 1's parser (Parsito, Straka et al. 2015/2016) on the gold
    words and tags of TRAIN with ``ufal.udpipe.Trainer.train("morphodita_parsito",
    ..., tokenizer="none", tagger="none", parser=OPTS)``: no tokenizer, no
    tagger, so the model parses whatever words and tags it is given.

``parse KIND MODEL GOLD.conllu OUT.conllu [--gold-tags] [--timing JSON]``
    KIND ``spacy``: loads the pipeline with ``spacy.load``, builds input Docs
    on the gold words and sentence starts (``spacy_mstparse.evaluation.make_input_docs``;
    with ``--gold-tags`` also the gold UPOS/XPOS/FEATS/lemmas), runs every
    component in order over all docs (``pipe``, batch size 64) and times each
    component separately. "Parser" seconds are those of the components that
    assign ``token.dep``; "parser + tok2vec" adds the ``tok2vec`` component(s)
    that spaCy's parser listens to (mst_parser does not need them).
    KIND ``udpipe``: loads the UDPipe model, reads GOLD with HEAD, DEPREL and
    DEPS blanked (``_``) and times ``model.parse(sentence)`` over all
    sentences (the words and the file's UPOS/XPOS/FEATS/lemmas are its input:
    gold tags, the model has no tagger).
    Both write the parsed file as CoNLL-U to OUT and the timings as JSON
    (``--timing``, else stdout). Nothing else is scored here: every system's
    CoNLL-U output is scored by the same code in ``bench_peers.py``.

Not imported by the package; ``ufal.udpipe`` is needed only for the udpipe
subcommands (``benchmarks/requirements-peers.txt``).
"""
import argparse
import json
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

PARSER_BATCH_SIZE = 64


def _udpipe():
    try:
        from ufal import udpipe
    except ImportError:
        sys.exit("ufal.udpipe is not installed: pip install -r benchmarks/requirements-peers.txt")
    return udpipe


def read_udpipe_sentences(udpipe, text: str, path: str):
    """Sentences of a CoNLL-U text, read by UDPipe's own reader."""
    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(text)
    sentences = udpipe.Sentences()
    error = udpipe.ProcessingError()
    sentence = udpipe.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.append(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        sys.exit(f"{path}: UDPipe cannot read it: {error.message}")
    return sentences


_WORD_LINE = re.compile(r"^\d+\t")


def blank_trees(text: str) -> str:
    """The CoNLL-U text with HEAD, DEPREL and DEPS of every word set to
    ``_`` (multiword-token ranges and empty nodes are left alone), so a
    parser cannot see the gold trees."""
    out = []
    for line in text.splitlines():
        if _WORD_LINE.match(line):
            cols = line.split("\t")
            if len(cols) == 10:
                cols[6] = cols[7] = cols[8] = "_"
                line = "\t".join(cols)
        out.append(line)
    return "\n".join(out) + "\n"


def _note_cap(signum, frame) -> None:
    print("udpipe-train: the time cap was reached; UDPipe cannot stop early and "
          "leave a model, so training goes on to the end", file=sys.stderr, flush=True)


def udpipe_train(args: argparse.Namespace) -> None:
    """Train; SIGTERM (bench_peers' time cap) is noted, not obeyed: Parsito
    has no way to stop early and still leave a model, so a stopped run would
    leave no UDPipe figures at all. The caller reports the real time."""
    udpipe = _udpipe()
    signal.signal(signal.SIGTERM, _note_cap)
    train = read_udpipe_sentences(udpipe, Path(args.train).read_text(encoding="utf-8"), args.train)
    error = udpipe.ProcessingError()
    start = time.perf_counter()
    model = udpipe.Trainer.train(
        "morphodita_parsito", train, udpipe.Sentences(), "none", "none", args.options, error
    )
    seconds = time.perf_counter() - start
    if error.occurred() or not model:
        sys.exit(f"UDPipe training failed: {error.message}")
    data = model if isinstance(model, bytes) else model.encode("utf-8", "surrogateescape")
    Path(args.model).parent.mkdir(parents=True, exist_ok=True)
    Path(args.model).write_bytes(data)
    print(json.dumps({"sentences": len(train), "train_seconds": seconds,
                      "options": args.options, "model_bytes": len(data)}))


def parse_udpipe(args: argparse.Namespace) -> Dict[str, Any]:
    udpipe = _udpipe()
    model = udpipe.Model.load(str(args.model))
    if model is None:
        sys.exit(f"{args.model}: not a UDPipe model")
    text = blank_trees(Path(args.gold).read_text(encoding="utf-8"))
    sentences = read_udpipe_sentences(udpipe, text, args.gold)
    n_words = sum(len(s.words) - 1 for s in sentences)  # words[0] is the root
    # Index the SWIG vector: iterating over it yields copies, which parse()
    # would annotate and drop.
    vector = sentences  # keeps the elements alive
    sentences = [vector[i] for i in range(len(vector))]
    error = udpipe.ProcessingError()
    start = time.perf_counter()
    for sentence in sentences:
        if not model.parse(sentence, model.DEFAULT, error):
            sys.exit(f"UDPipe parse failed: {error.message}")
    seconds = time.perf_counter() - start
    writer = udpipe.OutputFormat.newConlluOutputFormat()
    Path(args.out).write_text("".join(writer.writeSentence(s) for s in sentences), encoding="utf-8")
    return {"tokens": n_words, "sentences": len(sentences),
            "component_seconds": {"parser": seconds}, "parser_components": ["parser"],
            "parser_seconds": seconds, "parser_with_tok2vec_seconds": seconds,
            "pipeline_seconds": seconds}


def parse_spacy(args: argparse.Namespace) -> Dict[str, Any]:
    import spacy

    from spacy_mstparse.corpus.conll import read_conll, write_conllu
    from spacy_mstparse.pipeline_input import make_input_docs, parser_components

    nlp = spacy.load(args.model)
    parsers = parser_components(nlp, args.model)
    gold = list(read_conll(args.gold, nlp.vocab, format="conllu", n_sents=1))
    docs: List[Any] = make_input_docs(gold, nlp.vocab, gold_tags=args.gold_tags)
    n_words = sum(len(doc) for doc in docs)
    seconds: Dict[str, float] = {}
    for name, proc in nlp.pipeline:
        start = time.perf_counter()
        if hasattr(proc, "pipe"):
            docs = list(proc.pipe(docs, batch_size=PARSER_BATCH_SIZE))
        else:
            docs = [proc(doc) for doc in docs]
        seconds[name] = time.perf_counter() - start
    listened = set()
    for name in parsers:
        # spaCy's parser reads doc.tensor written by an upstream tok2vec
        # through a listener; mst_parser has no model and listens to nothing.
        model = getattr(nlp.get_pipe(name), "model", None)
        if model is None or model is True:
            continue
        for node in model.walk():
            if node.name == "tok2vec-listener":
                upstream = node.attrs.get("upstream_name")
                listened.update(n for n in nlp.pipe_names
                                if nlp.get_pipe_meta(n).factory == "tok2vec"
                                and (upstream in ("*", n, None)))
    write_conllu(docs, args.out, enhanced_deps=False)
    parser_seconds = sum(seconds[name] for name in parsers)
    return {"tokens": n_words, "sentences": len(gold), "component_seconds": seconds,
            "parser_components": parsers, "listened_tok2vec": sorted(listened),
            "parser_seconds": parser_seconds,
            "parser_with_tok2vec_seconds": parser_seconds + sum(seconds[n] for n in listened),
            "pipeline_seconds": sum(seconds.values())}


def parse(args: argparse.Namespace) -> None:
    result = parse_udpipe(args) if args.kind == "udpipe" else parse_spacy(args)
    result["gold_tags"] = bool(args.gold_tags or args.kind == "udpipe")
    for key in ("parser", "parser_with_tok2vec", "pipeline"):
        secs = result[f"{key}_seconds"]
        result[f"{key}_tokens_per_second"] = result["tokens"] / secs if secs > 0 else None
    text = json.dumps(result, indent=2)
    if args.timing:
        Path(args.timing).write_text(text + "\n")
    else:
        print(text)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("udpipe-train", help="train UDPipe 1's parser (no tokenizer, no tagger)")
    tr.add_argument("train")
    tr.add_argument("model")
    tr.add_argument("--options", default="", help="UDPipe parser options, 'key=value;...'")
    tr.set_defaults(func=udpipe_train)
    pa = sub.add_parser("parse", help="parse GOLD's words, write CoNLL-U, time the parser")
    pa.add_argument("kind", choices=("spacy", "udpipe"))
    pa.add_argument("model")
    pa.add_argument("gold")
    pa.add_argument("out")
    pa.add_argument("--gold-tags", action="store_true",
                    help="spacy: give the pipeline the gold UPOS/XPOS/FEATS/lemmas "
                         "(udpipe always reads them from the file)")
    pa.add_argument("--timing", default=None, help="write the timings here (JSON)")
    pa.set_defaults(func=parse)
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()

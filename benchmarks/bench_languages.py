"""mst_parser on every UD treebank at hand, next to UDPipe 1.2's published figures.

For every ``*-ud-train.conllu`` in ``--data-dir`` (default ``../shared/data/ud``
relative to the repository root; the language code is the file name's
prefix: ``hu_szeged`` -> ``hu``, and ``xx``, spaCy's multi-language class,
where spaCy has no usable class for that code), the script converts train
and dev with ``python -m spacy_mstparse convert`` (one sentence per Doc for
the gold-tag systems, as the project's gold-tag workflows; 10 for the
raw-text pipeline, whose senter learns sentence ends inside Docs), and for
each system:

``mst-o1``          ``configs/mst_parser.cfg`` (first order), gold tags in;
``mst-o2``          ``configs/mst_parser_o2.cfg`` (second order), gold tags in;
``mst-tagged``      ``configs/mst_parser_tagged.cfg``: gold words and sentences,
                    its own tags, morphology and lemmas;
``mst-tagged-raw``  the ``mst-tagged`` model on the raw text (the test file's
                    ``# text`` lines, one line per document or paragraph):
                    spaCy's tokenizer for the language and the pipeline's
                    senter; multiword tokens are not split.

trains with ``python -m spacy train CONFIG --nlp.lang LANG`` (the shipped
configs as they are; the only other override is ``--training.max_epochs``
under ``--epochs``), caches the model in ``--work-dir`` (reused when trained
by the same command), parses the test file (and dev) with ``model-last``
(no choice on dev: spacy train evaluates every ``eval_frequency`` steps, and
on a small treebank the gold-tag configs' 1,000-word batches make fewer
steps than that) and ``python -m spacy_mstparse parse``
(``--gold-tags`` for the gold-tag systems) and scores the parse with the
CoNLL 2018 scorer ``eval.py`` (``benchmarks/ud_eval.py``: every word,
punctuation included). A treebank without a test file (EWT here) is scored
on dev only and gets no difference to UDPipe's test figures; one without a
dev file is scored on test only, and ``spacy train``'s curve (which needs a
dev corpus) scores the training file instead (``curve_split``). A treebank
that fails (conversion, a system) is recorded with its error and the run
goes on. Also recorded:
spaCy's last dev score of the training log (the project's scorer:
punctuation left out), training time (s, and s per 1,000 training words),
the parse's words per second (the whole ``parse`` command, loading
included), and each treebank's share of words inside multiword tokens.

UDPipe 1.2's figures (``benchmarks/udpipe_published.json``, with the
source: all 94 treebanks of its UD 2.5 models, keyed by file-name prefix)
are for the same test sets and modes: gold tokenization + gold
morphology (the gold-tag systems), gold tokenization (``mst-tagged``), raw
text (``mst-tagged-raw``).

    python -m benchmarks.bench_languages                         # every treebank, every system
    python -m benchmarks.bench_languages --quick                 # 1 epoch, the smallest treebank
    python -m benchmarks.bench_languages --treebanks tr_imst --systems mst-tagged,mst-tagged-raw

Results: ``benchmarks/results/languages.json`` (``--output``) and the
Markdown table (``--markdown``, default: the output's name with ``.md``).
"""
import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from benchmarks import common
from benchmarks.conllu_text import raw_text_lines, treebank_stats
from benchmarks.ud_eval import DEFAULT_EVAL, run_eval
from spacy_mstparse.language_codes import spacy_language

CONFIGS = common.REPO_ROOT / "configs"
PUBLISHED = common.BENCH_DIR / "udpipe_published.json"
# Sentences per Doc of the training DocBins: one for the gold-tag systems (spacy
# train shuffles sentences), 10 for the raw-text pipeline (its senter learns
# sentence ends only inside multi-sentence docs).
GOLD_N_SENTS, N_SENTS = 1, 10

SYSTEMS: Dict[str, Dict[str, Any]] = {
    "mst-o1": {"config": "mst_parser.cfg", "mode": "gold_tok_morph", "gold_tags": True},
    "mst-o2": {"config": "mst_parser_o2.cfg", "mode": "gold_tok_morph", "gold_tags": True},
    "mst-tagged": {"config": "mst_parser_tagged.cfg", "mode": "gold_tok", "gold_tags": False},
    "mst-tagged-raw": {"config": "mst_parser_tagged.cfg", "mode": "raw_text", "gold_tags": False,
                       "model_of": "mst-tagged"},
}
# Ablations (gold tags, settings of the component changed; the gain of each
# choice per language): the projective decoder always (the decoder before it was
# chosen from the treebank), and on that config the features before they were
# chosen from the treebank, FEATS off, lemmas off; word clusters off at order 2.
COMPONENT = "--components.mst_parser."
PROJECTIVE = {"decoder": "eisner"}
ABLATIONS: Dict[str, Dict[str, Any]] = {
    "mst-o1-eisner": {"of": "mst-o1", "set": PROJECTIVE},
    "mst-o1-before": {"of": "mst-o1-eisner", "set": {**PROJECTIVE,
                                                     "features.tag_columns": "both",
                                                     "features.use_morph": "false",
                                                     "features.lemma": "false"}},
    "mst-o1-nomorph": {"of": "mst-o1-eisner", "set": {**PROJECTIVE, "features.use_morph": "false"}},
    "mst-o1-nolemma": {"of": "mst-o1-eisner", "set": {**PROJECTIVE, "features.lemma": "false"}},
    "mst-o2-noclusters": {"of": "mst-o2", "set": {"features.cluster_bits": "0"}},
    "mst-tagged-nosuper": {"of": "mst-tagged", "set": {"features.supertags": "false"}},
}
for _name, _ablation in ABLATIONS.items():
    SYSTEMS[_name] = dict(SYSTEMS[_ablation["of"]], ablation=_ablation["set"])
DEFAULT_SYSTEMS = ("mst-o1", "mst-o2", "mst-tagged", "mst-tagged-raw")
MODE_NAMES = {"gold_tok_morph": "gold tok + morph", "gold_tok": "gold tok", "raw_text": "raw text"}


# ---------------------------------------------------------------------------
# Treebanks and training settings (pure logic)
# ---------------------------------------------------------------------------


def find_treebanks(data_dir: Path) -> List[Dict[str, Any]]:
    """Every ``NAME-ud-train.conllu`` in ``data_dir`` (or a folder in it) with its dev and test
    files (None when absent), language code (NAME's prefix) and the spaCy
    language it trains with (``language_codes.spacy_language``)."""
    found = []
    # the files side by side, or in a UD release's folders (UD_Wolof-WTB/wo_wtb-ud-train.conllu)
    for train in sorted(Path(data_dir).rglob("*-ud-train.conllu"), key=lambda p: p.name):
        name = train.name[: -len("-ud-train.conllu")]
        dev = train.with_name(f"{name}-ud-dev.conllu")
        test = train.with_name(f"{name}-ud-test.conllu")
        lang = name.split("_")[0]
        found.append({"name": name, "lang": lang, "spacy_lang": spacy_language(lang)[0],
                      "train": train,
                      "dev": dev if dev.is_file() else None,
                      "test": test if test.is_file() else None})
    return found


def train_overrides(epochs: Optional[int], ablation: Optional[Dict[str, str]] = None
                    ) -> List[str]:
    """The ``spacy train`` overrides besides the paths and ``--nlp.lang``:
    the epochs, and an ablation's settings of the component."""
    extra = [arg for key, value in (ablation or {}).items() for arg in (COMPONENT + key, value)]
    return extra + ([] if epochs is None else ["--training.max_epochs", str(epochs)])


def last_dev_scores(curve: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """DEP_UAS / DEP_LAS of the last row of spaCy's training table
    (``common.training_curve``): the project's scorer, punctuation left out,
    with that row's epoch and step (spaCy evaluates every
    ``eval_frequency`` steps, not at the end: a short run's last row may be
    step 0)."""
    header, rows = curve.get("header") or [], curve.get("rows") or []
    out: Dict[str, Optional[float]] = {"uas": None, "las": None, "epoch": None, "step": None}
    if not rows:
        return out
    out["epoch"], out["step"] = int(rows[-1][0]), int(rows[-1][1])
    for key, column in (("uas", "DEP_UAS"), ("las", "DEP_LAS")):
        if column in header and len(rows[-1]) == len(header):
            out[key] = rows[-1][header.index(column)]
    return out


# ---------------------------------------------------------------------------
# The table (pure logic)
# ---------------------------------------------------------------------------


def _pair(uas: Optional[float], las: Optional[float], signed: bool = False) -> str:
    if uas is None or las is None:
        return "-"
    fmt = "+.2f" if signed else ".2f"
    return f"{format(uas, fmt)} / {format(las, fmt)}"


def table_rows(results: Dict[str, Any], published: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One row per treebank and system: our UAS / LAS (test, else dev),
    UDPipe's in the same mode, the difference (test only), training seconds
    per 1,000 words and the parse's words per second."""
    rows = []
    for name, treebank in results["treebanks"].items():
        if treebank.get("error"):     # the treebank failed before any system ran
            rows.append({"treebank": name, "system": "-", "mode": "-", "split": None,
                         "uas": None, "las": None, "udpipe": (None, None),
                         "difference": (None, None), "train_seconds_per_1k_words": None,
                         "parse_words_per_second": None, "error": treebank["error"]})
        for system, run in treebank.get("systems", {}).items():
            mode = SYSTEMS[system]["mode"] if system in SYSTEMS else run.get("mode")
            split = "test" if run.get("test") else "dev"
            scores = run.get(split) or {}
            theirs = published.get("treebanks", {}).get(name, {}).get(mode) or {}
            diff = (None, None)
            if split == "test" and theirs and scores.get("uas") is not None:
                diff = (scores["uas"] - theirs["uas"], scores["las"] - theirs["las"])
            rows.append({
                "treebank": name, "system": system, "mode": MODE_NAMES.get(mode, mode),
                "split": split, "uas": scores.get("uas"), "las": scores.get("las"),
                "udpipe": (theirs.get("uas"), theirs.get("las")), "difference": diff,
                "train_seconds_per_1k_words": (run.get("train") or {}).get("seconds_per_1k_words"),
                "parse_words_per_second": scores.get("words_per_second"),
                "error": run.get("error"),
            })
    return rows


ABLATION_NAMES = {"mst-o1-eisner": "decoder chosen from the treebank (vs always projective)",
                  "mst-o1-before": "features chosen from the treebank (vs UPOS + XPOS, no FEATS, "
                                     "no lemmas)",
                  "mst-o1-nomorph": "FEATS", "mst-o1-nolemma": "lemmas",
                  "mst-o2-noclusters": "word clusters (second order)"}


def gain_table(results: Dict[str, Any]) -> List[str]:
    """Markdown lines: the UAS / LAS each ablated feature adds (the full
    system minus the ablation), dev and test, per treebank; only where both
    come from the same run (``results_file`` of a merge)."""
    lines = ["", "| gain of | treebank | dev UAS / LAS | test UAS / LAS |", "| --- | --- | --- | --- |"]
    found = False
    for ablation, label in ABLATION_NAMES.items():
        for name, treebank in results["treebanks"].items():
            runs = treebank["systems"]
            full, ablated = runs.get(ABLATIONS[ablation]["of"]), runs.get(ablation)
            if not full or not ablated or full.get("error") or ablated.get("error"):
                continue
            if full.get("results_file") != ablated.get("results_file"):
                continue  # merged from different runs (code, load): not a like-for-like gain
            cells = []
            for split in ("dev", "test"):
                a, b = full.get(split), ablated.get(split)
                cells.append(_pair(a["uas"] - b["uas"], a["las"] - b["las"], signed=True)
                             if a and b else "-")
            lines.append(f"| {label} | {name} | {cells[0]} | {cells[1]} |")
            found = True
    return lines if found else []


def markdown_table(results: Dict[str, Any], published: Dict[str, Any]) -> str:
    """The Markdown table of a run, with its settings and sources."""
    lines = [
        "| treebank | system | mode | split | UAS / LAS | UDPipe 1.2 same mode | difference "
        "| train s / 1k words | parse words/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in table_rows(results, published):
        if row["error"]:
            lines.append(f"| {row['treebank']} | {row['system']} | {row['mode']} | - | "
                         f"failed: {row['error']} | - | - | - | - |")
            continue
        lines.append(
            f"| {row['treebank']} | {row['system']} | {row['mode']} | {row['split']} "
            f"| {_pair(row['uas'], row['las'])} | {_pair(*row['udpipe'])} "
            f"| {_pair(*row['difference'], signed=True)} "
            f"| {common.num(row['train_seconds_per_1k_words'], '.1f')} "
            f"| {common.num(row['parse_words_per_second'], ',.0f')} |")
    settings = results.get("settings", {})
    epochs = settings.get("epochs")
    lines += [
        "",
        f"UAS / LAS: CoNLL 2018 eval.py, every word (punctuation included), F1 in percent. "
        f"Epochs: {epochs if epochs is not None else 'as in each config'}. UDPipe 1.2: "
        f"{published.get('source', '?')}; test sets, so no difference is given for a dev score. "
        f"Their treebanks are UD 2.5's; the release of the files here is not stated, so a "
        f"difference may include changes of the treebank. Parse words/s: the whole parse "
        f"command (loading the pipeline included).",
    ]
    lines += gain_table(results)
    mwt = [f"{name} {tb['stats']['test']['multiword_share'] * 100:.2f}%"
           for name, tb in results["treebanks"].items() if tb.get("stats", {}).get("test")]
    if mwt:
        lines.append("Words inside multiword tokens (test): " + ", ".join(mwt) + ".")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Running (subprocesses)
# ---------------------------------------------------------------------------


def convert(src: Path, dest: Path, lang: str, n_sents: int) -> Dict[str, Any]:
    """``spacy_mstparse convert SRC DEST --n-sents N --lang LANG``, skipped
    when DEST exists."""
    cmd = [sys.executable, "-m", "spacy_mstparse", "convert", common.rel(src), common.rel(dest),
           "--n-sents", str(n_sents), "--lang", lang]
    if dest.exists():
        return {"command": common.display_command(cmd), "reused": True}
    common.log(f"converting {src.name}")
    run = common.run_measured(cmd, dest.with_suffix(".log"))
    if run["returncode"] != 0:
        raise RuntimeError(f"convert failed: {common.tail(dest.with_suffix('.log'), 3)}")
    return {"command": run["command"], "reused": False}


def train(system: str, treebank: Dict[str, Any], corpus: Dict[str, Path], model_dir: Path,
          epochs: Optional[int], train_words: int) -> Dict[str, Any]:
    """Train (or reuse) the model of ``system`` on ``treebank``."""
    config_path = CONFIGS / SYSTEMS[system]["config"]
    extra = train_overrides(epochs, SYSTEMS[system].get("ablation"))
    train_corpus = corpus["train-gold" if SYSTEMS[system]["gold_tags"] else "train"]
    curve_corpus = corpus.get("dev") or train_corpus
    cmd = [sys.executable, "-m", "spacy", "train", common.rel(config_path),
           "--output", common.rel(model_dir), "--paths.train", common.rel(train_corpus),
           "--paths.dev", common.rel(curve_corpus), "--nlp.lang", treebank["spacy_lang"], *extra]
    record = model_dir / "train.json"
    if (model_dir / "model-last" / "meta.json").exists() and record.exists():
        recorded = json.loads(record.read_text())
        if recorded.get("command") == common.display_command(cmd):
            common.log(f"reusing {common.rel(model_dir)} (trained by the same command)")
            return dict(recorded, reused=True)
    common.log(f"training {system} on {treebank['name']}")
    log_path = model_dir.parent / f"{model_dir.name}.train.log"
    run = common.run_measured(cmd, log_path)
    if run["returncode"] != 0:
        raise RuntimeError(f"spacy train failed: {common.tail(log_path, 1)}")
    info = {"command": run["command"], "overrides": extra, "wall_seconds": run["wall_seconds"],
            "seconds_per_1k_words": run["wall_seconds"] / train_words * 1000,
            "peak_rss_mb": run["peak_rss_mb"], "loadavg_before": run["loadavg_before"],
            "dev_spacy_scorer": last_dev_scores(common.training_curve(log_path)),
            "curve_split": "dev" if corpus.get("dev") else "train"}
    record.write_text(json.dumps(info, indent=2))
    return dict(info, reused=False)


def parse_and_score(system: str, model: Path, gold: Path, out: Path, eval_py: Path,
                    words: int) -> Dict[str, Any]:
    """Parse ``gold`` (its words, or its raw text) with ``model`` and score
    the parse with eval.py."""
    settings = SYSTEMS[system]
    source = gold
    extra: List[str] = ["--gold-tags"] if settings["gold_tags"] else []
    if settings["mode"] == "raw_text":
        source = out.with_suffix(".txt")
        try:
            lines = raw_text_lines(gold)
        except ValueError as err:     # e.g. a treebank whose words are withheld: no text
            raise RuntimeError(f"no raw text: {err}") from None
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        extra = ["--format", "text"]
    cmd = [sys.executable, "-m", "spacy_mstparse", "parse", common.rel(model), common.rel(source),
           common.rel(out), *extra]
    run = common.run_measured(cmd, out.with_suffix(".log"))
    if run["returncode"] != 0:
        raise RuntimeError(f"parse failed: {common.tail(out.with_suffix('.log'), 1)}")
    scores = run_eval(gold, out, eval_py)
    scores.pop("table")
    scores.update({"command": run["command"], "parse_wall_seconds": run["wall_seconds"],
                   "words_per_second": words / run["wall_seconds"]})
    return scores


def run_treebank(treebank: Dict[str, Any], systems: List[str], work: Path,
                 epochs: Optional[int], eval_py: Path) -> Dict[str, Any]:
    name = treebank["name"]
    stats = {split: treebank_stats(treebank[split]) for split in ("train", "dev", "test")
             if treebank[split] is not None}
    out: Dict[str, Any] = {"lang": treebank["lang"], "spacy_lang": treebank["spacy_lang"],
                           "stats": stats,
                           "files": {s: common.rel(treebank[s]) for s in ("train", "dev", "test")
                                     if treebank[s] is not None},
                           "systems": {}}
    corpus_dir = work / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    corpus = {}
    for split, source, n_sents in (("train", "train", N_SENTS), ("dev", "dev", N_SENTS),
                                   ("train-gold", "train", GOLD_N_SENTS)):
        if treebank[source] is None:
            continue
        corpus[split] = corpus_dir / f"{name}-{split}.spacy"
        try:
            convert(treebank[source], corpus[split], treebank["spacy_lang"], n_sents)
        except RuntimeError as err:
            out["error"] = str(err)
            common.log(f"{name}: {err}")
            return out
    tag = f"e{epochs}" if epochs is not None else "cfg"
    for system in systems:
        trained_as = SYSTEMS[system].get("model_of", system)
        model_dir = work / "models" / name / f"{trained_as}-{tag}"
        run: Dict[str, Any] = {"mode": SYSTEMS[system]["mode"]}
        try:
            run["train"] = train(trained_as, treebank, corpus, model_dir, epochs,
                                 stats["train"]["words"])
            for split in ("test", "dev"):
                if treebank[split] is None:
                    continue
                parsed = work / "parsed" / name / f"{system}-{tag}-{split}.conllu"
                parsed.parent.mkdir(parents=True, exist_ok=True)
                run[split] = parse_and_score(system, model_dir / "model-last", treebank[split],
                                             parsed, eval_py, stats[split]["words"])
                common.log(f"{name} {system} {split}: UAS {run[split]['uas']:.2f} "
                           f"LAS {run[split]['las']:.2f}")
        except RuntimeError as err:
            run["error"] = str(err)
            common.log(f"{name} {system}: {err}")
        out["systems"][system] = run
    return out


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                   help=f"comma-separated, from {', '.join(SYSTEMS)}")
    p.add_argument("--merge", nargs="+", type=Path, default=None,
                   help="results files of earlier runs to join into --output (no training)")
    p.add_argument("--treebanks", default=None,
                   help="comma-separated treebank names (default: every one with a train file)")
    p.add_argument("--epochs", type=int, default=None,
                   help="training epochs of every system (default: each config's own)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 1 epoch, the smallest treebank unless --treebanks")
    p.add_argument("--data-dir", type=Path, default=common.DATA)
    p.add_argument("--eval-py", type=Path, default=DEFAULT_EVAL,
                   help="the CoNLL 2018 scorer (default: ../shared/tools/ud/eval.py)")
    p.add_argument("--work-dir", type=Path, default=common.WORK / "languages",
                   help="converted corpora, trained models (reused) and parses")
    p.add_argument("--output", type=Path, default=common.RESULTS / "languages.json")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)

    if not args.eval_py.is_file():
        p.error(f"eval.py not found: {args.eval_py.resolve()} (pass --eval-py PATH)")
    treebanks = find_treebanks(args.data_dir)
    if not treebanks:
        p.error(f"no NAME-ud-train.conllu in {args.data_dir.resolve()}")
    systems = common.choose_names(p, args.systems, SYSTEMS, "system")
    if args.treebanks:
        chosen = common.choose_names(p, args.treebanks, [tb["name"] for tb in treebanks],
                                     "treebank")
        treebanks = [tb for tb in treebanks if tb["name"] in chosen]
    elif args.quick:
        treebanks = [min(treebanks, key=lambda tb: tb["train"].stat().st_size)]
    epochs = 1 if args.quick and args.epochs is None else args.epochs
    markdown = args.markdown or args.output.with_suffix(".md")

    published = json.loads(PUBLISHED.read_text())
    if args.merge:
        runs = [json.loads(path.read_text()) for path in args.merge]
        merged = dict(runs[0], command=common.invocation("bench_languages", argv),
                      merged_from=[common.rel(path) for path in args.merge], treebanks={})
        for path, run in zip(args.merge, runs):
            for name, treebank in run["treebanks"].items():
                merged["treebanks"].setdefault(name, dict(treebank, systems={}))
                merged["treebanks"][name]["systems"].update(
                    {system: dict(result, results_file=result.get("results_file", common.rel(path)))
                     for system, result in treebank["systems"].items()})
        common.finish_results(merged, args.output, markdown_table(merged, published), markdown)
        return 0
    results: Dict[str, Any] = {
        "command": common.invocation("bench_languages", argv),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "code": common.working_tree_code(), "machine": common.machine_info(),
        "settings": {"systems": systems, "epochs": epochs,
                     "n_sents_per_doc": {"gold tags": GOLD_N_SENTS, "raw text": N_SENTS},
                     "work_dir": common.rel(args.work_dir), "scorer": "CoNLL 2018 eval.py"},
        "udpipe_published": common.rel(PUBLISHED),
        "treebanks": {},
    }
    for treebank in treebanks:
        common.log(f"treebank {treebank['name']} ({treebank['lang']}, spaCy language "
                   f"{treebank['spacy_lang']})")
        results["treebanks"][treebank["name"]] = run_treebank(
            treebank, systems, args.work_dir, epochs, args.eval_py)
        common.save_results(results, args.output)
    common.finish_results(results, args.output, markdown_table(results, published), markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())

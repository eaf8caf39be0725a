"""Command-line interface: ``python -m spacy_mstparse COMMAND``.

One ``typer`` app; each command is a thin wrapper that parses options, calls
the function doing the work and turns expected input errors into a message on
stderr and exit code 1 (no traceback): malformed or empty input, an output
path that is the input, a pipeline that cannot parse the input (missing tag
columns) or that returns an invalid tree. Nothing is written then.

    convert   CoNLL-U / CoNLL-X -> .spacy (DocBin)
    evaluate  attachment scores and parser speed of a pipeline on a treebank
    parse     parse a CoNLL-U / CoNLL-X / text file, write CoNLL-U
    show      print the parses of a few sentences (and a displaCy SVG)
    calibrate re-fit an mst_parser's probability temperatures on a treebank
    explain   the features behind one word's head and label
    clusters  induce word classes (Brown-style bit paths) from text and treebanks
    ray-train train an mst_parser on a Ray cluster (parameter mixing)
    ray-parse parse files on a Ray cluster

``--version`` / ``-V`` prints the installed version. Long commands draw
progress bars on a terminal only (``progress.py``).
"""
import warnings
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Iterator, List, Optional

import typer

app = typer.Typer(
    name="spacy_mstparse",
    help="MST dependency parsing for spaCy: data conversion and tools.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def package_version() -> str:
    """The installed distribution's version (the source's when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    from . import __version__

    try:
        return version("spacy-mstparse")
    except PackageNotFoundError:
        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"spacy-mstparse {package_version()}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_print_version, is_eager=True,
        help="Print the version of spacy-mstparse and exit"),
) -> None:
    """MST dependency parsing for spaCy: data conversion and tools."""
    # Keeps typer in multi-command mode even while only one command exists.


class ConllFormat(str, Enum):
    conllu = "conllu"
    conllx = "conllx"


class ParseFormat(str, Enum):
    auto = "auto"
    conllu = "conllu"
    conllx = "conllx"
    text = "text"


def fail(message: str) -> None:
    """Print ``message`` to stderr and exit with code 1."""
    typer.echo(message, err=True)
    raise typer.Exit(code=1)


def usable_language(code: str) -> str:
    """``code``, or ``xx`` with a note on stderr when spaCy cannot start it
    (``language_codes.spacy_language``)."""
    from .language_codes import spacy_language

    lang, note = spacy_language(code)
    if note:
        typer.echo(f"Note: {note}", err=True)
    return lang


@contextmanager
def warnings_to_stderr() -> Iterator[None]:
    """Show warnings as one "Warning: ..." line on stderr each."""

    def show(message, category, filename, lineno, file=None, line=None):
        typer.echo(f"Warning: {message}", err=True)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


@contextmanager
def user_errors(format_name: str = "CoNLL", io_problem: Optional[str] = None) -> Iterator[None]:
    """Turn the expected input errors into one line on stderr and exit 1;
    with ``io_problem``, an ``OSError`` too ("<io_problem>: <error>")."""
    from .corpus.atomic import OutputIsInputError
    from .corpus.conll import ConllFormatError, EmptyInputError, InvalidTreeError
    from .pipeline_input import EvaluationError

    try:
        yield
    except ConllFormatError as err:
        fail(f"Invalid {format_name} input: {err}")
    except EmptyInputError as err:
        fail(f"Empty input: {err}")
    except OutputIsInputError as err:
        fail(str(err))
    except InvalidTreeError as err:
        fail(f"Invalid tree: {err}")
    except EvaluationError as err:
        fail(str(err))
    except OSError as err:
        if io_problem is None:
            raise
        fail(f"{io_problem}: {err}")


@app.command("convert")
def convert_command(
    input_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True, help="CoNLL-U or CoNLL-X file"
    ),
    output_path: Path = typer.Argument(..., dir_okay=False, help="Output .spacy file"),
    format: ConllFormat = typer.Option(ConllFormat.conllu, "--format", "-f", help="Input format"),
    n_sents: int = typer.Option(1, "--n-sents", "-n", min=1, help="Sentences per Doc"),
    lang: str = typer.Option("xx", "--lang", "-l",
                             help="Language code of the vocab (spacy.blank; xx where spaCy has none)"),
) -> None:
    """Convert a CoNLL-U / CoNLL-X treebank to a spaCy DocBin (.spacy)."""
    from .corpus.convert import convert

    lang = usable_language(lang)
    try:
        with user_errors(format.value):
            convert(input_path, output_path, format=format.value, n_sents=n_sents, vocab_lang=lang)
    except OSError as err:
        fail(f"Could not read or write a file: {err}")


@app.command("evaluate")
def evaluate_command(
    model: str = typer.Argument(..., help="Pipeline directory or installed package name"),
    gold_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True, help="Gold CoNLL-U / CoNLL-X file"
    ),
    gold_tags: bool = typer.Option(
        False, "--gold-tags", help="Give the parser the gold UPOS/XPOS/FEATS/lemmas"
    ),
    output_path: Optional[Path] = typer.Option(
        None, "--output", "-o", dir_okay=False, help="Write the metrics to this JSON file"
    ),
    format: ConllFormat = typer.Option(ConllFormat.conllu, "--format", "-f", help="Gold file format"),
    batch_size: int = typer.Option(64, "--batch-size", "-b", min=1, help="Docs per batch"),
) -> None:
    """Score a pipeline's dependency parser on a treebank (gold words and
    sentences): UAS/LAS with and without punctuation, spaCy's dep_uas/dep_las,
    and the parser's speed."""
    from .corpus.atomic import check_not_input
    from .evaluation import evaluate, print_metrics, write_metrics

    try:
        with user_errors(format.value), warnings_to_stderr():
            if output_path is not None:
                check_not_input(output_path, gold_path)
            metrics = evaluate(
                model, gold_path, gold_tags=gold_tags, fmt=format.value, batch_size=batch_size
            )
    except OSError as err:
        fail(f"Could not read a file: {err}")
    print_metrics(metrics)
    if output_path is not None:
        try:
            write_metrics(metrics, output_path)
        except OSError as err:
            fail(f"Could not write {output_path}: {err}")
        typer.echo(f"Metrics written to {output_path}")


@app.command("parse")
def parse_command(
    model: str = typer.Argument(..., help="Pipeline directory or installed package name"),
    input_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True,
        help="CoNLL-U / CoNLL-X file, or plain text (one document per line)",
    ),
    output_path: Path = typer.Argument(..., dir_okay=False, help="Output CoNLL-U file"),
    gold_tags: bool = typer.Option(
        False, "--gold-tags", help="CoNLL input: keep its tags as the parser's input"
    ),
    format: ParseFormat = typer.Option(
        ParseFormat.auto, "--format", "-f",
        help="Input format; auto: .conllu -> conllu, .conll/.conllx -> conllx, else text",
    ),
    batch_size: int = typer.Option(64, "--batch-size", "-b", min=1, help="Docs per batch"),
    probs: bool = typer.Option(
        False, "--probs", help="Write each word's HeadProb / DepProb into MISC"),
    min_prob: Optional[float] = typer.Option(
        None, "--min-prob", min=0.0, max=1.0,
        help="Selective parsing: also mark the words whose head probability (with --joint: "
        "head x label) is at least this with Confident=Yes in MISC, the others Confident=No"),
    joint: bool = typer.Option(False, "--joint", help="--min-prob on head_prob x dep_prob"),
) -> None:
    """Parse a file with a pipeline and write the predicted trees as CoNLL-U."""
    from .parsing import parse_file

    try:
        with user_errors(), warnings_to_stderr():
            summary = parse_file(
                model, input_path, output_path, fmt=format.value, gold_tags=gold_tags,
                batch_size=batch_size, probabilities=probs or min_prob is not None,
                min_prob=min_prob, joint=joint,
            )
    except OSError as err:
        fail(f"Could not read or write a file: {err}")
    typer.echo(
        f"\u2714 Parsed {summary['input']} ({summary['format']}): {summary['docs']} docs, "
        f"{summary['sentences']} sentences, {summary['tokens']} words -> {summary['output']}"
    )
    if min_prob is not None:
        typer.echo(f"  {summary['confident']} words ({100 * summary['confident_share']:.1f}%) "
                   f"with {'head x label' if joint else 'head'} probability >= {min_prob:g}")


@app.command("show")
def show_command(
    model: str = typer.Argument(..., help="Pipeline directory or installed package name"),
    input_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False,
        help="CoNLL-U / CoNLL-X file, or plain text (one document per line)"),
    n: int = typer.Option(3, "--n", "-n", min=1, help="How many sentences to show"),
    svg: Optional[Path] = typer.Option(None, "--svg", help="Write a displaCy SVG of the first sentence to this file"),
    gold_tags: bool = typer.Option(False, "--gold-tags", help="Give the parser the file's tags"),
    view: str = typer.Option(
        "tree", "--view", help="What the SVG draws: tree (the parse), probs (every candidate "
        "head with its probability) or kbest (the --n-best best trees)"),
    n_best: int = typer.Option(5, "--n-best", help="Trees drawn by --view kbest"),
    min_prob: float = typer.Option(
        0.05, "--min-prob", min=0.0, max=1.0, help="Least probability of a head drawn by --view probs"),
    format: ParseFormat = typer.Option(
        ParseFormat.auto, "--format", "-f",
        help="Input format; auto: .conllu -> conllu, .conll/.conllx -> conllx, else text",
    ),
) -> None:
    """Print the parses of the first sentences of a CoNLL-U / CoNLL-X file
    (on its words) or of plain text (through the whole pipeline, as parse)."""
    from .display import show

    try:
        with user_errors(), warnings_to_stderr():
            show(model, input_path, n=n, svg_path=svg, gold_tags=gold_tags, view=view,
                 n_best=n_best, min_prob=min_prob, fmt=format.value)
    except OSError as err:
        fail(f"Could not read or write a file: {err}")


@app.command("calibrate")
def calibrate_command(
    model: Path = typer.Argument(..., help="Pipeline directory (the temperature is written into it)"),
    dev_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True, help="Dev CoNLL-U / CoNLL-X file"
    ),
    gold_tags: bool = typer.Option(False, "--gold-tags", help="Give the parser the gold tags"),
    format: ConllFormat = typer.Option(ConllFormat.conllu, "--format", "-f", help="Dev file format"),
    component: Optional[str] = typer.Option(None, "--component", help="mst_parser component name"),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report only; do not write the model"),
) -> None:
    """Re-fit an mst_parser's head and label temperatures on a treebank
    (training already fits them on its dev corpus) and save them in the
    model; prints the ECE (15 bins) of head_prob and dep_prob and
    accuracy/coverage at >= 0.9 and 0.99 before and after."""
    from .calibration import calibrate, format_calibration

    with user_errors(format.value, io_problem="Could not read or write a file"), warnings_to_stderr():
        result = calibrate(model, dev_path, gold_tags=gold_tags, fmt=format.value,
                           component=component, write=not dry_run)
    typer.echo(format_calibration(result))
    if not dry_run:
        label = (f", label temperature {result['label']['temperature']:.4g}"
                 if "label" in result else "")
        typer.echo(f"\u2714 head temperature {result['head']['temperature']:.4g}{label} "
                   f"written to {result['written_to']}")


@app.command("explain")
def explain_command(
    model: str = typer.Argument(..., help="Pipeline directory or installed package name"),
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="CoNLL-U / CoNLL-X file"),
    sent: int = typer.Option(1, "--sent", help="Sentence number (1 = the first)"),
    word: int = typer.Option(..., "--word", help="Word ID in the sentence (1-based, as in CoNLL)"),
    gold_tags: bool = typer.Option(False, "--gold-tags", help="Give the parser the file's tags"),
    format: ConllFormat = typer.Option(ConllFormat.conllu, "--format", "-f", help="File format"),
    top: int = typer.Option(15, "--top", help="Features shown per arc/label (0 = all)"),
    component: Optional[str] = typer.Option(None, "--component", help="mst_parser component name"),
) -> None:
    """Explain an mst_parser's head and label for one word: the features that
    fired for the chosen and the best competing head / label, with weights.
    Words are numbered by CoNLL ID (ROOT = the root), as --word."""
    from .calibration import explain_sentence

    try:
        with user_errors(format.value, io_problem="Could not read a file"), warnings_to_stderr():
            expl = explain_sentence(model, input_path, sent, word, gold_tags=gold_tags,
                                    fmt=format.value, component=component)
    except ValueError as err:  # a sentence or word number outside the file
        fail(str(err))
    typer.echo(expl.format(top=top, conll_ids=True))  # CoNLL IDs, as --word


@app.command("clusters")
def clusters_command(
    raw_paths: Optional[List[Path]] = typer.Argument(
        None, exists=True, dir_okay=False, readable=True,
        help="Raw text files: one sentence or document per line"),
    output_path: Path = typer.Option(..., "--output", "-o", dir_okay=False,
                                     help="Output paths file (bits<TAB>word<TAB>count)"),
    lang: str = typer.Option("xx", "--lang", "-l",
                             help="Language of the tokenizer for raw text (spacy.blank; xx where spaCy has none)"),
    treebanks: Optional[List[Path]] = typer.Option(
        None, "--treebank", "-t", exists=True, dir_okay=False, readable=True,
        help="A CoNLL-U or .spacy treebank whose words to add (repeatable)"),
    depth: int = typer.Option(8, "--depth", min=1, max=63, help="Bits per path (2^depth classes)"),
    min_count: int = typer.Option(2, "--min-count", min=1, help="Leave out words seen fewer times"),
    passes: int = typer.Option(10, "--passes", min=0, help="Exchange passes per level at most"),
    seed: int = typer.Option(0, "--seed", help="Seed of the order words are visited in"),
    lowercase: bool = typer.Option(False, "--lowercase", help="Cluster lower-cased words"),
) -> None:
    """Induce hierarchical word classes by divisive exchange clustering and
    write them as a Brown paths file, for an mst_parser's cluster_bits
    features (initialize(clusters=PATH))."""
    from .corpus.word_lists import TextInputError
    from .clustering import ClustersInputError, induce_clusters
    from .wordclasses import EmptyCorpusError

    lang = usable_language(lang)
    try:
        with user_errors("CoNLL-U", io_problem="Could not read or write a file"):
            induce_clusters(raw_paths or [], output_path, lang=lang, treebank_paths=treebanks or [],
                            depth=depth, min_count=min_count, passes=passes, seed=seed,
                            lowercase=lowercase)
    except (ClustersInputError, TextInputError) as err:
        fail(str(err))
    except EmptyCorpusError as err:
        fail(f"Empty input: {err}")


# -- on a Ray cluster (the optional extra spacy-mstparse[ray]) -------------------


class Weighting(str, Enum):
    uniform = "uniform"
    shard_size = "shard-size"


@contextmanager
def distributed_errors() -> Iterator[None]:
    """One line for no Ray, a dead worker, a learner that cannot be mixed."""
    from .distributed import DistributedError, UnmixableLearnerError

    try:
        yield
    except (DistributedError, UnmixableLearnerError) as err:
        fail(str(err))


@app.command(
    "ray-train", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def ray_train_command(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="Training config"),
    output_path: Path = typer.Option(..., "--output", "-o", help="Output folder (model-best, model-last)"),
    workers: int = typer.Option(2, "--workers", "-w", min=1, help="Ray workers (one shard each)"),
    address: Optional[str] = typer.Option(
        None, "--address", help="Join this Ray cluster ('auto': the local one); default: start one with N CPUs"),
    weighting: Weighting = typer.Option(
        Weighting.uniform, "--mixing", help="Mixture weights: uniform or by shard size"),
) -> None:
    """Train a config's mst_parser on a Ray cluster by iterative parameter
    mixing (McDonald et al. 2010): one shard of the training corpus per
    worker, the weights averaged after every epoch. Config overrides as for
    spacy train (--paths.train X --paths.dev Y ...); writes model-best and
    model-last as spacy train does."""
    from spacy.cli._util import parse_config_overrides, show_validation_error

    from .distributed.train import ray_train

    overrides = parse_config_overrides(ctx.args)
    try:
        with distributed_errors(), show_validation_error(config_path):
            ray_train(config_path, output_path, workers, address=address, overrides=overrides,
                      weighting=weighting.value)
    except OSError as err:
        fail(f"Could not read or write a file: {err}")


@app.command("ray-parse")
def ray_parse_command(
    model: str = typer.Argument(..., help="Pipeline directory or installed package name"),
    input_path: Path = typer.Argument(
        ..., exists=True, readable=True,
        help="CoNLL-U / CoNLL-X / text file, or a folder of them (.conllu .conll .conllx .txt)"),
    output_path: Path = typer.Argument(..., help="Output CoNLL-U file (a folder for a folder)"),
    workers: int = typer.Option(2, "--workers", "-w", min=1, help="Ray workers"),
    address: Optional[str] = typer.Option(
        None, "--address", help="Join this Ray cluster ('auto': the local one); default: start one with N CPUs"),
    gold_tags: bool = typer.Option(False, "--gold-tags", help="CoNLL input: keep its tags as the parser's input"),
    format: ParseFormat = typer.Option(ParseFormat.auto, "--format", "-f", help="Input format (as parse)"),
    batch_size: int = typer.Option(64, "--batch-size", "-b", min=1, help="Docs per batch"),
) -> None:
    """Parse a file or a folder of files on Ray workers: the same CoNLL-U as
    parse, in input order; nothing is written for a file whose parse failed."""
    from .distributed.parse import ray_parse

    try:
        with user_errors(), warnings_to_stderr(), distributed_errors():
            summary = ray_parse(model, input_path, output_path, workers, address=address,
                                fmt=format.value, gold_tags=gold_tags, batch_size=batch_size)
    except OSError as err:
        fail(f"Could not read or write a file: {err}")
    typer.echo(
        f"\u2714 Parsed {summary['input']} on {workers} Ray workers: {summary['docs']} docs, "
        f"{summary['sentences']} sentences, {summary['tokens']} words -> {summary['output']} "
        f"in {summary['seconds']:.1f} s ({summary['startup_seconds']:.1f} s starting Ray and "
        f"loading the pipeline, meanwhile the driver parsed {summary['driver_chunks']} of the "
        f"{summary['chunks']} chunks)"
    )

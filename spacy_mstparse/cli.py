"""Command-line interface: ``python -m spacy_mstparse COMMAND``.

One ``typer`` app; each command is a thin wrapper that parses options, calls
the function doing the work and turns expected input errors into a message on
stderr and exit code 1 (no traceback).

    convert   CoNLL-U / CoNLL-X -> .spacy (DocBin)
"""
from enum import Enum
from pathlib import Path

import typer

app = typer.Typer(
    name="spacy_mstparse",
    help="MST dependency parsing for spaCy: data conversion and tools.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def main() -> None:
    """MST dependency parsing for spaCy: data conversion and tools."""
    # Keeps typer in multi-command mode even while only one command exists.


class ConllFormat(str, Enum):
    conllu = "conllu"
    conllx = "conllx"


def fail(message: str) -> None:
    """Print ``message`` to stderr and exit with code 1."""
    typer.echo(message, err=True)
    raise typer.Exit(code=1)


@app.command("convert")
def convert_command(
    input_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True, help="CoNLL-U or CoNLL-X file"
    ),
    output_path: Path = typer.Argument(..., dir_okay=False, help="Output .spacy file"),
    format: ConllFormat = typer.Option(ConllFormat.conllu, "--format", "-f", help="Input format"),
    n_sents: int = typer.Option(1, "--n-sents", "-n", min=1, help="Sentences per Doc"),
    lang: str = typer.Option("xx", "--lang", "-l", help="Language code of the vocab (spacy.blank)"),
) -> None:
    """Convert a CoNLL-U / CoNLL-X treebank to a spaCy DocBin (.spacy)."""
    from .corpus.conll import ConllFormatError
    from .corpus.convert import convert

    try:
        convert(input_path, output_path, format=format.value, n_sents=n_sents, vocab_lang=lang)
    except ConllFormatError as err:
        fail(f"Invalid {format.value} input: {err}")
    except ImportError as err:  # spacy.blank with an unknown language code
        fail(f"Unknown language '{lang}': {err}")
    except OSError as err:
        fail(f"Could not read or write a file: {err}")

"""Tokenizer special cases learned from a treebank's words, for raw text.

spaCy's rule-based tokenizer splits text by its language's rules, which a
treebank's word segmentation often does not share: Czech CLTT writes legal
references as one word ("§_24_odst._3_písm._a)", "a)"), English EWT splits
"Nov.28." into three, Turkish IMST writes "yakasındaki" as the words
"yakasında" + "ki" (a multiword token). ``learn_special_cases`` compares,
for every space-free string of the training treebank, the words the
treebank has there with the tokens the tokenizer gives, and keeps the
treebank's split of every string the tokenizer gets wrong (the split it
has in most of the string's occurrences); ``add_special_cases`` gives them
to the tokenizer, which then splits these strings as the treebank does and
saves them with the pipeline (its ``rules``). Strings never seen in training
keep the language's rules. A multiword token counts as its words when they
spell it out ("do" + "n't"), else as one word: a tokenizer can only cut
the text.

``configs/mst_parser_tagged.cfg`` learns them at ``initialize`` (the
``[initialize.after_init]`` callback ``tokenizer_cases_from_treebank.v1``
in ``registry.py``).
"""
from collections import Counter, defaultdict
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple

from spacy.symbols import ORTH
from spacy.tokens import Doc

from .corpus.conll import stored_sentences

# A string's split is learned when the treebank splits it so in at least this
# share of its occurrences.
MIN_SHARE = 0.5


def word_pieces(doc: Doc) -> List[Tuple[str, bool]]:
    """(piece, space after) of a gold ``doc`` read from CoNLL-U: its words,
    except that the words of a multiword token that do not spell it out
    are replaced by the token's own form (``doc.user_data``)."""
    words = [(t.text, bool(t.whitespace_)) for t in doc]
    sents = stored_sentences(doc)
    if sents is None:
        return words  # no sentence records that fit the Doc: its tokens as they are
    out: List[Tuple[str, bool]] = []
    offset = 0
    for sent in sents:
        ranges = {m["start"] + offset - 1: m for m in sent.get("mwts") or ()}
        i, end = offset, offset + int(sent["n_words"])
        while i < end:
            mwt = ranges.get(i)
            if mwt is None:
                out.append(words[i])
                i += 1
                continue
            last = mwt["end"] + offset - 1
            inside = words[i:last + 1]
            form = mwt["cols"][1]
            if "".join(w for w, _ in inside) == form:
                out.extend((w, False) for w, _ in inside[:-1])
                out.append((inside[-1][0], words[last][1]))
            else:
                out.append((form, words[last][1]))
            i = last + 1
        offset = end
    return out


def space_free_strings(pieces: Sequence[Tuple[str, bool]]) -> Iterator[Tuple[str, ...]]:
    """The words of each space-free stretch of text."""
    current: List[str] = []
    for piece, space in pieces:
        current.append(piece)
        if space:
            yield tuple(current)
            current = []
    if current:
        yield tuple(current)


def learn_special_cases(tokenizer, docs: Iterable[Doc],
                        min_share: float = MIN_SHARE) -> Dict[str, Tuple[str, ...]]:
    """{string: words} for every space-free string of the gold ``docs``
    that ``tokenizer`` splits otherwise than the treebank does in at least
    ``min_share`` of its occurrences."""
    seen: Dict[str, Counter] = defaultdict(Counter)
    for doc in docs:
        for words in space_free_strings(word_pieces(doc)):
            text = "".join(words)
            if text and not any(ch.isspace() for ch in text):
                seen[text][words] += 1
    cases = {}
    for text, splits in seen.items():
        words, count = splits.most_common(1)[0]
        if count < min_share * sum(splits.values()):
            continue
        if tuple(t.text for t in tokenizer(text)) != words:
            cases[text] = words
    return cases


def add_special_cases(tokenizer, cases: Dict[str, Tuple[str, ...]]) -> None:
    for text, words in cases.items():
        tokenizer.add_special_case(text, [{ORTH: w} for w in words])

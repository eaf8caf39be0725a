"""The one table of tag columns: which token attribute holds each tag column
of a CoNLL-U / CoNLL-X treebank, and which token attributes a parser's tag
column setting reads (``tag_columns`` of the graph parser's features,
``tag_column`` of ``arcstandard_svm``). Attributes are named as in
``spacy.attrs``; no spaCy here."""

# Token attribute -> the treebank column it holds.
CONLL_COLUMNS = {"POS": "UPOS", "TAG": "XPOS", "MORPH": "FEATS", "LEMMA": "LEMMA"}
# Tag column setting -> the token attributes it reads, in order.
TAG_COLUMN_ATTRS = {"upos": ("POS",), "xpos": ("TAG",), "both": ("POS", "TAG")}
# The settings naming one column (what ``arcstandard_svm`` reads), default first.
SINGLE_TAG_COLUMNS = ("xpos", "upos")
# A pipeline component predicting a column says so in its factory meta ``assigns``.
ASSIGNS = {f"token.{attr.lower()}": attr for attr in CONLL_COLUMNS}

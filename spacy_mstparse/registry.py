"""The config functions of the ``mst_learners`` and ``mst_features`` spaCy
registries (``@mst_learners = "spacy_mstparse.MIRA.v1"`` in a config), the
only place where learners and features meet spaCy. The entry-point groups
``spacy_mst_learners`` / ``spacy_mst_features`` in pyproject.toml point here.

Perceptron and MIRA follow McDonald et al. (2005), PA Crammer et al. (2006) /
Nguyen et al. (2007), Pegasos-DP Shalev-Shwartz et al. (2007) / Lee et al.
(2010), the sparseptron Smith & Martins (2013), the 1-slack SSVM Joachims et
al. (2009); the features McDonald et al. (2005) Table 1, with the sibling
and grandparent features of McDonald & Pereira (2006) and Carreras (2007).

Every argument has a type (``setting_types``) that spaCy's config validation
checks, and a ValueError from a check of several arguments together is a
config error naming the function (``register``).
"""
import functools
from typing import Optional

import spacy

from .features.config import (
    AUTO, DEFAULT_N_BUCKETS, FeatureConfig, check_tag_columns, check_use_morph,
)
from .learners import MIRA, PassiveAggressive, Pegasos, Perceptron
from .learners.pegasos import DEFAULT_LAM as PEGASOS_LAM
from .setting_types import (
    TABLE_SIZE, config_errors, constrained, int_in, non_negative_int, number_in, one_of,
    positive_int, positive_number, unit_share,
)
from .tokenizer_cases import MIN_SHARE, add_special_cases, learn_special_cases

for _name in ("mst_learners", "mst_features"):
    if not hasattr(spacy.registry, _name):
        spacy.registry.create(_name, entry_points=True)

TAG_COLUMNS = one_of("upos", "xpos", "both")
TAG_COLUMNS_OR_AUTO = one_of("upos", "xpos", "both", "auto")
CLUSTER_BITS = int_in(0, 64)
USE_MORPH = constrained('true, false, "auto" or a list of FEATS keys such as ["Case"]',
                        lambda v: check_use_morph(v) is None)
GIVEN_USE_MORPH = constrained('true, false or a list of FEATS keys such as ["Case"]',
                              lambda v: v != AUTO and check_use_morph(v) is None)
LEMMA = one_of(True, False, AUTO)


def register(table: str, name: str):
    """Register a config function under ``name`` in ``spacy.registry.<table>``,
    its ValueErrors turned into config errors naming it."""
    def wrap(func):
        @functools.wraps(func)
        def checked(*args, **kwargs):
            with config_errors(name):
                return func(*args, **kwargs)
        getattr(spacy.registry, table).register(name, func=checked)
        return checked
    return wrap


@register("mst_learners", "spacy_mstparse.Perceptron.v1")
def make_perceptron() -> Perceptron:
    """Averaged perceptron (one averaging tick per sentence)."""
    return Perceptron()


@register("mst_learners", "spacy_mstparse.MIRA.v1")
def make_mira(C: Optional[positive_number] = None, k: positive_int = 5) -> MIRA:
    """Averaged k-best MIRA (McDonald et al. 2005: k = 5): one constraint per
    tree of the k best (Hildreth's algorithm); k = 1 is the closed form.
    The approximate second-order non-projective decoder gives only the best
    tree, so there it trains with k = 1.
    ``C`` clips the dual variables (None = no clipping, as in the paper)."""
    return MIRA(C=float("inf") if C is None else C, k=k)


@register("mst_learners", "spacy_mstparse.PassiveAggressive.v1")
def make_passive_aggressive(variant: one_of("PA", "PA-I", "PA-II") = "PA-I",
                            C: positive_number = 0.05) -> PassiveAggressive:
    """Averaged passive-aggressive learner: ``variant`` is "PA", "PA-I" or "PA-II"."""
    return PassiveAggressive(variant=variant, C=C)


@register("mst_learners", "spacy_mstparse.Pegasos.v1")
def make_pegasos(
    lam: positive_number = PEGASOS_LAM, k: positive_int = 10, averaged: bool = True,
    radius: Optional[positive_number] = None,
) -> Pegasos:
    """Pegasos-DP: mini-batches of ``k`` loss-augmented sentences, regulariser
    ``lam``, projection onto the ball of ``radius``. None (default):
    sqrt(2 L(0) / lam), L(0) = the mean Hamming loss at w = 0 (words per
    training sentence), a ball that keeps the optimum inside; Lee et al.
    (2010) use 1/sqrt(lam), which excludes it. The defaults (lam = 3.3e-3, the
    best of Lee et al.'s grid on EWT dev, and the Hamming-loss ball) were
    chosen on EWT dev (BENCHMARKS.md)."""
    return Pegasos(lam=lam, k=k, averaged=averaged, radius=radius)


@register("mst_learners", "spacy_mstparse.Sparseptron.v1")
def make_sparseptron(
    B: positive_int = 20,
    shrink_every: positive_int = 32,
    sparse_epochs: positive_int = 5,
    debias: one_of("MIRA", "PA-I", "none") = "MIRA",
    C: Optional[positive_number] = None,
    overlap: one_of("first", "any", "refill") = "first",
    support: one_of("all", "gold") = "all",
    k: positive_int = 1,
):
    """Sparseptron (Smith & Martins 2013, Figure 3): perceptron steps with a
    budget of ``B`` feature groups (templates), shrunk every ``shrink_every``
    sentences, for ``sparse_epochs`` passes; then ``debias`` ("MIRA", "PA-I"
    or "none") retrains on the selected groups only. ``C`` clips the
    debiasing step (None = unclipped; PA-I needs a value). ``overlap``:
    a hashed bucket shared by several groups belongs to the "first" group
    that met it, or is kept if "any" of them is kept, or "refill": first
    while selecting, any while debiasing. ``support``: the feature space is
    every bucket a gold or predicted tree reaches ("all"), or only the gold
    training trees' buckets ("gold", as MSTParser's feature alphabet).
    ``k``: the k best trees are decoded and debiasing MIRA solves the
    k-constraint QP over them (the sparse stage steps on the best one)."""
    from .learners.sparseptron import Sparseptron

    if C is None and debias == "PA-I":
        raise ValueError("Sparseptron: debias = 'PA-I' needs a value for C")
    return Sparseptron(B=B, shrink_every=shrink_every, sparse_epochs=sparse_epochs,
                       debias=debias, C=float("inf") if C is None else C, overlap=overlap,
                       support=support, k=k)


@register("mst_learners", "spacy_mstparse.OneSlackSSVM.v1")
def make_one_slack_ssvm(lam: positive_number = 1e-3, eps: positive_number = 0.01,
                        max_inactive: positive_int = 50, keep_best: bool = True,
                        max_constraints: non_negative_int = 20,
                        cache_size: non_negative_int = 0, max_cache_rounds: positive_int = 200,
                        warm_start: non_negative_int = 0, verbose: bool = True,
                        exact_every: positive_int = 1, relative_eps: bool = False,
                        sweep_stop: number_in(0.0, 1.0) = 0.1, block_steps: positive_int = 1,
                        n_best: positive_int = 1):
    """1-slack structural SVM by cutting planes (Joachims et al. 2009), C = 1/lam:
    one constraint per decoding pass over the training set, stopping at
    duality gap <= eps. ``cache_size`` (0 = none): the last distinct
    loss-augmented trees kept per sentence; after each pass, constraints
    from the cache (at most ``max_cache_rounds``) while it gives one
    violated by more than eps. ``warm_start``: the first passes are online
    (block-coordinate Frank-Wolfe: each sentence's dual step right after its
    decoding; needs the cache); ``exact_every`` > 1: after them too, all but
    every ``exact_every``-th pass, which decodes with w fixed and certifies
    the gap (also the pass after an online one whose gap estimate is below
    the threshold). ``relative_eps``: stop at gap <= eps * primal.
    ``keep_best``: predict with the pass's w of the lowest primal objective
    so far (the iterates swing before convergence), else with the last w.
    ``max_constraints`` (0 = no limit) bounds the working set, i.e. memory:
    each constraint is a sparse vector over the buckets of a whole pass.
    ``verbose``: a progress line per pass on stderr (primal, dual, gap,
    cache hits, decoder passes, time). ``sweep_stop``: the cache sweeps also
    stop once their gap is at most this fraction of the pass's gap (or its
    online estimate). ``block_steps``: pairwise Frank-Wolfe steps per
    sentence block and sweep (the trees' features computed once).
    ``n_best``: loss-augmented trees decoded per sentence, all cached (the
    best is the Frank-Wolfe vertex; needs the cache)."""
    from .learners.one_slack import OneSlackSSVM

    return OneSlackSSVM(lam=lam, eps=eps, max_inactive=max_inactive, keep_best=keep_best,
                        max_constraints=max_constraints, cache_size=cache_size,
                        max_cache_rounds=max_cache_rounds, warm_start=warm_start,
                        verbose=verbose, exact_every=exact_every, relative_eps=relative_eps,
                        sweep_stop=sweep_stop, block_steps=block_steps, n_best=n_best)


@register("mst_features", "spacy_mstparse.GraphFeatures.v2")
def make_graph_features(
    tag_columns: TAG_COLUMNS_OR_AUTO = "auto",
    use_morph: USE_MORPH = "auto",
    n_buckets: TABLE_SIZE = DEFAULT_N_BUCKETS,
    direction_backoff: bool = True,
    cluster_bits: CLUSTER_BITS = 0,
    sibling_stops: bool = False,
    supertags: bool = False,
    lemma: LEMMA = "auto",
) -> FeatureConfig:
    """What the graph parser's factors read and the table they hash into:
    the first-order arc features (McDonald et al. 2005, Table 1) and, at
    order 2 and 3, the sibling (McDonald & Pereira 2006) and grandparent
    (Carreras 2007) features, over the same tag rows and weight table.

    tag_columns: "upos", "xpos" or "both" (which tags feed the POS templates),
        or "auto": both when the treebank's XPOS says more than its UPOS
        (and its FEATS, when the features read them), else the one given
        (chosen at ``initialize``; features/selection.py).
    use_morph: FEATS features of head and child (Nguyen et al. 2007), in the
        arc features and the labeler: true (every key), false, a list of keys
        (e.g. ["Case", "VerbForm"]), or "auto": the keys that tell the
        training treebank's labels apart beyond its tags.
    lemma: read each word's lemma in place of its 5-character prefix where the
        two differ (true / false), or "auto": when the treebank gives lemmas
        that differ from the words often (an inflecting language).
    n_buckets: size of the hashed weight table (a power of two).
    direction_backoff: conjoin every first-order feature with the attachment
        direction alone too, besides the plain feature and its direction +
        distance conjunction (+0.24 UAS on EWT dev on average, about 1.27x
        the parse time).
    cluster_bits: 0, or a tag column of the first ``cluster_bits`` bits of
        each word's Brown cluster path (Koo et al. 2008; 64 = the whole path),
        read at ``initialize`` (its ``clusters`` setting) and saved with the model.
    sibling_stops: second order and above: also score each word's outermost
        dependent on each side, or that it has none (Koo & Collins 2010's
        stop factors: valency).
    supertags: a tag row of the dependency supertags an ``mst_supertagger``
        earlier in the pipeline predicted (``doc._.supertag_ids``; label, head
        direction and valence of each word, from the tok2vec's context).
    """
    return FeatureConfig(tag_columns, use_morph, n_buckets, direction_backoff, cluster_bits,
                         sibling_stops, supertags, lemma)


@register("mst_features", "spacy_mstparse.GraphFeatures.v1")
def make_graph_features_v1(
    tag_columns: TAG_COLUMNS = "both",
    use_morph: GIVEN_USE_MORPH = False,
    n_buckets: TABLE_SIZE = DEFAULT_N_BUCKETS,
    direction_backoff: bool = True,
    cluster_bits: CLUSTER_BITS = 0,
    sibling_stops: bool = False,
    supertags: bool = False,
) -> FeatureConfig:
    """``GraphFeatures.v2`` with its settings given (no ``auto``) and no
    ``lemma``: UPOS + XPOS and no FEATS unless set. Kept so its configs train
    as before."""
    check_tag_columns(tag_columns)
    return FeatureConfig(tag_columns, use_morph, n_buckets, direction_backoff, cluster_bits,
                         sibling_stops, supertags)


# GraphFeatures.v1's former name, kept so configs that use it train as before.
spacy.registry.mst_features.register("spacy_mstparse.FirstOrderFeatures.v2",
                                     func=make_graph_features_v1)


@register("mst_features", "spacy_mstparse.FirstOrderFeatures.v1")
def make_first_order_features_v1(
    tag_columns: TAG_COLUMNS = "both", use_morph: bool = False,
    n_buckets: TABLE_SIZE = DEFAULT_N_BUCKETS,
) -> FeatureConfig:
    """The first feature set: ``GraphFeatures.v1`` without ``direction_backoff``
    (the plain McDonald et al. 2005 conjunctions), clusters, stop factors or
    supertags. Kept so its configs and models still load and train exactly
    as before."""
    check_tag_columns(tag_columns)
    return FeatureConfig(tag_columns, use_morph, n_buckets, False)


@spacy.registry.callbacks("spacy_mstparse.calibrate_before_to_disk.v1")
def make_calibrate_before_to_disk(dev_corpus: str = "corpora.dev"):
    """``[training.before_to_disk]``: before a pipeline is saved, fit the
    temperatures of every ``mst_parser`` updated since its last evaluation
    (the final ``model-last`` of ``spacy train``) on the dev corpus, as its
    score in an evaluation would, so that they fit the weights saved."""
    return make_calibrate_before_to_disk_v2(dev_corpus, trim_strings=False)


@spacy.registry.callbacks("spacy_mstparse.calibrate_before_to_disk.v2")
def make_calibrate_before_to_disk_v2(dev_corpus: str = "corpora.dev",
                                     trim_strings: bool = False):
    """``calibrate_before_to_disk.v1``, and with ``trim_strings`` the
    pipeline is saved with only its components' labels in
    ``vocab/strings.json``, not the training words
    (``saved_strings.trimmed_for_saving``; the pipeline in training keeps
    them)."""
    def before_to_disk(nlp):
        from spacy.util import resolve_dot_names

        from .components.mst_calibration import calibrate_in_pipeline
        from .components.mst_parser import MSTParser
        from .saved_strings import trimmed_for_saving

        stale = [name for name, proc in nlp.pipeline
                 if isinstance(proc, MSTParser) and proc.is_initialized and not proc.calibrated]
        if stale:
            corpus, = resolve_dot_names(nlp.config.interpolate(), [dev_corpus])
            examples = list(corpus(nlp))
            for name in stale:
                calibrate_in_pipeline(nlp, name, examples)
        return trimmed_for_saving(nlp) if trim_strings else nlp
    return before_to_disk


@spacy.registry.callbacks("spacy_mstparse.tokenizer_cases_from_treebank.v1")
def make_tokenizer_cases_from_treebank(train_corpus: str = "corpora.train",
                                       min_share: unit_share = MIN_SHARE):
    """``[initialize] after_init``: give the tokenizer, as special cases, the
    treebank's split of every space-free string of the training corpus that
    its rules split otherwise (``tokenizer_cases``), so that raw text is
    cut into the treebank's words where training showed them. A language
    whose tokenizer takes no special cases (Chinese, Japanese, ...) keeps
    its own segmentation, said in one line."""
    def after_init(nlp):
        from spacy.training import Corpus
        from spacy.training.corpus import walk_corpus
        from spacy.util import resolve_dot_names
        from wasabi import msg

        if not hasattr(nlp.tokenizer, "add_special_case"):
            msg.info(f"Tokenizer: {type(nlp.tokenizer).__name__} ('{nlp.lang}') takes no special "
                     "cases; raw text keeps its segmentation")
            return nlp
        corpus, = resolve_dot_names(nlp.config.interpolate(), [train_corpus])
        docs = (corpus.read_docbin(nlp.vocab, walk_corpus(corpus.path, ".spacy"))
                if isinstance(corpus, Corpus) else (eg.reference for eg in corpus(nlp)))
        cases = learn_special_cases(nlp.tokenizer, docs, min_share)
        add_special_cases(nlp.tokenizer, cases)
        msg.info(f"Tokenizer: {len(cases)} special cases learned from the training "
                 f"treebank's words ({train_corpus})")
        return nlp
    return after_init

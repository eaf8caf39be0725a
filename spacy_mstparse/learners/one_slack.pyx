"""1-slack structural SVM trained by cutting planes with a cache of
loss-augmented trees (Joachims, Finley & Yu 2009, "Cutting-plane training
of structural SVMs", Algorithm 3 with Section 4.2's caching), the
comparison system of Lee et al. (2010).

Primal, with lam = 1/C and x_i(y) = phi(x_i, y_i) - phi(x_i, y):

    min_w  lam/2 ||w||^2 + (1/n) sum_i max_y [Delta(y_i, y) - w . x_i(y)]

(Delta = Hamming loss over heads). A decoding pass decodes every training
sentence loss-augmented with fixed w (the most violated tree of each) and
forms the aggregated constraint (a, g) = ((1/n) sum_i Delta_i, (1/n) sum_i
x_i); since w is fixed, the pass also gives P(w) exactly and the duality
gap P(w) - D(alpha): training stops when it is at most ``eps``. Otherwise
the constraint joins the working set W and the dual over W,

    max_alpha  sum_j alpha_j a_j - 1/(2 lam) ||sum_j alpha_j g_j||^2,
    alpha >= 0, sum_j alpha_j <= 1,          w = (1/lam) sum_j alpha_j g_j,

is solved to the tolerance ``qp_tol`` (one_slack_working_set holds W
and solves it).

With a cache (``cache_size`` > 0; Joachims et al. 2009, Section 4.2), every
decoded tree that violates its constraint is kept in a per-sentence cache
(one_slack_cache: trees as heads, features recomputed in C), and the
working set is every joint constraint the cache can form: one cached tree
(or the gold one) per sentence. The 1-slack dual over that working set
depends on alpha only through its per-sentence marginals beta_i(y) (the
linear term is (1/n) sum_i sum_y beta_i(y) Delta_i(y), and w = (1/(lam n))
sum_i sum_y beta_i(y) x_i(y)), so it is solved in that form by
block-coordinate pairwise Frank-Wolfe steps (Osokin et al. 2016: weight
moves from a tree in use to the most violated one, exact line search; plain
Frank-Wolfe steps zig-zag and stalled far from the optimum), the cached
trees as the oracle, in sweeps until the sweep's gap over the cache is
at most ``sweep_stop`` times the pass's gap (``_cache_sweeps``) or after
``max_cache_rounds``. A block update computes the features of the
sentence's cached trees once and may take ``block_steps`` pairwise steps
(the margins moved by gathers from each step's direction). ``n_best`` > 1
caches the sentence's runners-up of the loss-augmented k-best decoding too
(the best stays the Frank-Wolfe vertex). D = sum_i ell_i -
lam/2 ||w||^2 is exact, so P(w) - D is the certified gap. The cache bounds
the trees in use per sentence: too small a cache (5 on ten short
sentences) stalls the dual short of the optimum. Without the cache: the
plain algorithm, one aggregated constraint per pass.

Online passes (need the cache): the first ``warm_start`` passes and, after
them, all but every ``exact_every``-th pass decode with the current w and
take each sentence's block step at once, the decoded tree (or the gold one)
as the oracle (Lacoste-Julien et al. 2013, Algorithm 3), which uses every
decoding at once and is far faster per decoding pass than fixed-w passes;
the first is a warm start that trains as Pegasos-DP would, on the dual.
They give no exact P(w), only the sum of
the block gaps at decoding time (the estimate of Lacoste-Julien et al.,
reported as ``online_gap``); when it is below the stopping threshold the
next pass is exact, which certifies the gap (or not) with w fixed.
``relative_eps``: stop at gap <= eps * P(w) rather than gap <= eps.

Memory: the cache holds int32 heads (the gold and the cached tree, about
8 bytes per word each) and the encoded sentences, at most ``cache_size``
trees per sentence of which none is in use (beta > 0), else at most twice
that (reported in the history as cache_mb); three dense vectors of the
table's size (w in float64, a uint8 mark, a bool mask of changed buckets).
Without the cache, the working set holds at most ``max_constraints``
sparse constraints (its module says how).

Cutting-plane iterates are not monotone: with ``keep_best`` (default) the
model predicts with the iterate of the lowest exact primal objective seen
(known at the end of each decoding pass; w = 0 is not a candidate), else
with the last w.

Inside ``spacy train`` the component feeds sentences in batches: the learner
accumulates the constraint over |D| sentences (``begin_training`` tells it
|D|), keeps w fixed meanwhile (warm-start passes excepted), and closes the
pass at its last sentence; the trainer hands over each sentence with its
trees (``note_tree``), cached under ``Sentence.key`` as spaCy shuffles the
order. After convergence the trainer stops decoding.
``spacy_mstparse.graph.training.train_one_slack`` runs it over a list of
sentences outside a pipeline, through the same training loop.
"""
import sys
import time

import numpy

from libc.math cimport isfinite
from libc.stdint cimport uint64_t

from .base cimport Learner
from .one_slack_cache import TreeCache
from .one_slack_working_set import WorkingSet
from .weight_table cimport WeightTable


cdef class OneSlackSSVM(Learner):
    """1-slack structural SVM (cutting planes, cache of loss-augmented trees)
    with regulariser ``lam`` (C = 1/lam)."""

    cdef readonly double lam
    cdef readonly double eps
    cdef readonly double qp_tol
    cdef readonly int max_inactive
    cdef readonly int max_constraints
    cdef readonly int cache_size
    cdef readonly int max_cache_rounds
    cdef readonly int warm_start
    cdef readonly int exact_every
    cdef readonly bint relative_eps
    cdef readonly double sweep_stop
    cdef readonly int block_steps
    cdef bint _certify_next
    cdef double _online_gap
    cdef readonly bint verbose
    cdef readonly long long n_train
    cdef readonly long long n_seen      # sentences of the current pass
    cdef readonly bint converged
    cdef readonly int iteration         # QP solves (constraints added)
    cdef readonly int n_passes          # decoding passes completed
    cdef readonly long long n_decoded   # sentences decoded
    cdef readonly long long cache_hits  # constraints from the cache
    cdef object _w
    cdef object _changed                # the cache's sweeps: buckets of w changed
    cdef object _working_set            # no cache: the cutting planes
    cdef object _cache
    cdef object _features
    cdef dict _noted
    cdef object _mark
    cdef double _loss_sum
    cdef double _margin_sum
    cdef double _dual
    cdef object _t0
    cdef public list history
    cdef readonly bint keep_best
    cdef readonly double best_primal
    cdef readonly int best_iteration
    cdef object _best_w

    def __init__(self, double lam=1e-3, double eps=0.01, double qp_tol=-1.0,
                 int max_inactive=50, bint keep_best=True, int max_constraints=0,
                 int cache_size=0, int max_cache_rounds=200, int warm_start=0,
                 bint verbose=False, int exact_every=1, bint relative_eps=False,
                 double sweep_stop=0.1, int block_steps=1, int n_best=1):
        if not isfinite(lam) or lam <= 0.0:
            raise ValueError(f"OneSlackSSVM: lam must be finite and > 0, got {lam}")
        if not (eps > 0.0):
            raise ValueError(f"OneSlackSSVM: eps must be > 0, got {eps}")
        if max_inactive < 1:
            raise ValueError(f"OneSlackSSVM: max_inactive must be >= 1, got {max_inactive}")
        if max_constraints < 0:
            raise ValueError(f"OneSlackSSVM: max_constraints must be >= 0, got {max_constraints}")
        for name, value in (("cache_size", cache_size), ("max_cache_rounds", max_cache_rounds),
                            ("warm_start", warm_start), ("exact_every", exact_every - 1)):
            if value < 0:
                raise ValueError(f"OneSlackSSVM: {name} must be >= 0, got {value}")
        if not (0.0 <= sweep_stop <= 1.0):
            raise ValueError(f"OneSlackSSVM: sweep_stop must be in [0, 1], got {sweep_stop}")
        if n_best < 1:
            raise ValueError(f"OneSlackSSVM: n_best must be >= 1, got {n_best}")
        if n_best > 1 and not cache_size:
            raise ValueError("OneSlackSSVM: n_best > 1 needs the cache (cache_size >= 1)")
        if block_steps < 1:
            raise ValueError(f"OneSlackSSVM: block_steps must be >= 1, got {block_steps}")
        if warm_start and not cache_size:
            raise ValueError("OneSlackSSVM: warm_start needs the cache (cache_size >= 1)")
        if exact_every > 1 and not cache_size:
            raise ValueError("OneSlackSSVM: exact_every > 1 needs the cache (cache_size >= 1)")
        self.lam = lam
        self.eps = eps
        self.qp_tol = qp_tol if qp_tol > 0.0 else eps / 100.0
        self.max_inactive = max_inactive
        self.max_constraints = max_constraints
        self.cache_size = cache_size
        self.max_cache_rounds = max_cache_rounds
        self.warm_start = warm_start
        self.exact_every = exact_every
        self.relative_eps = relative_eps
        self.sweep_stop = sweep_stop
        self.block_steps = block_steps
        self.verbose = verbose
        self.keep_best = keep_best
        self.loss_augmented = True
        self.k_best = n_best   # the trainer decodes the n best loss-augmented trees
        self.n_train = 0
        self._working_set = None
        self.history = []
        self.best_primal = float("inf")
        self.best_iteration = -1

    @property
    def C(self):
        return 1.0 / self.lam

    def begin_training(self, features, list gold, int order=1):
        """Called at initialization: a pass is ``len(gold)`` sentences."""
        if not gold:
            raise ValueError("OneSlackSSVM: no gold training sentences")
        if self.cache_size and order != 1:
            raise ValueError(f"OneSlackSSVM: the cache (cache_size = {self.cache_size}) "
                             f"serves first-order models only, not order = {order}")
        self.begin(features.n_buckets, len(gold), features)

    def begin(self, long long n_buckets, long long n_train, features=None):
        """Start training over ``n_train`` sentences per pass; ``features``
        (the model's first-order features) for the cache."""
        if n_train < 1:
            raise ValueError(f"OneSlackSSVM: n_train must be >= 1, got {n_train}")
        if n_buckets > (1 << 32):
            raise ValueError(f"OneSlackSSVM: at most 2^32 buckets, got {n_buckets}")
        if self.cache_size and features is None:
            raise ValueError("OneSlackSSVM: the cache needs the model's features (begin_training)")
        self.n_train = n_train
        self._w = numpy.zeros(n_buckets, dtype=numpy.float64)
        if self.cache_size:
            self._working_set = None
            self._cache = TreeCache(self.cache_size, features)
            self._mark = numpy.zeros(n_buckets, dtype=numpy.uint8)
            self._changed = numpy.zeros(n_buckets, dtype=bool)
        else:
            self._working_set = WorkingSet(n_buckets, self.lam, self.qp_tol, self.max_inactive,
                                           self.max_constraints)
            self._cache = self._mark = self._changed = None
        self._features = features
        self._noted = {}
        self.n_seen = 0
        self._loss_sum = 0.0
        self._margin_sum = 0.0
        self._dual = 0.0
        self.converged = False
        self.iteration = 0
        self.n_passes = 0
        self._certify_next = False
        self._online_gap = 0.0
        self.n_decoded = 0
        self.cache_hits = 0
        self.history = []
        self.best_primal = float("inf")
        self.best_iteration = -1
        self._best_w = None
        self._t0 = time.perf_counter()

    def note_tree(self, sentence, heads):
        """The trees of a sentence's constraint, gold first (the cache's input)."""
        if self._cache is not None:
            self._noted.setdefault(id(sentence), []).append(heads)

    @property
    def warm(self):
        """Whether the current pass is online (w moves during it): a warm-start
        pass, or after them a pass that is not an ``exact_every``-th one
        (unless the last online pass's gap estimate asked for certification)."""
        if self.n_passes < self.warm_start:
            return True
        if self._certify_next or self.exact_every == 1:
            return False
        return (self.n_passes - self.warm_start) % self.exact_every != self.exact_every - 1

    def step(self, WeightTable table, list batch):
        """Accumulate the loss-augmented differences ``(idx, val, n_wrong[,
        sentence])`` of a batch; w stays fixed until the pass of |D| sentences
        is complete (except in warm-start passes), then the QP is solved.
        With the sentence, the trees ``note_tree`` was given for it (gold,
        predicted) go to the cache."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong, total_wrong = 0
        if self._w is None:
            raise ValueError(
                "OneSlackSSVM: call begin_training() first (nlp.initialize does it for mst_parser)")
        if table.n_buckets != self._w.shape[0]:
            raise ValueError("OneSlackSSVM: weight table size differs from begin()")
        cdef double margin
        cdef bint warm = self.warm
        cdef bint stepped = False
        info = None
        extra = None
        for item in batch:
            if self.k_best > 1:
                # (the n best constraints, best first, ..., sentence): the
                # best is the sentence's most violated tree, the others join
                # its cache
                extra = [c[2] for c in item[1:len(item) - 1] if c[2] > 0]
                item = (*item[0], item[len(item) - 1])
            idx, val, n_wrong = item[0], item[1], item[2]
            noted = self._noted.pop(id(item[3]), None) if len(item) > 3 else None
            total_wrong += n_wrong
            self.n_decoded += 1
            if idx.shape[0] > 0:
                margin = table.dot(idx, val)
                # The gold tree is a candidate too (violation 0): when the
                # decoder's tree violates less, e.g. a non-projective gold
                # tree that Eisner cannot return, the gold tree is this
                # sentence's part of the most violated joint labelling.
                if n_wrong - margin > 0.0:
                    self._loss_sum += n_wrong
                    self._margin_sum += margin
                    if self._cache is None:
                        self._working_set.accumulate(idx, val)
                    elif noted is not None and len(noted) >= 2:
                        if extra:
                            # noted: gold, then the trees with n_wrong > 0 in
                            # order; the runners-up go in first, the best is
                            # the newest tree
                            for tree, loss in zip(noted[2:], extra):
                                self._cache.add(item[3].key(), item[3], noted[0], tree, loss)
                        self._cache_add(table, item[3], noted[0], noted[1], n_wrong, warm)
                        stepped = True
            if warm and not stepped and len(item) > 3 and self._cache is not None:
                # no violated tree decoded: the block's step (on a cached
                # sentence), the gold tree or a cached one as its oracle
                self._block_step(table, item[3].key())
            stepped = False
            self.n_seen += 1
            if self.n_seen == self.n_train:
                info = self.end_pass(table)
                warm = self.warm
        return {"n_sentences": len(batch), "n_wrong": total_wrong, "pass_end": info}

    def end_pass(self, WeightTable table):
        """Close the pass: record P(w), D(alpha) and the gap; unless converged,
        add the aggregated constraint, re-solve the dual and set w, then run
        the cache rounds."""
        cdef double n = <double>self.n_seen
        if self.n_seen == 0:
            raise ValueError("OneSlackSSVM: end_pass() before any sentence of the pass")
        a_new = self._loss_sum / n
        hinge = max(0.0, a_new - self._margin_sum / n)   # every term is > 0 (step)
        sq_w = table.sq_norm()
        exact = not self.warm
        if self._cache is not None:
            self._dual = self._cache.dual_linear() - 0.5 * self.lam * float(self._w @ self._w)
        primal = 0.5 * self.lam * sq_w + hinge if exact else None
        gap = primal - self._dual if exact else None
        online_gap = None if exact else self._online_gap
        record = {"iteration": self.iteration, "pass": self.n_passes + 1, "exact": exact,
                  "primal": primal, "dual": self._dual, "gap": gap,
                  "relative_gap": gap / primal if exact and primal > 0 else None,
                  "online_gap": online_gap, "hinge": hinge, "loss": a_new}
        # (w = 0 before the first constraint is not a candidate)
        if exact and self.keep_best and self.iteration > 0 and primal < self.best_primal:
            self.best_primal = primal
            self.best_iteration = self.iteration
            self._best_w = table.current()
        if exact and gap <= self._threshold(primal):
            self.converged = True
        elif exact and not self.converged and self._cache is None:
            self._add_constraint(table, a_new, n)
        if self._working_set is not None:
            self._working_set.clear_pass()
        sweeps, cache_gap = 0, None
        sweep_start = time.perf_counter()
        if not self.converged and self._cache is not None:
            sweeps, cache_gap = self._cache_sweeps(table, gap if exact else online_gap)
        sweep_seconds = time.perf_counter() - sweep_start
        self.n_passes += 1
        # an online pass whose estimate is below the threshold: certify next
        self._certify_next = (not exact and self._cache is not None
                              and online_gap <= self._threshold(self._dual + online_gap))
        self._online_gap = 0.0
        record.update({
            "cache_sweeps": sweeps, "cache_gap": cache_gap, "dual_after": self._dual,
            "n_constraints": len(self._working_set) if self._working_set is not None else 0,
            "decoder_passes": self.n_decoded / n,
            "cached_trees": self._cache.n_entries if self._cache is not None else 0,
            "cache_mb": self._cache.nbytes / 2**20 if self._cache is not None else 0.0,
            "working_set_mb": (self._working_set.nbytes / 2**20
                               if self._working_set is not None else 0.0),
            "sweep_seconds": sweep_seconds, "seconds": time.perf_counter() - self._t0})
        self.history.append(record)
        if self.verbose:
            print(progress_line(record), file=sys.stderr, flush=True)
        self.n_seen = 0
        self._loss_sum = 0.0
        self._margin_sum = 0.0
        self._noted = {}
        return record

    def _threshold(self, double primal):
        """The stopping threshold on the gap: eps, or eps * primal (relative_eps)."""
        return self.eps * primal if self.relative_eps else self.eps

    def slack(self):
        """The working set's slack at the current w: max(0, max_j a_j - w . g_j)
        (0 with the cache)."""
        return self._working_set.slack() if self._working_set is not None else 0.0

    def _cache_add(self, WeightTable table, sentence, gold, tree, double loss, bint warm):
        """A decoded tree joins its sentence's cache; in a warm-start pass
        the sentence's block step follows at once (w moves), and the cache
        is cut back to ``cache_size`` trees (in other passes at the pass end)."""
        if self.n_decoded == 1 and table.sq_norm() > 0.0 and table.is_plain():
            table.scale_by(0.0)   # w starts at 0 = the dual's empty point
        key = sentence.key()
        self._cache.add(key, sentence, gold, tree, loss)
        if warm:
            self.iteration = max(self.iteration, 1)   # w moves from 0
            changed = self._cache.evict(key, self._w, self.lam, <double>self.n_train)
            self._block_step(table, key, changed)

    def _block_step(self, WeightTable table, key, changed=None):
        """The block step of a cached sentence in an online pass (w in the
        table updated); its gap joins the pass's estimate."""
        if key not in self._cache:
            return
        gap, ids = self._cache.block_update(key, self._w, self.lam, <double>self.n_train,
                                            self._mark, self.block_steps)
        self._online_gap += gap
        self._sync(table, ids if changed is None else numpy.concatenate([changed, ids]))

    def _cache_sweeps(self, WeightTable table, pass_gap=None):
        """Block-coordinate Frank-Wolfe sweeps over the cache (its trees are
        the working set) until their duality gap is at most a tenth of the
        stopping threshold or ``sweep_stop`` times ``pass_gap`` (the decoding
        pass's gap or its estimate), or ``max_cache_rounds`` sweeps; w written
        into the table. (Near convergence the cache's gap falls below half
        the threshold long before the decoder's does: stopping there left one
        sweep a pass and the certified gap stalled above the threshold.) The
        first sweep visits every sentence; the later ones only those whose
        block gap at the last sweep was at least half the mean.
        Returns (sweeps, the last sweep's gap)."""
        cdef double n = <double>self.n_train
        changed = self._changed   # all False between sweeps
        changed[self._cache.evict_all(self._w, self.lam, n).astype(numpy.intp)] = True
        gap, sweeps = None, 0
        cdef double stop = 0.1 * self._threshold(self._dual)
        if pass_gap is not None:
            # the cache's own gap far below the decoder's: more sweeps barely
            # move the dual; the next decoding pass adds what is missing
            stop = max(stop, self.sweep_stop * pass_gap)
        cdef double skip = 0.0
        while sweeps < self.max_cache_rounds:
            gap = self._cache.sweep(self._w, self.lam, n, self._mark, changed, self.block_steps,
                                    skip)
            sweeps += 1
            if gap <= stop:
                break
            # later sweeps step on the blocks of at least half the mean gap
            skip = 0.5 * gap / len(self._cache)
        self._sync_mask(table, changed)
        self._dual = self._cache.dual_linear() - 0.5 * self.lam * float(self._w @ self._w)
        self.cache_hits += sweeps
        self.iteration += sweeps   # dual updates
        return sweeps, gap

    def _sync_mask(self, WeightTable table, changed):
        """The table's w on the buckets of the bool mask ``changed`` (cleared
        here), a slice of the table at a time (bounded scratch memory)."""
        cdef Py_ssize_t start, step = 1 << 18
        for start in range(0, changed.shape[0], step):
            ids = numpy.flatnonzero(changed[start:start + step])
            if ids.shape[0]:
                ids += start
                table.assign(ids.astype(numpy.uint64), self._w[ids])
                changed[ids] = False

    def _sync(self, WeightTable table, ids):
        """The table's w on ``ids`` (uint64) from the learner's float64 w."""
        if ids.shape[0]:
            ids = numpy.ascontiguousarray(ids, dtype=numpy.uint64)
            table.assign(ids, self._w[ids.astype(numpy.intp)])

    def _add_constraint(self, WeightTable table, double a_new, double n):
        """The pass's aggregated constraint joins the working set; the dual
        is re-solved and w rewritten: O(table + total constraint size), on
        every bucket a constraint ever touched (elsewhere w is 0)."""
        if not len(self._working_set) and table.is_plain():
            # First constraint: w is 0 + nothing learnt yet, whatever the
            # table held before.
            table.scale_by(0.0)
        self._dual = self._working_set.add(a_new, n)
        self.iteration += 1
        support = self._working_set.weights_into(self._w)
        if not table.is_plain():
            # The learner never ticks or rescales the table; if someone else
            # did, the O(table) rewrite.
            table.restart_average(self._w)
            return
        table.assign(support, self._w[support])

    def predicts_with_average(self):
        """Never: the model is the QP's solution w (the table is not ticked)."""
        return False

    def finalize_weights(self, weights):
        """The weights to predict with: with ``keep_best``, those of the pass
        with the lowest primal objective so far (else ``weights``, the last w)."""
        if self.keep_best and self._best_w is not None:
            return self._best_w
        return weights

    @property
    def dual(self):
        return self._dual

    @property
    def alpha(self):
        """The working set's dual weights (empty with the cache)."""
        return self._working_set.alpha if self._working_set is not None else numpy.zeros(0)

    @property
    def cache(self):
        """The ``TreeCache`` (None without one)."""
        return self._cache

    @property
    def weights(self):
        """w = (1/lam) sum_j alpha_j g_j (float64), the dual's weight vector."""
        return numpy.array(self._w)

    def __repr__(self):
        return (f"OneSlackSSVM(lam={self.lam}, eps={self.eps}, qp_tol={self.qp_tol}, "
                f"cache_size={self.cache_size}, warm_start={self.warm_start}, "
                f"keep_best={self.keep_best})")


def progress_line(record):
    """One line of training output for a pass's history record."""
    if record["exact"]:
        head = (f"primal {record['primal']:.5f}  dual {record['dual']:.5f}  gap "
                f"{record['gap']:.5f} ({100 * record['relative_gap']:.2f}%)")
    else:
        est = record["online_gap"]
        head = (f"online pass  dual {record['dual']:.5f}  gap estimate {est:.5f} "
                f"({100 * est / max(1e-300, record['dual'] + est):.2f}%)")
    cache = ""
    if record["cache_gap"] is not None:
        cache = (f"  cache sweeps {record['cache_sweeps']} (gap {record['cache_gap']:.5f}, "
                 f"dual {record['dual_after']:.5f})")
    return (f"[one-slack] pass {record['pass']}: {head}{cache}  decoder passes "
            f"{record['decoder_passes']:.0f}  constraints {record['n_constraints']}  cache "
            f"{record['cached_trees']} trees {record['cache_mb']:.1f} MB  {record['seconds']:.1f} s")

# What the batch parse and the parallel training stage share: a sentence's
# factor scores in C, and the check of the sentences they are given.
from ..decoders.factors cimport CFactors
from ..features.first_order cimport FirstOrderFeatures
from ..features.grandparent cimport GrandparentFeatures
from ..features.second_order cimport SiblingFeatures
from ..features.sentence cimport Sentence
from ..features.weights cimport Weights

# The arc scores (sibling scores with ``sibling``, grandparent scores with
# ``grand``) of s under scale * w into new arrays held by ``out``, arcs
# pruned to ``keep`` heads per word (0: none; first order by the first-pass
# scores, else by the full arc scores). 0, or -1 out of memory (nothing held).
cdef int score_factors(FirstOrderFeatures first, SiblingFeatures sibling,
                       GrandparentFeatures grand, Sentence s, const Weights* w, float scale,
                       int keep, CFactors* out) noexcept nogil
cdef void free_factors(CFactors* f) noexcept nogil

# TypeError / ValueError unless every item is a Sentence with the features' tag rows.
cdef int check_sentences(list sentences, FirstOrderFeatures first) except -1

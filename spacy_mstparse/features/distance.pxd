"""Attachment direction and binned distance, shared by the feature extractors.

Every arc feature of McDonald et al. (2005) is also conjoined with the
direction of the attachment and the distance between the two words, binned
as in MSTParser: 1, 2, 3, 4, 5, 6-10, more than 10. The feature modules turn
these into the small integer codes they hash with a feature (each module
keeps its own code range so conjunctions of different templates never meet).
"""

cdef enum:
    N_DISTANCE_BINS = 7


cdef inline int distance_bin(int a, int b) noexcept nogil:
    """Bin of the distance |a - b| (a != b): 0..4 for 1..5, 5 for 6-10, 6 beyond."""
    cdef int dist = b - a if b > a else a - b
    if dist <= 5:
        return dist - 1
    if dist <= 10:
        return 5
    return 6


cdef inline int direction_distance(int a, int b) noexcept nogil:
    """Direction (b right of a, or left) and distance bin as 0..13."""
    return distance_bin(a, b) + (N_DISTANCE_BINS if b > a else 0)

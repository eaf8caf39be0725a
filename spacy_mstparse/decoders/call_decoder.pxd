"""Python entry shared by the decoders: validate a score matrix, run a C
decoder on it without the GIL, return the heads as an int32 numpy array.

Return codes of the C decoders (eisner_decode, chu_liu_edmonds_decode)."""

cdef enum:
    DECODE_OK = 0
    DECODE_NO_MEMORY = -1
    # Every tree of the decoder's search space uses a forbidden (-inf) arc.
    DECODE_NO_TREE = 1

ctypedef int (*decode_fn)(const float* scores, int n, int* heads, bint single_root) noexcept nogil


cdef inline object no_tree_error(str name, bint single_root, str space):
    from spacy_mstparse.decoders.trees import NoTreeError

    root = "single-root " if single_root else ""
    return NoTreeError(
        f"{name}: no tree satisfies the constraints: every {root}{space}tree uses a "
        "forbidden arc (score -inf)"
    )


cdef inline object call_decoder(decode_fn decode, object scores, bint single_root, str name,
                                str space=""):
    import numpy as np  # already loaded: a dictionary look-up

    arr = np.ascontiguousarray(scores, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(
            "scores must be a square (n+1) x (n+1) matrix (row/column 0 = "
            f"root, n >= 0), got an array of shape {arr.shape}"
        )
    cdef const float[:, ::1] view = arr
    cdef int n = <int>view.shape[0] - 1
    cdef int rc
    heads = np.empty(n + 1, dtype=np.int32)
    cdef int[::1] hv = heads
    with nogil:
        rc = decode(&view[0, 0], n, &hv[0], single_root)
    if rc == DECODE_NO_TREE:
        raise no_tree_error(name, single_root, space)
    if rc != DECODE_OK:
        raise MemoryError(f"{name}: could not allocate work memory for n={n}")
    return heads

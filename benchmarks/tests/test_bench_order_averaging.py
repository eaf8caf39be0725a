"""benchmarks/bench_order_averaging.py: its epoch orders are permutations of
the training set, and the reordered ones are reorderings of the plain one."""
import numpy as np
import pytest

from benchmarks.bench_order_averaging import order_function


@pytest.mark.parametrize("kind", ["s:0", "blk7:0", "buf13:0", "buf500:3"])
def test_orders_are_permutations(kind):
    orders = order_function(kind)
    for _ in range(3):  # a fresh order each epoch
        order = np.asarray(orders(50))
        assert sorted(order.tolist()) == list(range(50))


def test_reordered_orders_follow_the_plain_one():
    plain, blocks, buffered = order_function("s:2"), order_function("blk10:2"), order_function("buf5:2")
    for _ in range(2):
        p, b, s = plain(40), np.asarray(blocks(40)), np.asarray(buffered(40))
        # blocks: the same sentences in each block of 10, in another order
        for i in range(0, 40, 10):
            assert sorted(b[i:i + 10]) == sorted(p[i:i + 10])
        assert not np.array_equal(b, p)
        # buffer of 5: no sentence comes more than 5 places earlier than in the plain order
        position = {int(x): i for i, x in enumerate(p)}
        assert all(i >= position[int(x)] - 5 for i, x in enumerate(s[:35]))
        assert not np.array_equal(s, p)


def test_unknown_order_is_refused():
    with pytest.raises(ValueError, match="unknown order"):
        order_function("zz:1")

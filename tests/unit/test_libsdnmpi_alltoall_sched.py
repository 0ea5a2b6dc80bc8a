"""libsdnmpi (C): the steps of SDN_MPI_Alltoall's pairwise exchange (alltoall_sched.h), through
unit_tool (no MPI): shifts on any layout, the leaf grid on equal leaves. Pure: no mpirun."""
import json

import pytest

from libsdnmpi_harness import tool


def sched(sizes, grid=1):
    return json.loads(tool("a2a-sched", grid, *sizes))


def leaf_of(sizes):
    return [g for g, k in enumerate(sizes) for _ in range(k)]


def shift_of_step(k, p):
    return k if k <= p // 2 else p + p // 2 - k


LAYOUTS = [[1], [2], [1, 1], [2, 2], [2, 2, 2], [2, 2, 2, 2], [4, 4], [3, 3, 3], [2, 2, 2, 2, 2, 2],
           [4, 4, 4, 4], [3, 3], [1, 1, 1, 1], [3, 2, 3], [2, 1], [5], [8, 8, 8, 8], [16, 16, 16, 16]]


@pytest.mark.parametrize("sizes", LAYOUTS, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("grid", [0, 1])
def test_every_step_is_a_permutation_and_every_pair_sends_once(sizes, grid):
    out = sched(sizes, grid)
    p = sum(sizes)
    assert len(out["to"]) == len(out["from"]) == p - 1
    sent = set()
    for to, frm in zip(out["to"], out["from"]):
        assert sorted(to) == list(range(p))
        assert all(frm[to[q]] == q for q in range(p))
        assert all(to[q] != q for q in range(p))
        sent |= {(q, to[q]) for q in range(p)}
    assert len(sent) == p * (p - 1)


@pytest.mark.parametrize("sizes", LAYOUTS, ids=lambda s: "x".join(map(str, s)))
def test_the_grid_only_on_equal_leaves_of_two_or_more(sizes):
    out = sched(sizes, 1)
    equal = len(sizes) >= 2 and len(set(sizes)) == 1 and sizes[0] >= 2
    assert out["grid"] == ([len(sizes), sizes[0]] if equal else [0, 0])
    p = sum(sizes)
    for schedule in ([out] if not equal else []) + [sched(sizes, 0)]:
        assert schedule["grid"] == [0, 0]
        assert schedule["to"] == [[(q + shift_of_step(k, p)) % p for q in range(p)] for k in range(1, p)]


@pytest.mark.parametrize("sizes", [[2, 2], [2, 2, 2], [2, 2, 2, 2], [4, 4], [3, 3, 3], [4, 4, 4, 4],
                                   [2, 2, 2, 2, 2, 2], [8, 8, 8, 8]], ids=lambda s: "x".join(map(str, s)))
def test_grid_steps_are_one_way_and_fill_the_uplinks(sizes):
    """Each grid step either keeps every rank inside its leaf or sends every rank to another leaf,
    all of one leaf to the same leaf (so each leaf's m ranks use its uplinks at once); no cross
    step swaps blocks, an intra step only at lane shift m/2; and no two consecutive steps use one
    connection both ways (two steps are in flight at once by default)."""
    out = sched(sizes)
    leaf, m = leaf_of(sizes), sizes[0]
    intra = 0
    for to in out["to"]:
        inside = [leaf[to[q]] == leaf[q] for q in range(len(to))]
        assert all(inside) or not any(inside)
        swaps = [q for q in range(len(to)) if to[to[q]] == q]
        if all(inside):
            intra += 1
            assert not swaps or (m % 2 == 0 and all(to[q] % m == (q + m // 2) % m for q in swaps))
        else:
            assert not swaps
            for g in set(leaf):
                assert len({leaf[to[q]] for q in range(len(to)) if leaf[q] == g}) == 1
    assert intra == m - 1
    for a, b in zip(out["to"], out["to"][1:]):
        assert not [q for q in range(len(a)) if b[a[q]] == q]


def test_the_bench_layout():
    """The bench fabric's 4 leaves x 2 hosts: 6 cross steps, the intra-leaf swap fourth (between
    cross steps), and the halfway leaf shift twisted (rank 4 sends to 1, not back to 0)."""
    out = sched([2, 2, 2, 2])
    assert out["grid"] == [4, 2]
    assert out["to"][3] == [1, 0, 3, 2, 5, 4, 7, 6]
    assert out["to"][1] == [4, 5, 6, 7, 1, 0, 3, 2]

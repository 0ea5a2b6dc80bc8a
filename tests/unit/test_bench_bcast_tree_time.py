"""bench/bcast_tree_time.py: the Bcast tree planner's time on the largest fabrics up to a size."""
import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)

import bcast_tree_time


def test_it_times_every_tree_count_on_the_largest_fabrics_up_to_the_size(capsys):
    assert bcast_tree_time.main(["--repeat", "2", "--max-hosts", "16"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # the two 16-host fabrics (leaf-spine 2s/4l/4h and the k=4 fat-tree), 1, 2 and 8 trees each
    assert len(lines) == 2 * len(bcast_tree_time.TREES)
    assert all(", 16 hosts, " in line and "ms CPU" in line for line in lines)
    # 8 trees asked on 2 spines: 2 built (one per top switch with a distinct uplink)
    assert "leaf-spine 2s/4l/4h, 16 hosts, 8 tree(s) asked, 2 built" in lines[2]


def test_no_fabric_that_small_is_one_line(capsys):
    with pytest.raises(SystemExit):
        bcast_tree_time.main(["--max-hosts", "8"])
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("no fabric of bench/planner_scale.py has at most 8 hosts")

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import host_cc


def lists(tmp_path, allowed, available="reno cubic bbr"):
    a, v = tmp_path / "allowed", tmp_path / "available"
    a.write_text(allowed + "\n")
    v.write_text(available + "\n")
    return str(a), str(v)


def test_a_missing_name_is_added_and_the_old_list_put_back(tmp_path):
    a, v = lists(tmp_path, "reno bbr")
    cc = host_cc.AllowedCongestion("cubic", allowed=a, available=v).allow()
    assert open(a).read().split() == ["reno", "bbr", "cubic"]
    cc.restore()
    assert open(a).read().split() == ["reno", "bbr"]
    cc.restore()                                  # once
    assert open(a).read().split() == ["reno", "bbr"]


def test_a_listed_name_changes_nothing(tmp_path):
    a, v = lists(tmp_path, "reno bbr")
    cc = host_cc.AllowedCongestion("reno", allowed=a, available=v).allow()
    assert cc.old is None
    (tmp_path / "allowed").write_text("reno\n")    # someone else's later change is not undone
    cc.restore()
    assert open(a).read().split() == ["reno"]


def test_a_name_the_kernel_lacks_is_a_clear_error(tmp_path):
    a, v = lists(tmp_path, "reno bbr", available="reno bbr")
    with pytest.raises(RuntimeError, match="'cubic' is not available"):
        host_cc.AllowedCongestion("cubic", allowed=a, available=v).allow()
    assert open(a).read().split() == ["reno", "bbr"]

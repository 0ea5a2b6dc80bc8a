"""The operator's credential for mutating REST calls (controller/auth.py); the live DELETE call is
exercised in test_rpc_live_fuzz.py."""
import os
import stat

import pytest

from sdnmpi.controller import auth


def test_a_missing_token_file_is_created_private_with_256_random_bits(tmp_path):
    path = tmp_path / "etc" / "sdnmpi" / "operator-token"
    token = auth.load_or_create(str(path))
    assert len(token) == 64 and int(token, 16) >= 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert auth.load_or_create(str(path)) == token           # read back, not replaced
    assert auth.load_or_create(str(tmp_path / "other")) != token


@pytest.mark.parametrize("mode,content,reason", [
    (0o644, "a" * 32, "may be read by group or others"),
    (0o640, "a" * 32, "may be read by group or others"),
    (0o600, "short", "no usable token"),
    (0o600, "two words " * 4, "no usable token"),
    (0o600, "", "no usable token"),
])
def test_unusable_token_files_are_refused(tmp_path, mode, content, reason):
    path = tmp_path / "token"
    path.write_text(content)
    os.chmod(path, mode)
    with pytest.raises(ValueError, match=reason):
        auth.load_or_create(str(path))
    refused = auth.OperatorAuth.from_file(str(path))
    assert refused.token is None and reason in refused.problem
    assert refused.denial("Bearer " + content)[0] == 503


def test_denial_needs_the_exact_bearer_token(tmp_path):
    token = "t" * 40
    check = auth.OperatorAuth(token)
    assert check.denial("Bearer " + token) is None
    assert check.denial("bearer  %s " % token) is None
    for header in (None, "", "Bearer", "Bearer ", "Basic " + token, token, "Bearer " + token[:-1],
                   "Bearer " + token + "x", "Bearer " + token.upper()):
        status, reason = check.denial(header)
        assert status == 401 and reason, header

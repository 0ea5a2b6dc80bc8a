"""The operator credential of the REST API's mutating calls.

The operator's token is in a file that only root may read (``--sdnmpi-operator-token-file``,
default `DEFAULT_TOKEN_FILE`). If the file is missing, the controller creates it (mode 0600, its
directory 0700) with 256 random bits; an operator reads it from there, e.g.
``curl -X DELETE -H "Authorization: Bearer $(cat /etc/sdnmpi/operator-token)" ...``. A file that
group or others may read is refused, as ssh refuses such keys.

Every mutating REST handler is wrapped with `operator_only`: the request must carry
``Authorization: Bearer <token>``, or it gets 401; if the controller has no usable token, 503.
Read-only calls stay open. The handler's class needs an ``auth`` attribute (an `OperatorAuth`).
"""
import functools
import hmac
import json
import logging
import os
import secrets

from webob.response import Response

LOG = logging.getLogger(__name__)
DEFAULT_TOKEN_FILE = "/etc/sdnmpi/operator-token"
TOKEN_BYTES = 32
MIN_TOKEN = 16  # characters


def load_or_create(path):
    """The token in ``path``, creating the file if it is missing. Raises OSError or ValueError
    if the file cannot be created or read, is readable by group or others, or holds no token."""
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        os.makedirs(directory, mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(TOKEN_BYTES) + "\n")
        LOG.info("operator token created in %s (mode 0600)", path)
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o077:
        raise ValueError("%s may be read by group or others (mode %03o): chmod 600 it" % (path, mode))
    with open(path, encoding="utf-8") as src:
        token = src.read().strip()
    if len(token) < MIN_TOKEN or any(c.isspace() for c in token):
        raise ValueError("%s holds no usable token (one word of at least %d characters)" % (path, MIN_TOKEN))
    return token


class OperatorAuth:
    """Checks ``Authorization`` headers against the operator's token (None: no token usable,
    ``problem`` says why)."""

    def __init__(self, token, problem=None):
        self.token = token
        self.problem = problem

    @classmethod
    def from_file(cls, path):
        try:
            return cls(load_or_create(path))
        except (OSError, ValueError) as err:
            LOG.error("no operator token, mutating REST calls are refused: %s", err)
            return cls(None, str(err))

    def denial(self, header):
        """None if ``header`` (the Authorization header's value, or None) carries the operator's
        token; otherwise (HTTP status, reason)."""
        if self.token is None:
            return 503, "the controller has no operator token (see its log)"
        scheme, _, credential = (header or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not credential:
            return 401, "this call needs the operator's token: Authorization: Bearer <token>"
        if not hmac.compare_digest(credential.strip().encode(), self.token.encode()):
            return 401, "wrong operator token"
        return None


def operator_only(handler):
    """Decorator of a REST handler ``(self, req, **kwargs)`` that only the operator may call."""
    @functools.wraps(handler)
    def wrapper(self, req, **kwargs):
        denial = self.auth.denial(req.headers.get("Authorization"))
        if denial is not None:
            status, reason = denial
            LOG.warning("REST %s %s from %s refused: %s", req.method, req.path, req.remote_addr, reason)
            headers = [("WWW-Authenticate", 'Bearer realm="sdnmpi"')] if status == 401 else []
            return Response(status=status, content_type="application/json", charset="utf-8",
                            body=json.dumps({"error": reason}).encode(), headerlist=headers)
        return handler(self, req, **kwargs)
    return wrapper

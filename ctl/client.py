"""GETs JSON from the controller's REST API; every failure becomes one `ApiError` line."""
import http.client
import json
import logging
import re
import urllib.error
import urllib.parse
import urllib.request

LOG = logging.getLogger(__name__)
DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_TOKEN_FILE = "/etc/sdnmpi/operator-token"   # the controller's default (controller/auth.py)
WORD = re.compile(r"[\x21-\x7e]+")   # printable ASCII, no spaces: what a URL or a header's token may hold


class ApiError(Exception):
    """The controller could not be reached or answered with an error (exit code 1); ``status``
    is the HTTP status of an error answer (None if there was none)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class UsageError(Exception):
    """The command line asks for something impossible (exit code 2)."""


def check_url(url):
    """``url`` without a trailing slash; raises UsageError unless it is http(s)://HOST[:PORT][/PATH]
    (printable ASCII, a host name a resolver takes)."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # pylint: disable=pointless-statement  # raises ValueError on a bad port
    except ValueError as err:  # a bad port, "http://[::1" (Invalid IPv6 URL)
        raise UsageError("bad controller URL %r (%s)" % (url, err)) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not WORD.fullmatch(url):
        raise UsageError("bad controller URL %r (want http://HOST:PORT)" % url)
    try:
        parts.hostname.encode("idna")
    except UnicodeError as err:  # an empty or over-long label: "a..b", 64 letters
        raise UsageError("bad host name in controller URL %r (%s)" % (url, err)) from None
    return url.rstrip("/")


def check_token(token, source):
    """``token`` if a header can carry it as the controller's tokens are (one word, controller/auth.py);
    else ApiError naming where it came from (``source``)."""
    if not token:
        raise ApiError("no operator token in %s" % source)
    if not WORD.fullmatch(token):
        raise ApiError("the operator token in %s is not one word of printable ASCII" % source)
    return token


class Client:
    def __init__(self, url, timeout=5.0):
        self.url = check_url(url)
        self.timeout = timeout

    def get(self, path):
        """The decoded JSON answer to ``GET path``."""
        return self._request(urllib.request.Request(self.url + path), path)

    def put(self, path, body, token):
        """The decoded JSON answer to ``PUT path`` with JSON ``body``, as the operator (``token``)."""
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
        return self._request(req, path)

    def _request(self, req, path):
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as err:
            raise ApiError("%s: HTTP %d: %s" % (path, err.code, _error_text(err)), err.code) from None
        except urllib.error.URLError as err:
            raise ApiError("cannot reach the controller at %s: %s" % (self.url, err.reason)) from None
        except OSError as err:  # timeouts, resets
            raise ApiError("cannot reach the controller at %s: %s" % (self.url, err)) from None
        except http.client.HTTPException as err:  # not HTTP (BadStatusLine), cut short (IncompleteRead)
            raise ApiError("%s: the answer from %s is not HTTP or is cut short (%s: %.80r)" % (
                path, self.url, type(err).__name__, str(err))) from None
        try:
            return json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep
            raise ApiError("%s: the answer is not JSON" % path) from None


def _error_text(err):
    try:
        body = err.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return err.reason
    try:
        return json.loads(body)["error"]
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        return " ".join(body.split())[:200] or err.reason

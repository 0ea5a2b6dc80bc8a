"""The shapes of the controller's answers that sdnmpi-ctl renders, checked before ctl/render.py
sees them: an answer of another shape is `BadAnswer` (one line, exit code 1). Each shape holds
what the rendering reads and the types it needs (a count for "%d", a number for a rate, a string
where answers are sorted or joined); the rest is left alone. So an error while rendering a checked
answer is a bug of sdnmpi-ctl's own, which is not caught (a traceback).

A shape is a `Kind` (a JSON value of one kind), a dict (an object with those keys; `Opt` marks
one that may be missing), a one-item list (a list of items of that shape), `ListOf`, `MapOf` or
`Either`.
"""
import logging
import re

LOG = logging.getLogger(__name__)
MAX_INT = 2 ** 64   # an integer beyond 64 bits is no count or rate of the controller's (and may overflow a float)


class BadAnswer(Exception):
    """An answer of another shape than sdnmpi-ctl renders; ``str()`` says where and what."""


class Kind:
    def __init__(self, what, test):
        self.what, self.test = what, test

    def check(self, value, where):
        if not self.test(value):
            raise BadAnswer("%s is %s, not %s" % (where, _kind(value), self.what))


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and -MAX_INT < value < MAX_INT


ANY = Kind("any value", lambda v: True)
INT = Kind("an integer", _is_int)
NUMBER = Kind("a number", lambda v: isinstance(v, float) or _is_int(v))
STR = Kind("a string", lambda v: isinstance(v, str))
OBJECT = Kind("an object", lambda v: isinstance(v, dict))
NULL = Kind("null", lambda v: v is None)
INT_TEXT = re.compile(r"-?[0-9]{1,18}")   # an object's key that stands for an integer (a communicator)


class Opt:
    """An object's key that may be missing; present, its value has ``shape``."""

    def __init__(self, shape):
        self.shape = shape


class ListOf:
    def __init__(self, item, length=None):
        self.item, self.length = item, length

    def check(self, value, where):
        if not isinstance(value, list):
            raise BadAnswer("%s is %s, not a list" % (where, _kind(value)))
        if self.length is not None and len(value) != self.length:
            raise BadAnswer("%s has %d items, not %d" % (where, len(value), self.length))
        for i, item in enumerate(value):
            check(item, self.item, "%s[%d]" % (where, i))


class MapOf:
    """An object with any keys (matching ``keys``, a regular expression, if given) and values of
    one shape."""

    def __init__(self, value, keys=None):
        self.value, self.keys = value, keys

    def check(self, value, where):
        OBJECT.check(value, where)
        for key, inner in value.items():
            if self.keys is not None and not self.keys.fullmatch(key):
                raise BadAnswer("%s has the key %.40r, not %s" % (where, key, self.keys.pattern))
            check(inner, self.value, "%s[%.40r]" % (where, key))


class Either:
    def __init__(self, *shapes):
        self.shapes = shapes

    def check(self, value, where):
        for shape in self.shapes[:-1]:
            try:
                return check(value, shape, where)
            except BadAnswer:
                pass
        return check(value, self.shapes[-1], where)


def _kind(value):
    if isinstance(value, int) and not isinstance(value, bool) and not _is_int(value):
        return "an integer over 64 bits"
    for kind, what in ((bool, "true or false"), (int, "an integer"), (float, "a number"), (str, "a string"),
                       (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return what
    return "null" if value is None else type(value).__name__


def check(value, shape, where="answer"):
    """``value`` if it has ``shape``; else BadAnswer naming the first place that differs."""
    if isinstance(shape, dict):
        OBJECT.check(value, where)
        for key, inner in shape.items():
            if key in value:
                check(value[key], inner.shape if isinstance(inner, Opt) else inner, "%s.%s" % (where, key))
            elif not isinstance(inner, Opt):
                raise BadAnswer("%s has no %s" % (where, key))
    elif isinstance(shape, list):
        ListOf(shape[0]).check(value, where)
    else:
        shape.check(value, where)
    return value


END = Either({"host": ANY}, {"dpid": ANY, "port": ANY})
LINK = {"id": STR, "kind": ANY, "a": END, "b": END, "bps": ListOf(NUMBER, length=2),   # [A->B, B->A]
        "utilization": Either(NULL, NUMBER)}
LINKS = [LINK]
TOPOLOGY = {"switches": [{"dpid": ANY, "tier": ANY, "ports": [ANY], "flows": ANY, "groups": ANY}],
            "links": LINKS,
            "hosts": [{"name": ANY, "ip": ANY, "mac": ANY, "dpid": ANY, "port": ANY, "source": ANY}]}
JOBS = [{"job": ANY, "hosts": [STR], "comms": OBJECT, "trees": [ANY], "routes": [ANY], "lease_s": NUMBER}]
JOB = {"job": INT, "hosts": [STR], "lease_s": NUMBER,
       "comms": MapOf({"planner": ANY, "steps": Opt([ANY]), "flows": ANY, "max_load": [ANY],
                       "lower_bound": [ANY]}, keys=INT_TEXT),
       "trees": [{"comm": ANY, "root": ANY, "group": ANY, "port": INT, "group_id": INT, "top": ANY,
                  "switches": MapOf([ANY])}],
       "routes": [{"dpid": STR, "src": ANY, "dst": ANY, "port": INT}]}
ROUTING = {"routing": ANY, "policies": [STR]}
ROUTING_SET = {"routing": ANY, "previous": ANY, "changed": ANY}
WATCH = {"routing": ANY, "switches": [ANY], "links": LINKS, "hosts": [ANY],
         "jobs": [{"job": ANY, "hosts": [ANY], "ranks": OBJECT, "comms": [ANY], "trees": ANY, "flows": ANY}],
         "counters": {"packet_in": {"total": INT}, "rpc": {"requests": INT, "errors": INT}, "switch_errors": INT,
                      "route_recomputes": INT}}

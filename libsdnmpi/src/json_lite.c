/* json_lite.c -- see json_lite.h. */
#include "json_lite.h"

#include <string.h>

static int fail(struct json_lite *r, const char *why)
{
    if (r->err == NULL)
        r->err = why;
    return -1;
}

static void ws(struct json_lite *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* The next non-blank character (not consumed), or -1 at the end. */
static int peek(struct json_lite *r)
{
    ws(r);
    return r->p < r->end ? (unsigned char)*r->p : -1;
}

void json_lite_init(struct json_lite *r, const char *text, size_t len)
{
    memset(r, 0, sizeof *r);
    r->p = text;
    r->end = text + len;
}

static int open_(struct json_lite *r, char ch)
{
    if (r->err)
        return -1;
    if (peek(r) != ch)
        return fail(r, ch == '{' ? "expected an object" : "expected an array");
    if (r->depth >= JSON_LITE_MAX_DEPTH)
        return fail(r, "nested too deeply");
    r->p++;
    r->first[r->depth++] = 1;
    return 0;
}

int json_lite_object(struct json_lite *r)
{
    return open_(r, '{');
}

int json_lite_array(struct json_lite *r)
{
    return open_(r, '[');
}

/* Before the next element of the innermost container: 1 if one follows, 0 at `close` (consumed). */
static int next(struct json_lite *r, char close)
{
    if (r->err)
        return -1;
    if (r->depth == 0)
        return fail(r, "not inside a container");
    int ch = peek(r);
    if (ch == close) {
        r->p++;
        r->depth--;
        return 0;
    }
    if (!r->first[r->depth - 1]) {
        if (ch != ',')
            return fail(r, "expected ',' or the end of a container");
        r->p++;
    }
    r->first[r->depth - 1] = 0;
    return 1;
}

int json_lite_more(struct json_lite *r)
{
    int rc = next(r, ']');
    if (rc == 1 && peek(r) == ']')
        return fail(r, "trailing comma");
    return rc;
}

/* A string (the opening quote next); its raw bytes (escapes kept as escapes, which never match a
 * wanted key) into key[cap] if key != NULL. */
static int string(struct json_lite *r, char *key, size_t cap)
{
    if (peek(r) != '"')
        return fail(r, "expected a string");
    r->p++;
    size_t n = 0;
    while (r->p < r->end && *r->p != '"') {
        unsigned char ch = (unsigned char)*r->p;
        if (ch < 0x20)
            return fail(r, "control character in a string");
        if (ch == '\\') {
            if (r->end - r->p < 2)
                break;
            if (key != NULL && n + 1 < cap)
                key[n++] = '\\';
            r->p++;
        }
        if (key != NULL && n + 1 < cap)
            key[n++] = *r->p;
        r->p++;
    }
    if (r->p >= r->end)
        return fail(r, "unterminated string");
    r->p++;
    if (key != NULL && cap > 0)
        key[n] = '\0';
    return 0;
}

int json_lite_key(struct json_lite *r, char *key, size_t cap)
{
    int rc = next(r, '}');
    if (rc != 1)
        return rc;
    if (string(r, key, cap))
        return -1;
    if (peek(r) != ':')
        return fail(r, "expected ':' after a key");
    r->p++;
    return 1;
}

int json_lite_u64(struct json_lite *r, uint64_t *out)
{
    if (r->err)
        return -1;
    if (peek(r) < '0' || peek(r) > '9')
        return fail(r, "expected a non-negative integer");
    uint64_t v = 0;
    const char *start = r->p;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
        unsigned d = (unsigned)(*r->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return fail(r, "integer too large");
        v = v * 10 + d;
        r->p++;
    }
    if (*start == '0' && r->p - start > 1)
        return fail(r, "leading zero");
    if (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E'))
        return fail(r, "expected an integer, not a fraction");
    *out = v;
    return 0;
}

static int literal(struct json_lite *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return fail(r, "invalid literal");
    r->p += n;
    return 0;
}

static int number(struct json_lite *r)
{
    const char *start = r->p;
    if (r->p < r->end && *r->p == '-')
        r->p++;
    int digits = 0;
    while (r->p < r->end && ((*r->p >= '0' && *r->p <= '9') || *r->p == '.' || *r->p == 'e'
                             || *r->p == 'E' || *r->p == '+' || *r->p == '-')) {
        digits += *r->p >= '0' && *r->p <= '9';
        r->p++;
    }
    return digits > 0 && r->p > start ? 0 : fail(r, "invalid number");
}

int json_lite_skip(struct json_lite *r)
{
    if (r->err)
        return -1;
    int ch = peek(r);
    int rc;
    switch (ch) {
    case '{': {
        if (json_lite_object(r))
            return -1;
        while ((rc = json_lite_key(r, NULL, 0)) == 1)
            if (json_lite_skip(r))
                return -1;
        return rc;
    }
    case '[':
        if (json_lite_array(r))
            return -1;
        while ((rc = json_lite_more(r)) == 1)
            if (json_lite_skip(r))
                return -1;
        return rc;
    case '"':
        return string(r, NULL, 0);
    case 't':
        return literal(r, "true");
    case 'f':
        return literal(r, "false");
    case 'n':
        return literal(r, "null");
    case -1:
        return fail(r, "unexpected end of text");
    default:
        return number(r);
    }
}

int json_lite_end(struct json_lite *r)
{
    if (r->err)
        return -1;
    return peek(r) == -1 ? 0 : fail(r, "text after the document");
}

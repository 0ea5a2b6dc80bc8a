/* json_lite.h -- a small, bounded pull reader for JSON text in memory (RFC 8259 syntax), enough to
 * pick a few fields out of the profiler's rank files (trace_read.c). No allocation, nesting depth
 * at most JSON_LITE_MAX_DEPTH, keys longer than the caller's buffer are truncated (and so never
 * match a wanted key). The structure is checked strictly; values that are skipped are checked
 * loosely (a number's characters, a string's quotes and control characters, not its escapes).
 * Every function returns -1 on a syntax error or an unsupported value and sets r->err to a short
 * reason; after that every call fails.
 *
 *   struct json_lite r; json_lite_init(&r, text, len);
 *   json_lite_object(&r);                            '{'
 *   while ((rc = json_lite_key(&r, key, sizeof key)) == 1) { ... read or skip the value ... }
 *   json_lite_array(&r);                             '['
 *   while ((rc = json_lite_more(&r)) == 1) { ... read one element ... }
 *   json_lite_end(&r);                               only white space left
 */
#ifndef SDNMPI_JSON_LITE_H
#define SDNMPI_JSON_LITE_H

#include <stddef.h>
#include <stdint.h>

#define JSON_LITE_MAX_DEPTH 32

struct json_lite {
    const char *p, *end;
    const char *err;      /* NULL, or why reading stopped */
    int depth;            /* open objects and arrays */
    int first[JSON_LITE_MAX_DEPTH]; /* no element / key read yet at this depth */
};

void json_lite_init(struct json_lite *r, const char *text, size_t len);
/* Consumes '{' (0) ... */
int json_lite_object(struct json_lite *r);
/* ... then: 1 and the next key (its ':' consumed), or 0 at the closing '}' (consumed). */
int json_lite_key(struct json_lite *r, char *key, size_t cap);
/* Consumes '[' (0) ... */
int json_lite_array(struct json_lite *r);
/* ... then: 1 if an element follows (read it next), 0 at the closing ']' (consumed). */
int json_lite_more(struct json_lite *r);
/* A non-negative integer without fraction or exponent, at most UINT64_MAX. */
int json_lite_u64(struct json_lite *r, uint64_t *out);
/* Any value, skipped (nesting bounded). */
int json_lite_skip(struct json_lite *r);
/* 0 if only white space is left. */
int json_lite_end(struct json_lite *r);

#endif

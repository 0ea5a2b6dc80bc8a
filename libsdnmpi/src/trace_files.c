/* trace_files.c -- see trace_files.h. The archive is read with zlib's gzread, which also reads an
 * uncompressed tar as it is. */
#include "trace_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ustar.h"

#define RANK_DIGITS 9          /* oxton-result<at most 9 digits>.json */
#define MAX_MEMBERS (1L << 20) /* members looked at in one archive */
#define SDNMPI_TRACE_PATH_MAX 4352

long sdnmpi_trace_rank_of(const char *name)
{
    static const char head[] = "oxton-result", tail[] = ".json";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t len = strlen(base), h = sizeof head - 1, t = sizeof tail - 1;
    if (len <= h + t || len > h + t + RANK_DIGITS || strncmp(base, head, h) != 0
        || strcmp(base + len - t, tail) != 0)
        return -1;
    long rank = 0;
    for (size_t i = h; i < len - t; i++) {
        if (base[i] < '0' || base[i] > '9')
            return -1;
        rank = rank * 10 + (base[i] - '0');
    }
    return rank;
}

/* ---- archives ---------------------------------------------------------------------------- */

/* An octal header field (NUL or space terminated). -1 if malformed (base-256 sizes included). */
static int octal_field(const unsigned char *f, size_t width, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    while (i < width && f[i] == ' ')
        i++;
    size_t digits = 0;
    for (; i < width && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
        if (v > (UINT64_MAX >> 3))
            return -1;
        v = (v << 3) | (uint64_t)(f[i] - '0');
    }
    if (digits == 0 || (i < width && f[i] != '\0' && f[i] != ' '))
        return -1;
    *out = v;
    return 0;
}

static int gz_read(gzFile gz, void *buf, size_t n)
{
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(gz, buf, chunk);
        if (got <= 0)
            return -1;
        buf = (char *)buf + got;
        n -= (size_t)got;
    }
    return 0;
}

static int gz_skip(gzFile gz, uint64_t n)
{
    char scratch[8192];
    while (n > 0) {
        size_t k = n < sizeof scratch ? (size_t)n : sizeof scratch;
        if (gz_read(gz, scratch, k))
            return -1;
        n -= k;
    }
    return 0;
}

static int is_zero(const unsigned char *b)
{
    for (int i = 0; i < USTAR_BLOCK; i++)
        if (b[i])
            return 0;
    return 1;
}

/* The member's path: prefix/name (ustar), NUL-terminated. */
static void member_name(const unsigned char *h, char *out, size_t cap)
{
    char name[101], prefix[156];
    memcpy(name, h + USTAR_NAME, 100);
    name[100] = '\0';
    memcpy(prefix, h + USTAR_PREFIX, 155);
    prefix[155] = '\0';
    if (memcmp(h + USTAR_MAGIC, "ustar", 5) == 0 && prefix[0] != '\0')
        snprintf(out, cap, "%s/%s", prefix, name);
    else
        snprintf(out, cap, "%s", name);
}

static int walk_archive(const char *path, uint64_t max_bytes, sdnmpi_trace_file_fn fn, void *arg,
                        char *why, size_t whylen)
{
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL) {
        snprintf(why, whylen, "%s: cannot open (%s)", path, strerror(errno ? errno : EIO));
        return -1;
    }
    unsigned char h[USTAR_BLOCK];
    char name[300];
    char *data = NULL;
    int rc = -1;
    for (long m = 0;; m++) {
        if (m >= MAX_MEMBERS) {
            snprintf(why, whylen, "%s: more than %ld archive members", path, MAX_MEMBERS);
            goto out;
        }
        if (gz_read(gz, h, sizeof h)) {
            if (m > 0 && gzeof(gz))
                rc = 0; /* a tar without its end blocks: the members read are complete */
            else
                snprintf(why, whylen, "%s: %s", path,
                         m == 0 ? "not a tar archive (empty or unreadable)" : "truncated or corrupt archive");
            goto out;
        }
        if (is_zero(h)) {
            rc = 0;
            goto out;
        }
        uint64_t size, sum;
        if (octal_field(h + USTAR_CHKSUM, 8, &sum) || sum != sdnmpi_ustar_checksum(h)
            || octal_field(h + USTAR_SIZE, 12, &size)) {
            snprintf(why, whylen, "%s: not a tar archive (bad header of member %ld)", path, m + 1);
            goto out;
        }
        member_name(h, name, sizeof name);
        uint64_t padded = size + (USTAR_BLOCK - size % USTAR_BLOCK) % USTAR_BLOCK;
        long rank = (h[USTAR_TYPE] == '0' || h[USTAR_TYPE] == '\0') ? sdnmpi_trace_rank_of(name) : -1;
        if (rank < 0) {
            if (gz_skip(gz, padded)) {
                snprintf(why, whylen, "%s: truncated archive (member %s)", path, name);
                goto out;
            }
            continue;
        }
        if (size > max_bytes) {
            snprintf(why, whylen, "%s:%s: %llu bytes, more than the limit of %llu "
                     "(SDN_MPI_TRAFFIC_MAX_BYTES)", path, name, (unsigned long long)size,
                     (unsigned long long)max_bytes);
            goto out;
        }
        char *nd = realloc(data, size > 0 ? (size_t)size : 1);
        if (nd == NULL) {
            snprintf(why, whylen, "%s:%s: out of memory", path, name);
            goto out;
        }
        data = nd;
        if (gz_read(gz, data, (size_t)size) || gz_skip(gz, padded - size)) {
            snprintf(why, whylen, "%s: truncated archive (member %s)", path, name);
            goto out;
        }
        char label[600];
        snprintf(label, sizeof label, "%s:%s", path, name);
        if (fn(arg, label, rank, data, (size_t)size, why, whylen))
            goto out;
    }
out:
    free(data);
    (void)gzclose(gz); /* read-only: nothing to lose */
    return rc;
}

/* ---- directories ------------------------------------------------------------------------- */

static int read_file(const char *file, uint64_t max_bytes, char **data, size_t *len, char *why,
                     size_t whylen)
{
    FILE *f = fopen(file, "rb");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        snprintf(why, whylen, "%s: cannot read (%s)", file, strerror(errno));
        if (f != NULL)
            (void)fclose(f);
        return -1;
    }
    int rc = -1;
    if ((uint64_t)st.st_size > max_bytes) {
        snprintf(why, whylen, "%s: %lld bytes, more than the limit of %llu (SDN_MPI_TRAFFIC_MAX_BYTES)",
                 file, (long long)st.st_size, (unsigned long long)max_bytes);
    } else if ((*data = malloc((size_t)st.st_size + 1)) == NULL) {
        snprintf(why, whylen, "%s: out of memory", file);
    } else if (fread(*data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        snprintf(why, whylen, "%s: cannot read (%s)", file, ferror(f) ? strerror(errno) : "shorter than its size");
        free(*data);
        *data = NULL;
    } else {
        *len = (size_t)st.st_size;
        rc = 0;
    }
    (void)fclose(f); /* read-only */
    return rc;
}

static int walk_directory(const char *path, uint64_t max_bytes, sdnmpi_trace_file_fn fn, void *arg,
                          char *why, size_t whylen)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        snprintf(why, whylen, "%s: cannot open the directory (%s)", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    char file[SDNMPI_TRACE_PATH_MAX];
    while (rc == 0 && (e = readdir(d)) != NULL) {
        long rank = sdnmpi_trace_rank_of(e->d_name);
        if (rank < 0)
            continue;
        int n = snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        if (n < 0 || (size_t)n >= sizeof file) {
            snprintf(why, whylen, "%s: path too long", path);
            rc = -1;
            break;
        }
        char *data = NULL;
        size_t len = 0;
        rc = read_file(file, max_bytes, &data, &len, why, whylen);
        if (rc == 0)
            rc = fn(arg, file, rank, data, len, why, whylen);
        free(data);
    }
    (void)closedir(d);
    return rc;
}

int sdnmpi_trace_files(const char *path, uint64_t max_bytes, sdnmpi_trace_file_fn fn, void *arg,
                       char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, whylen, "%s: no such trace file or directory", path);
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return walk_directory(path, max_bytes, fn, arg, why, whylen);
    return walk_archive(path, max_bytes, fn, arg, why, whylen);
}

/* prof_tar.c -- <job>.tar.gz: a ustar archive of the rank files, gzip'd with zlib. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "prof_out.h"

#define BLOCK 512

/* `value` as `width - 1` octal digits and a NUL; -1 if it does not fit. */
static int octal(char *field, size_t width, unsigned long long value)
{
    int n = snprintf(field, width, "%0*llo", (int)width - 1, value);
    return n < 0 || (size_t)n >= width ? -1 : 0;
}

static int header(unsigned char *h, const char *name, unsigned long long size, time_t mtime)
{
    memset(h, 0, BLOCK);
    size_t len = strlen(name);
    if (len >= 100)
        return -1;
    memcpy(h, name, len);
    if (octal((char *)h + 100, 8, 0644) || octal((char *)h + 108, 8, 0) || octal((char *)h + 116, 8, 0) ||
        octal((char *)h + 124, 12, size) || octal((char *)h + 136, 12, (unsigned long long)mtime))
        return -1;
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned long sum = 0;
    for (int i = 0; i < BLOCK; i++)
        sum += h[i];
    return snprintf((char *)h + 148, 8, "%06lo", sum) == 6 ? 0 : -1; /* then NUL, space stays */
}

static int gz_all(gzFile gz, const void *buf, size_t n)
{
    return n == 0 || gzwrite(gz, buf, (unsigned)n) == (int)n ? 0 : -1;
}

/* One member: header, contents, padding to a block. */
static int member(gzFile gz, const char *dir, const char *name)
{
    char path[4096];
    unsigned char block[BLOCK];
    char buf[65536];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return -1;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    int rc = -1;
    long size;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    if (header(block, name, (unsigned long long)size, time(NULL)) != 0 || gz_all(gz, block, BLOCK) != 0)
        goto out;
    long left = size;
    while (left > 0) {
        size_t want = left < (long)sizeof buf ? (size_t)left : sizeof buf;
        if (fread(buf, 1, want, f) != want || gz_all(gz, buf, want) != 0)
            goto out;
        left -= (long)want;
    }
    memset(block, 0, BLOCK);
    rc = gz_all(gz, block, (size_t)((BLOCK - size % BLOCK) % BLOCK));
out:
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

int prof_tar_write(const char *path, const char *dir, const char *const *names, int n)
{
    char tmp[4096];
    unsigned char zero[2 * BLOCK];
    int len = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (len < 0 || (size_t)len >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    gzFile gz = gzopen(tmp, "wb");
    if (gz == NULL)
        return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = member(gz, dir, names[i]);
    memset(zero, 0, sizeof zero);
    if (rc == 0)
        rc = gz_all(gz, zero, sizeof zero);
    if (gzclose(gz) != Z_OK)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        int saved = errno ? errno : EIO;
        (void)remove(tmp);
        errno = saved;
    }
    return rc;
}

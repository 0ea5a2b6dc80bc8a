/* holdfile.h -- the test programs' hand-shake with the test: files in a directory. */
#ifndef HOLDFILE_H
#define HOLDFILE_H
#include <stdio.h>
#include <unistd.h>

static inline int exists(const char *dir, const char *name) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0;
}

static inline int touch(const char *dir, const char *name) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n <= 0 || (size_t)n >= sizeof path) return -1;
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    return fclose(f);
}
#endif

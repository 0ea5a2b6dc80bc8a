/* options.h - command-line parsing. */
#ifndef SDNMPI_OPTIONS_H
#define SDNMPI_OPTIONS_H

#include <net/if.h>
#include <stddef.h>
#include <stdio.h>

#define OPT_MAX_IFNAMES 64
#define OPT_INTERVAL_MIN 0.01
#define OPT_INTERVAL_MAX 3600.0
#define OPT_TTL_MAX 65535u

struct options {
    double interval;  /* seconds between rounds */
    unsigned ttl;     /* TTL TLV value in seconds */
    int foreground;   /* do not daemonize */
    int verbose;      /* log every frame */
    int once;         /* one round, then exit */
    size_t n_ifnames; /* 0 = all eligible interfaces */
    char ifnames[OPT_MAX_IFNAMES][IFNAMSIZ];
};

enum options_result {
    OPTIONS_RUN = 0,  /* parsed, go on */
    OPTIONS_EXIT = 1, /* --help printed, exit 0 */
    OPTIONS_ERROR = 2 /* message printed to err, exit 2 */
};

/* Default TTL: max(ceil(4 * interval), 4), capped at 65535. */
unsigned options_default_ttl(double interval);

void options_usage(FILE *f, const char *prog);

/* Parse argv into opts. Help goes to out, errors to err. */
enum options_result options_parse(struct options *opts, int argc,
                                  char **argv, FILE *out, FILE *err);

#endif

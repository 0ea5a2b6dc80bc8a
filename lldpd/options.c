/* options.c - command-line parsing with getopt_long(3). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned options_default_ttl(double interval)
{
    double t = ceil(4.0 * interval - 1e-9); /* tolerate 4*0.2 = 0.8000001 */
    if (!(t >= 4.0))
        return 4;
    if (t >= (double)OPT_TTL_MAX)
        return OPT_TTL_MAX;
    return (unsigned)t;
}

void options_usage(FILE *f, const char *prog)
{
    (void)fprintf(f,
        "Usage: %s [OPTION]...\n"
        "Send an LLDP frame (MAC, interface name, hostname, IPv4 address)\n"
        "on every up, non-loopback interface at a fixed interval.\n"
        "\n"
        "  -i, --interval SECONDS  time between frames, fractional allowed\n"
        "                          (%.2f..%.0f, default 1)\n"
        "  -I, --interface NAME    send only on NAME; repeatable or a\n"
        "                          comma-separated list (default: all)\n"
        "  -t, --ttl SECONDS       TTL to announce, 1..%u\n"
        "                          (default max(ceil(4 x interval), 4))\n"
        "  -f, --foreground        do not daemonize\n"
        "  -v, --verbose           log every frame sent to stderr\n"
        "  -1, --once              send one round and exit (implies -f)\n"
        "  -h, --help              show this help and exit\n"
        "\n"
        "SIGTERM/SIGINT send a shutdown frame (TTL 0) and exit 0.\n",
        prog, OPT_INTERVAL_MIN, OPT_INTERVAL_MAX, OPT_TTL_MAX);
}

static int parse_interval(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
        return -1;
    if (v < OPT_INTERVAL_MIN || v > OPT_INTERVAL_MAX)
        return -1;
    *out = v;
    return 0;
}

static int parse_ttl(const char *s, unsigned *out)
{
    char *end;
    long v;

    if (*s < '0' || *s > '9') /* no sign, no leading space */
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end != '\0' || errno != 0 || v < 1 || v > (long)OPT_TTL_MAX)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Add the comma-separated names in s. Returns 0 or -1 (message printed). */
static int add_ifnames(struct options *o, const char *s, FILE *err,
                       const char *prog)
{
    const char *p = s;

    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        size_t i;
        int dup = 0;

        if (len == 0) {
            (void)fprintf(err, "%s: empty interface name in '%s'\n", prog, s);
            return -1;
        }
        if (len > IFNAMSIZ - 1) {
            (void)fprintf(err,
                          "%s: interface name '%.*s' is too long "
                          "(at most %d characters)\n",
                          prog, (int)len, p, IFNAMSIZ - 1);
            return -1;
        }
        if (memchr(p, '/', len) != NULL || memchr(p, ' ', len) != NULL) {
            (void)fprintf(err, "%s: invalid interface name '%.*s'\n", prog,
                          (int)len, p);
            return -1;
        }
        for (i = 0; i < o->n_ifnames; i++)
            if (strlen(o->ifnames[i]) == len &&
                memcmp(o->ifnames[i], p, len) == 0)
                dup = 1;
        if (!dup) {
            if (o->n_ifnames >= OPT_MAX_IFNAMES) {
                (void)fprintf(err, "%s: too many interfaces (at most %d)\n",
                              prog, OPT_MAX_IFNAMES);
                return -1;
            }
            memcpy(o->ifnames[o->n_ifnames], p, len);
            o->ifnames[o->n_ifnames][len] = '\0';
            o->n_ifnames++;
        }
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

enum options_result options_parse(struct options *o, int argc, char **argv,
                                  FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"interval", required_argument, NULL, 'i'},
        {"interface", required_argument, NULL, 'I'},
        {"ttl", required_argument, NULL, 't'},
        {"foreground", no_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"once", no_argument, NULL, '1'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *prog = (argc > 0 && argv[0] != NULL) ? argv[0] : "sdnmpi-lldpd";
    int ttl_set = 0;
    int c;

    memset(o, 0, sizeof(*o));
    o->interval = 1.0;

    /* Leading ':' : report missing arguments as ':' and print our own
     * messages (opterr is left alone so no libc state is changed). */
    while ((c = getopt_long(argc, argv, ":i:I:t:fv1h", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (parse_interval(optarg, &o->interval) != 0) {
                (void)fprintf(err,
                              "%s: invalid interval '%s': must be a number of "
                              "seconds between %.2f and %.0f\n",
                              prog, optarg, OPT_INTERVAL_MIN, OPT_INTERVAL_MAX);
                return OPTIONS_ERROR;
            }
            break;
        case 'I':
            if (add_ifnames(o, optarg, err, prog) != 0)
                return OPTIONS_ERROR;
            break;
        case 't':
            if (parse_ttl(optarg, &o->ttl) != 0) {
                (void)fprintf(err,
                              "%s: invalid ttl '%s': must be an integer "
                              "between 1 and %u\n",
                              prog, optarg, OPT_TTL_MAX);
                return OPTIONS_ERROR;
            }
            ttl_set = 1;
            break;
        case 'f':
            o->foreground = 1;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case '1':
            o->once = 1;
            o->foreground = 1;
            break;
        case 'h':
            options_usage(out, prog);
            return OPTIONS_EXIT;
        case ':':
            (void)fprintf(err, "%s: option '%s' requires an argument\n", prog,
                          argv[optind - 1]);
            return OPTIONS_ERROR;
        default:
            if (optopt != 0)
                (void)fprintf(err, "%s: unknown option '-%c'\n", prog, optopt);
            else
                (void)fprintf(err, "%s: unknown option '%s'\n", prog,
                              argv[optind - 1]);
            (void)fprintf(err, "Try '%s --help' for more information.\n", prog);
            return OPTIONS_ERROR;
        }
    }
    if (optind < argc) {
        (void)fprintf(err, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        (void)fprintf(err, "Try '%s --help' for more information.\n", prog);
        return OPTIONS_ERROR;
    }
    if (!ttl_set)
        o->ttl = options_default_ttl(o->interval);
    return OPTIONS_RUN;
}

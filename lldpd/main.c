/* main.c - sdnmpi-lldpd: send LLDP frames on every usable interface.
 *
 * One round per interval: re-enumerate interfaces, build one LLDPDU per
 * interface, send it. SIGTERM/SIGINT end the loop; a shutdown LLDPDU
 * (TTL 0) then goes out on every interface of the last round. */
#include "ifaces.h"
#include "lldp_frame.h"
#include "log.h"
#include "options.h"
#include "tx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2

/* The only mutable global: set by the SIGTERM/SIGINT handler. */
static volatile sig_atomic_t stop_requested = 0;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Send error remembered per interface to log each new error only once. */
struct if_error {
    char name[IFNAMSIZ];
    int err;
};

struct ctx {
    const struct options *opts;
    const struct logger *lg;
    int fd;
    struct iface active[IFACES_MAX]; /* sent on successfully, last round */
    size_t n_active;
    struct if_error errs[IFACES_MAX]; /* failures of the last round */
    size_t n_errs;
    int enum_failed;
    int had_none;
};

static int is_transient(int err)
{
    /* interface down or gone between enumeration and send */
    return err == ENETDOWN || err == ENXIO || err == ENODEV;
}

static int previous_error(const struct ctx *c, const char *name)
{
    size_t i;
    for (i = 0; i < c->n_errs; i++)
        if (strncmp(c->errs[i].name, name, IFNAMSIZ) == 0)
            return c->errs[i].err;
    return 0;
}

static void get_hostname(const struct logger *lg, char *buf, size_t len)
{
    if (gethostname(buf, len) != 0) {
        log_msg(lg, LOG_DEBUG, "gethostname: %s", strerror(errno));
        buf[0] = '\0';
    }
    buf[len - 1] = '\0'; /* POSIX does not promise termination */
}

static void format_ipv4(const struct iface *it, char *buf, size_t len)
{
    if (!it->has_ipv4 || inet_ntop(AF_INET, it->ipv4, buf, (socklen_t)len) == NULL)
        (void)snprintf(buf, len, "none");
}

/* The IPv4 addresses of the other interfaces in all[0..n) (distinct from it's own), as extra
 * management addresses of it's frame. all[] lists every eligible interface, also those -I
 * leaves out: a host's management-network address then travels in its fabric frames. */
static void add_other_addresses(struct lldp_frame_info *info, const struct iface *it,
                                const struct iface *all, size_t n)
{
    for (size_t i = 0; i < n && info->n_extra < LLDP_MAX_EXTRA_ADDRS; i++) {
        if (all[i].ifindex == it->ifindex || !all[i].has_ipv4
            || (it->has_ipv4 && memcmp(all[i].ipv4, it->ipv4, 4) == 0))
            continue;
        memcpy(info->extra_ipv4[info->n_extra], all[i].ipv4, 4);
        info->extra_ifindex[info->n_extra] = all[i].ifindex;
        info->n_extra++;
    }
}

/* Build and send one frame for it (all[0..n): every interface of this round). Returns 0 or -1
 * with errno set. */
static int send_frame(const struct ctx *c, const struct iface *it, const struct iface *all,
                      size_t n, const char *host, unsigned ttl)
{
    uint8_t frame[LLDP_FRAME_MAX];
    struct lldp_frame_info info;
    int len;

    memset(&info, 0, sizeof(info));
    memcpy(info.mac, it->mac, sizeof(info.mac));
    info.port_name = it->name;
    info.ttl = (uint16_t)ttl;
    info.sys_name = host;
    info.has_ipv4 = it->has_ipv4;
    memcpy(info.ipv4, it->ipv4, sizeof(info.ipv4));
    info.ifindex = it->ifindex;
    add_other_addresses(&info, it, all, n);

    len = lldp_frame_build(frame, sizeof(frame), &info);
    if (len < 0) {
        errno = EMSGSIZE;
        return -1;
    }
    return tx_send(c->fd, it->ifindex, frame, (size_t)len);
}

static void log_sent(const struct ctx *c, const struct iface *it, unsigned ttl)
{
    char ip[INET_ADDRSTRLEN];

    if (!c->lg->verbose)
        return;
    format_ipv4(it, ip, sizeof(ip));
    log_msg(c->lg, LOG_DEBUG,
            "sent on %s (ifindex %u) mac %02x:%02x:%02x:%02x:%02x:%02x "
            "ipv4 %s ttl %u",
            it->name, it->ifindex, it->mac[0], it->mac[1], it->mac[2],
            it->mac[3], it->mac[4], it->mac[5], ip, ttl);
}

/* One round: enumerate, send on each interface, remember the outcome. */
static void send_round(struct ctx *c)
{
    struct iface list[IFACES_MAX];
    struct iface all[IFACES_MAX]; /* every eligible interface, for the addresses */
    struct iface sent_ok[IFACES_MAX];
    struct if_error errs[IFACES_MAX];
    size_t n_ok = 0, n_errs = 0, i;
    char host[LLDP_MAX_STRING + 1];
    int n, n_all;

    n = ifaces_list(list, IFACES_MAX, c->opts->ifnames, c->opts->n_ifnames);
    if (n < 0) {
        if (!c->enum_failed)
            log_msg(c->lg, LOG_ERR, "cannot list interfaces: %s",
                    strerror(errno));
        c->enum_failed = 1;
        return; /* keep the previous round's state */
    }
    if (c->enum_failed)
        log_msg(c->lg, LOG_NOTICE, "listing interfaces works again");
    c->enum_failed = 0;

    if (n == 0 && !c->had_none)
        log_msg(c->lg, LOG_NOTICE, "no eligible interface%s",
                c->opts->once ? "" : " (waiting for one)");
    c->had_none = (n == 0);

    get_hostname(c->lg, host, sizeof(host));
    n_all = c->opts->n_ifnames > 0 ? ifaces_list(all, IFACES_MAX, NULL, 0) : -1;
    if (n_all < 0) { /* no -I, or the full list failed: the sending interfaces are all we know */
        memcpy(all, list, (size_t)n * sizeof(list[0]));
        n_all = n;
    }

    for (i = 0; i < (size_t)n; i++) {
        const struct iface *it = &list[i];
        int prev = previous_error(c, it->name);

        if (send_frame(c, it, all, (size_t)n_all, host, c->opts->ttl) != 0) {
            int err = errno;

            if (is_transient(err) || err == prev)
                log_msg(c->lg, LOG_DEBUG, "send on %s: %s", it->name,
                        strerror(err));
            else
                log_msg(c->lg, LOG_WARNING, "send on %s: %s", it->name,
                        strerror(err));
            memcpy(errs[n_errs].name, it->name, sizeof(errs[n_errs].name));
            errs[n_errs].err = err;
            n_errs++;
            continue;
        }
        if (prev != 0 && !is_transient(prev))
            log_msg(c->lg, LOG_NOTICE, "send on %s works again", it->name);
        log_sent(c, it, c->opts->ttl);
        sent_ok[n_ok++] = *it;
    }

    memcpy(c->active, sent_ok, n_ok * sizeof(sent_ok[0]));
    c->n_active = n_ok;
    memcpy(c->errs, errs, n_errs * sizeof(errs[0]));
    c->n_errs = n_errs;
}

/* Shutdown LLDPDU (TTL 0) on every interface of the last round. */
static void send_shutdown(const struct ctx *c)
{
    char host[LLDP_MAX_STRING + 1];
    size_t i;

    get_hostname(c->lg, host, sizeof(host));
    for (i = 0; i < c->n_active; i++) {
        if (send_frame(c, &c->active[i], NULL, 0, host, 0) != 0)
            log_msg(c->lg, LOG_DEBUG, "shutdown frame on %s: %s",
                    c->active[i].name, strerror(errno));
        else
            log_sent(c, &c->active[i], 0);
    }
}

static int now_ns(int64_t *out)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    *out = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return 0;
}

/* Sleep until the monotonic deadline or a stop signal. The stop signals
 * are blocked except inside pselect, so none can be missed.
 * Returns 0, or -1 with errno set on an unexpected error. */
static int wait_until(int64_t deadline, const sigset_t *unblocked)
{
    while (!stop_requested) {
        struct timespec ts;
        int64_t now, left;

        if (now_ns(&now) != 0)
            return -1;
        left = deadline - now;
        if (left <= 0)
            return 0;
        ts.tv_sec = (time_t)(left / 1000000000);
        ts.tv_nsec = (long)(left % 1000000000);
        if (pselect(0, NULL, NULL, NULL, &ts, unblocked) < 0 && errno != EINTR)
            return -1;
    }
    return 0;
}

/* Block SIGTERM/SIGINT (delivered only inside pselect) and install the
 * handler. *unblocked receives the mask to use while waiting. */
static int setup_signals(sigset_t *unblocked)
{
    struct sigaction sa;
    sigset_t block;

    if (sigemptyset(&block) != 0 || sigaddset(&block, SIGTERM) != 0 ||
        sigaddset(&block, SIGINT) != 0)
        return -1;
    if (sigprocmask(SIG_BLOCK, &block, unblocked) != 0)
        return -1;
    if (sigdelset(unblocked, SIGTERM) != 0 || sigdelset(unblocked, SIGINT) != 0)
        return -1;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    if (sigfillset(&sa.sa_mask) != 0)
        return -1;
    sa.sa_flags = 0; /* no SA_RESTART: interrupt pselect */
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return -1;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    if (sigemptyset(&sa.sa_mask) != 0 || sigaction(SIGPIPE, &sa, NULL) != 0)
        return -1;
    return 0;
}

/* Classic double-fork daemonization. Returns 0 in the daemon, -1 on error
 * (message logged); the intermediate processes exit 0. */
static int daemonize(struct logger *lg)
{
    pid_t pid;
    int devnull;

    devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        log_msg(lg, LOG_ERR, "open /dev/null: %s", strerror(errno));
        return -1;
    }
    if (fflush(NULL) != 0) {
        log_msg(lg, LOG_ERR, "fflush: %s", strerror(errno));
        (void)close(devnull);
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        log_msg(lg, LOG_ERR, "fork: %s", strerror(errno));
        (void)close(devnull);
        return -1;
    }
    if (pid > 0)
        _exit(0);
    if (setsid() < 0) {
        log_msg(lg, LOG_ERR, "setsid: %s", strerror(errno));
        return -1;
    }
    pid = fork(); /* never reacquire a controlling terminal */
    if (pid < 0) {
        log_msg(lg, LOG_ERR, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid > 0)
        _exit(0);
    if (chdir("/") != 0) {
        log_msg(lg, LOG_ERR, "chdir /: %s", strerror(errno));
        return -1;
    }
    (void)umask(022);

    openlog("sdnmpi-lldpd", LOG_PID, LOG_DAEMON);
    lg->use_syslog = 1;
    if (dup2(devnull, STDIN_FILENO) < 0 || dup2(devnull, STDOUT_FILENO) < 0 ||
        dup2(devnull, STDERR_FILENO) < 0) {
        log_msg(lg, LOG_ERR, "dup2 /dev/null: %s", strerror(errno));
        return -1;
    }
    if (devnull > STDERR_FILENO && close(devnull) != 0) {
        log_msg(lg, LOG_ERR, "close: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct ctx c; /* ~14 KiB on the stack */
    struct options opts;
    struct logger lg = {"sdnmpi-lldpd", 0, 0};
    sigset_t unblocked;
    int64_t next, now;
    int64_t interval_ns;
    int rc = EXIT_SUCCESS;

    switch (options_parse(&opts, argc, argv, stdout, stderr)) {
    case OPTIONS_RUN:
        break;
    case OPTIONS_EXIT:
        return EXIT_SUCCESS;
    case OPTIONS_ERROR:
    default:
        return EXIT_USAGE;
    }
    lg.verbose = opts.verbose;
    interval_ns = (int64_t)(opts.interval * 1e9 + 0.5);

    memset(&c, 0, sizeof(c));
    c.opts = &opts;
    c.lg = &lg;
    c.fd = tx_open();
    if (c.fd < 0) {
        int err = errno;
        log_msg(&lg, LOG_ERR, "cannot open AF_PACKET raw socket: %s%s",
                strerror(err),
                (err == EPERM || err == EACCES)
                    ? " (run as root or grant CAP_NET_RAW)" : "");
        return EXIT_FAILURE;
    }

    if (!opts.foreground && daemonize(&lg) != 0) {
        (void)tx_close(c.fd);
        return EXIT_FAILURE;
    }
    if (setup_signals(&unblocked) != 0) {
        log_msg(&lg, LOG_ERR, "cannot set up signals: %s", strerror(errno));
        (void)tx_close(c.fd);
        return EXIT_FAILURE;
    }

    log_msg(&lg, LOG_INFO, "starting: interval %g s, ttl %u s, %s%s", opts.interval,
            opts.ttl, opts.n_ifnames ? "selected interfaces" : "all interfaces",
            opts.once ? ", once" : "");

    if (now_ns(&next) != 0) {
        log_msg(&lg, LOG_ERR, "clock_gettime: %s", strerror(errno));
        (void)tx_close(c.fd);
        return EXIT_FAILURE;
    }
    while (!stop_requested) {
        send_round(&c);
        if (opts.once)
            break;
        next += interval_ns;
        if (now_ns(&now) != 0) {
            log_msg(&lg, LOG_ERR, "clock_gettime: %s", strerror(errno));
            rc = EXIT_FAILURE;
            break;
        }
        if (next < now) /* fell behind (suspend, slow round): resync */
            next = now + interval_ns;
        if (wait_until(next, &unblocked) != 0) {
            log_msg(&lg, LOG_ERR, "waiting: %s", strerror(errno));
            rc = EXIT_FAILURE;
            break;
        }
    }

    if (stop_requested) {
        send_shutdown(&c);
        log_msg(&lg, LOG_INFO, "stopping: shutdown frame sent on %zu interface%s",
                c.n_active, c.n_active == 1 ? "" : "s");
    }
    if (tx_close(c.fd) != 0) {
        log_msg(&lg, LOG_ERR, "close socket: %s", strerror(errno));
        rc = EXIT_FAILURE;
    }
    return rc;
}

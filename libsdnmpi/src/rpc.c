/* rpc.c -- docs/rpc.md's framing on a socket: one request sent, one reply read and checked, one
 * request/reply exchange. The requests: rpc_encode.c; the replies: rpc_decode.c. */
#include "rpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

int sdnmpi_rpc_send(int fd, const struct sdnmpi_rpc_buf *req, int64_t deadline_ms, char *what,
                    size_t whatlen)
{
    if (sdnmpi_sock_write_all(fd, req->data, req->len, deadline_ms)) {
        snprintf(what, whatlen, "send failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int sdnmpi_rpc_recv(int fd, int64_t id, int64_t deadline_ms, struct sdnmpi_rpc_reply *reply,
                    char *what, size_t whatlen)
{
    unsigned char hdr[SDNMPI_RPC_HEADER_BYTES];
    if (sdnmpi_sock_read_all(fd, hdr, sizeof hdr, deadline_ms)) {
        snprintf(what, whatlen, "no reply: %s",
                 errno == ECONNRESET ? "connection closed" : strerror(errno));
        return -1;
    }
    uint32_t n = ((uint32_t)hdr[0] << 24) | ((uint32_t)hdr[1] << 16) | ((uint32_t)hdr[2] << 8) | hdr[3];
    if (n == 0 || n > SDNMPI_RPC_MAX_FRAME) {
        snprintf(what, whatlen, "bad reply length %u", (unsigned)n);
        return -1;
    }
    char *body = malloc(n);
    if (body == NULL) {
        snprintf(what, whatlen, "out of memory for a %u-byte reply", (unsigned)n);
        return -1;
    }
    int rc = -1;
    if (sdnmpi_sock_read_all(fd, body, n, deadline_ms)) {
        snprintf(what, whatlen, "truncated reply: %s",
                 errno == ECONNRESET ? "connection closed" : strerror(errno));
    } else if (sdnmpi_rpc_decode_reply(body, n, reply)) {
        snprintf(what, whatlen, "malformed reply");
    } else if (reply->id != id) {
        snprintf(what, whatlen, "reply id %lld for request %lld%s%s", (long long)reply->id,
                 (long long)id, reply->error[0] ? ": " : "", reply->error);
    } else {
        rc = 0;
    }
    free(body);
    return rc;
}

int sdnmpi_rpc_call(int fd, const struct sdnmpi_rpc_buf *req, int64_t id, int64_t deadline_ms,
                    struct sdnmpi_rpc_reply *reply, char *what, size_t whatlen)
{
    if (sdnmpi_rpc_send(fd, req, deadline_ms, what, whatlen))
        return -1;
    return sdnmpi_rpc_recv(fd, id, deadline_ms, reply, what, whatlen);
}

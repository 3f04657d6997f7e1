/* mock_listen.c: binding the listening sockets and announcing readiness (--port-file, the ready
 * line). It knows nothing of epoll, connections or workers: callers decide how many sockets to
 * open and when the server is ready to be announced. */
#include "mock_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MOCK_LISTEN_BACKLOG 4096

/* Binds host:port, then listens unless only probing. */
static int listen_bind(const char *host, int port, bool reuse_port, bool probe_only,
                       struct mock_listener *out)
{
    struct sockaddr_storage addr;
    memset(&addr, 0, sizeof addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&addr;
    socklen_t addr_len;
    int family;
    out->fd = -1;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        family = v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        addr_len = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        family = v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        addr_len = sizeof *v6;
    } else {
        fprintf(stderr, "tokstorm-mock: --host %s is not a numeric address\n", host);
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("tokstorm-mock: socket");
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
        perror("tokstorm-mock: SO_REUSEPORT");
        close(fd);
        return -1;
    }
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&addr, addr_len) != 0) {
        fprintf(stderr, "tokstorm-mock: cannot bind %s port %d: %s\n", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    if ((!probe_only && listen(fd, MOCK_LISTEN_BACKLOG) != 0) ||
        getsockname(fd, (struct sockaddr *)&addr, &addr_len) != 0) {
        perror("tokstorm-mock: listen");
        close(fd);
        return -1;
    }
    const void *raw =
        family == AF_INET ? (const void *)&v4->sin_addr : (const void *)&v6->sin6_addr;
    char text[INET6_ADDRSTRLEN];
    inet_ntop(family, raw, text, sizeof text);
    snprintf(out->host_text, sizeof out->host_text, family == AF_INET6 ? "[%s]" : "%s", text);
    out->port = ntohs(family == AF_INET ? v4->sin_port : v6->sin6_port);
    out->fd = fd;
    return 0;
}

int mock_listen_open(const char *host, int port, bool reuse_port, struct mock_listener *out)
{
    return listen_bind(host, port, reuse_port, false, out);
}

int mock_listen_probe(const char *host, int port, int *bound_port)
{
    struct mock_listener probe;
    if (listen_bind(host, port, false, true, &probe) != 0)
        return -1;
    close(probe.fd);
    *bound_port = probe.port;
    return 0;
}

/* PATH.tmp then rename, so a reader polling for PATH never sees a partial number. */
static int listen_write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        fprintf(stderr, "tokstorm-mock: --port-file path too long\n");
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "tokstorm-mock: cannot write --port-file %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    bool written = fprintf(f, "%d\n", port) > 0;
    written &= fclose(f) == 0;
    if (!written || rename(tmp, path) != 0) {
        fprintf(stderr, "tokstorm-mock: cannot write --port-file %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int mock_listen_announce(const struct mock_options *opt, const struct mock_listener *l)
{
    if (opt->port_file && listen_write_port_file(opt->port_file, l->port) != 0)
        return -1;
    /* tokstorm reads this exact line through a pipe to learn the port: keep the format. */
    printf("tokstorm-mock: listening on http://%s:%d\n", l->host_text, l->port);
    fflush(stdout);
    return 0;
}

/* mock_listen.h: the listening sockets of tokstorm-mock and the announcement that it is ready
 * (the --port-file and the one stdout line tokstorm reads). No epoll, no HTTP, no processes. */
#ifndef TOKSTORM_MOCK_LISTEN_H
#define TOKSTORM_MOCK_LISTEN_H

#include <stdbool.h>

#include "mock_options.h"

#define MOCK_LISTEN_HOST_BYTES 48 /* INET6_ADDRSTRLEN + brackets, rounded up */

struct mock_listener {
    int fd;                                 /* non-blocking, listening; owned by the caller */
    int port;                               /* the bound port (the kernel's choice for 0) */
    char host_text[MOCK_LISTEN_HOST_BYTES]; /* printable address; IPv6 is bracketed */
};

/* Binds host:port (a numeric address) and listens. With reuse_port, SO_REUSEPORT is set before
 * binding, so that further sockets bound the same way share the port and the kernel spreads
 * connections over them. Returns 0, or -1 after printing why on stderr (nothing stays open). */
int mock_listen_open(const char *host, int port, bool reuse_port, struct mock_listener *out);

/* Binds (without listening) a socket that does not share the port, as a single server's
 * would, then closes it; *bound_port is the port it got (the kernel's choice for 0). Run before
 * binding SO_REUSEPORT sockets to that port: it fails, like a single server, when anything
 * holds the port, so workers never silently join another server's SO_REUSEPORT group (and a
 * later probe fails while they hold it). Returns 0, or -1 after printing why on stderr. */
int mock_listen_probe(const char *host, int port, int *bound_port);

/* Writes opt->port_file (if set), then prints the ready line on stdout and flushes it.
 * Returns 0, or -1 after printing why on stderr. */
int mock_listen_announce(const struct mock_options *opt, const struct mock_listener *l);

#endif

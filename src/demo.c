/* demo.c: starts and stops the bundled mock server for --demo. It knows where the binary
 * lives and the line it prints when ready; nothing of MPI or of the sweep. */
#include "tokstorm/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tokstorm/clock.h"

extern char **environ;

static int find_mock(char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, len, "%s/tokstorm-mock", self);
            if (access(path, X_OK) == 0)
                return 0;
        }
    }
    const char *env_path = getenv("PATH");
    char *copy = env_path ? strdup(env_path) : NULL;
    for (char *save = NULL, *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
         dir = strtok_r(NULL, ":", &save)) {
        snprintf(path, len, "%s/tokstorm-mock", dir);
        if (access(path, X_OK) == 0) {
            free(copy);
            return 0;
        }
    }
    free(copy);
    return -1;
}

/* Reads the mock's first stdout line within deadline; expects "...listening on URL". */
static int read_ready_line(int fd, char *url, size_t url_len, int64_t deadline_ns)
{
    char line[256];
    size_t have = 0;
    while (have < sizeof line - 1) {
        int64_t left_ms = (deadline_ns - clock_now_ns()) / 1000000;
        if (left_ms <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left_ms) <= 0)
            continue;
        ssize_t n = read(fd, line + have, 1);
        if (n <= 0)
            return -1;
        if (line[have] == '\n')
            break;
        have++;
    }
    line[have] = '\0';
    const char *at = strstr(line, "listening on ");
    if (at == NULL)
        return -1;
    snprintf(url, url_len, "%s", at + strlen("listening on "));
    return 0;
}

int demo_start(struct ts_demo *d, char *msg, size_t msg_len)
{
    memset(d, 0, sizeof *d);
    char mock[PATH_MAX + 32];
    if (find_mock(mock, sizeof mock) != 0) {
        snprintf(msg, msg_len, "--demo: tokstorm-mock not found beside tokstorm or on PATH");
        return -1;
    }
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        snprintf(msg, msg_len, "--demo: pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    /* --exit-after bounds the mock's life even if tokstorm dies without stopping it. */
    char *argv[] = {mock,     "--host",       "127.0.0.1", "--port",  "0",
                    "--ttft", "50ms",         "--step",    "10ms",    "--max-batch",
                    "64",     "--exit-after", "3600",      "--quiet", NULL};
    int rc = posix_spawn(&d->pid, mock, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    if (rc != 0) {
        close(out[0]);
        d->pid = 0;
        snprintf(msg, msg_len, "--demo: cannot start %s: %s", mock, strerror(rc));
        return -1;
    }
    rc = read_ready_line(out[0], d->url, sizeof d->url, clock_now_ns() + 10 * INT64_C(1000000000));
    d->stdout_fd = out[0];
    if (rc != 0) {
        demo_stop(d);
        snprintf(msg, msg_len, "--demo: %s did not report a listening port within 10 s", mock);
        return -1;
    }
    return 0;
}

void demo_stop(struct ts_demo *d)
{
    if (d->stdout_fd > 0)
        close(d->stdout_fd);
    d->stdout_fd = -1;
    if (d->pid <= 0)
        return;
    kill(d->pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
            d->pid = 0;
            return;
        }
        clock_sleep_ns(10 * 1000000);
    }
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
    d->pid = 0;
}

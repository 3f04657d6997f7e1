/* run_progress.c: the periodic non-blocking reductions (collect.c) that go with a level's
 * loops, driven by their tick: in the measured run they carry this rank's totals, which rank
 * 0 shows as the live progress line (--progress); in every phase they carry the ranks' stop
 * requests, which is how a signal to one rank reaches all of them without anyone waiting in
 * a collective. It decides where the line goes, not what is measured: the reductions carry
 * counters the level keeps anyway. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tokstorm/clock.h"
#include "tokstorm/interrupt.h"

#include "run_internal.h"

/* The process id of pid's parent, or -1. */
static long parent_of(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, the last ')' ends it. */
    const char *close = strrchr(buf, ')');
    long ppid = -1;
    if (close == NULL || sscanf(close + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

static int is_launcher(long pid)
{
    static const char *const names[] = {"mpirun",  "mpiexec", "orterun",
                                        "prterun", "orted",   "prted"};
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fgets(comm, sizeof comm, f) == NULL)
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(comm, names[i]) == 0)
            return 1;
    return 0;
}

/* Whether what this process writes on stdout reaches a terminal. isatty() alone cannot tell
 * under Open MPI's mpirun, which gives every rank a pseudo-terminal for stdout whatever its
 * own stdout is (a file, a pipe) and copies from one to the other. So under a launcher (the
 * nearest ancestor named like one) the launcher's stdout decides; a remote daemon's (orted)
 * is not the user's terminal. */
static int stdout_reaches_terminal(void)
{
    if (!isatty(STDOUT_FILENO))
        return 0;
    long pid = (long)getppid();
    for (int depth = 0; depth < 8 && pid > 1; depth++, pid = parent_of(pid)) {
        if (!is_launcher(pid))
            continue;
        char path[64], target[256];
        snprintf(path, sizeof path, "/proc/%ld/fd/1", pid);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        return strncmp(target, "/dev/pts/", 9) == 0 || strncmp(target, "/dev/tty", 8) == 0;
    }
    return 1;
}

enum run_progress_mode run_progress_choose(enum ts_progress_mode option)
{
    if (option == TS_PROGRESS_OFF)
        return RUN_PROGRESS_OFF;
    int terminal = stdout_reaches_terminal();
    if (option == TS_PROGRESS_AUTO)
        return terminal ? RUN_PROGRESS_TERMINAL : RUN_PROGRESS_OFF;
    return terminal ? RUN_PROGRESS_TERMINAL : RUN_PROGRESS_LINES;
}

void run_progress_level(struct run_ctx *r, const struct ts_level_plan *plan, double rate)
{
    struct run_progress *p = &r->progress;
    if (p->mode == RUN_PROGRESS_OFF || r->comm.rank != 0)
        return;
    char what[32];
    if (rate > 0)
        snprintf(what, sizeof what, "%g req/s", rate);
    else
        snprintf(what, sizeof what, "C=%lld", (long long)plan->concurrency);
    int64_t planned = 0;
    if (plan->open_loop)
        planned = r->opt.requests;
    else if (plan->requests_per_stream > 0)
        planned = plan->concurrency * plan->requests_per_stream;
    /* The line's times are on the common timeline; the level's start is set once known. */
    progress_line_init(&p->line, what, planned, (double)plan->duration_ns / 1e9, 0);
}

/* This rank's totals now: requests finished, failed, and tokens (those of requests still in
 * flight counted as their content events so far), and whether it was signalled. */
static void sample(struct run_ctx *r, int running, int64_t now_ns, struct ts_progress_sample *s)
{
    memset(s, 0, sizeof *s);
    s->stop = interrupt_status();
    s->running = running;
    if (!r->progress.begun)
        return; /* preparing, or the level never began on this rank */
    const struct ts_counters *c = &r->level.stats->c;
    s->sampled_ns = running ? level_common_ns(&r->level, now_ns) : 0;
    s->done = (int64_t)(c->ok + c->err);
    s->errors = (int64_t)c->err;
    s->tokens = (int64_t)c->output_tokens + (running ? http_live_events(r->http) : 0);
}

/* Every rank sees every sum, in the same order; rank 0 shows those of the measured run taken
 * while some rank was still running it. */
static void on_sum(void *ctx, const struct ts_progress_sample *sum)
{
    struct run_ctx *r = ctx;
    struct run_progress *p = &r->progress;
    if (sum->stop > 0)
        r->stop.agreed = 1;
    /* A rank done with its loops keeps its stop request current for the next reduction. */
    p->final.stop = interrupt_status();
    if (r->comm.rank != 0 || sum->running == 0 || p->phase != RUN_PHASE_MEASURE ||
        p->mode == RUN_PROGRESS_OFF)
        return;
    char line[160];
    size_t n = progress_line_format(&p->line, sum, line, sizeof line);
    if (p->mode == RUN_PROGRESS_TERMINAL) {
        /* Rewritten in place, padded over what a longer line before left. */
        printf("\r%s%*s", line, p->shown > n ? (int)(p->shown - n) : 0, "");
        p->shown = n;
    } else {
        printf("%s\n", line);
    }
    fflush(stdout);
}

void run_progress_tick(struct run_ctx *r, int64_t now_ns)
{
    struct run_progress *p = &r->progress;
    struct ts_progress_sample mine;
    const struct ts_progress_sample *start = NULL;
    if (now_ns >= p->due_ns) {
        sample(r, 1, now_ns, &mine);
        start = &mine;
        p->due_ns = progress_next_due(p->start_ns, TS_PROGRESS_PERIOD_NS, now_ns);
    }
    collect_progress_poll(&r->comm, &p->sync, start, on_sum, r);
}

void run_progress_begin(struct run_ctx *r, enum run_phase phase, int64_t start_ns)
{
    struct run_progress *p = &r->progress;
    collect_progress_init(&p->sync);
    /* In the measured run every rank's schedule counts from the same synchronised instant, so
     * the reductions start at about the same moment everywhere and none waits long in one.
     * While preparing, ranks start from the end of the same agreement, close enough. */
    p->phase = phase;
    p->begun = phase == RUN_PHASE_MEASURE;
    p->start_ns = start_ns;
    p->due_ns = start_ns + TS_PROGRESS_PERIOD_NS;
    if (p->begun)
        p->line.start_ns = p->line.last_ns = level_common_ns(&r->level, start_ns);
}

void run_progress_finish(struct run_ctx *r)
{
    struct run_progress *p = &r->progress;
    sample(r, 0, 0, &p->final);
    collect_progress_finish(&r->comm, &p->sync, &p->final, on_sum, r);
    p->begun = 0;
    if (r->comm.rank == 0 && p->shown > 0) {
        printf("\r%*s\r", (int)p->shown, ""); /* the level's row takes the line's place */
        fflush(stdout);
        p->shown = 0;
    }
}

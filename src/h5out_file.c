/* h5out_file.c: the results file as a file: where it is made (exclusively, or beside the one
 * --force replaces until h5out_commit), its removal when the run measured nothing, and the
 * first failed write, kept with the system's reason and refused from then on. What goes in
 * it is h5out.c's and h5out_run.c's. */
#include "tokstorm/h5out.h"

#include "h5out_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* H5Ewalk2: the system's message of a failed read or write ("error message = '...'" in the
 * file driver's description), else the innermost description. */
static herr_t find_reason(unsigned n, const H5E_error2_t *e, void *ctx)
{
    char *reason = ctx;
    const char *desc = e->desc ? e->desc : "";
    const char *sys = strstr(desc, "error message = '");
    if (sys != NULL) {
        sys += strlen("error message = '");
        snprintf(reason, 256, "%.*s", (int)strcspn(sys, "'"), sys);
        return 1; /* the best there is: stop walking */
    }
    if (n == 0 || reason[0] == '\0')
        snprintf(reason, 256, "%s", desc);
    return 0;
}

herr_t h5out_on_error(hid_t stack, void *ctx)
{
    char *reason = ctx;
    reason[0] = '\0';
    H5Ewalk2(stack, H5E_WALK_UPWARD, find_reason, reason);
    return 0;
}

int h5out_fail(struct ts_h5out *h, char *msg, size_t len, const char *what)
{
    if (!h->failed) {
        h->failed = 1;
        if (h->reason[0] != '\0')
            snprintf(h->error, sizeof h->error, "results file %.500s: %.100s: %.255s", h->path,
                     what, h->reason);
        else
            snprintf(h->error, sizeof h->error, "results file %.500s: %.100s", h->path, what);
    }
    return h5out_refuse(h, msg, len);
}

int h5out_refuse(const struct ts_h5out *h, char *msg, size_t len)
{
    snprintf(msg, len, "%s", h->error);
    return TS_H5_ERR_IO;
}

int h5out_failed(const struct ts_h5out *h)
{
    return h != NULL && h->failed;
}

int h5out_claim_path(struct ts_h5out *h, const char *path, int force, char *msg, size_t len)
{
    int exists = access(path, F_OK) == 0;
    if (exists && !force) {
        snprintf(msg, len, "--out: %s exists (use --force to overwrite it)", path);
        return TS_H5_ERR_EXISTS;
    }
    if (exists)
        snprintf(h->made, sizeof h->made, "%s.%ld.tmp", path, (long)getpid());
    else
        snprintf(h->made, sizeof h->made, "%s", path);
    int fd = open(h->made, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        if (e == EEXIST && !exists)
            snprintf(msg, len, "--out: %s exists (use --force to overwrite it)", path);
        else
            snprintf(msg, len, "--out: cannot create %s: %s", h->made, strerror(e));
        h->made[0] = '\0';
        return e == EEXIST && !exists ? TS_H5_ERR_EXISTS : TS_H5_ERR_IO;
    }
    close(fd);
    /* An existing file is replaced only at h5out_commit; a new one is in place already. */
    h->committed = !exists;
    return 0;
}

int h5out_commit(struct ts_h5out *h, char *msg, size_t msg_len)
{
    if (h == NULL || h->committed)
        return 0;
    /* The descriptor HDF5 holds follows the file through the rename. */
    if (rename(h->made, h->path) != 0) {
        snprintf(msg, msg_len, "--out: cannot replace %s: %s", h->path, strerror(errno));
        return TS_H5_ERR_IO;
    }
    snprintf(h->made, sizeof h->made, "%s", h->path);
    h->committed = 1;
    return 0;
}

void h5out_discard(struct ts_h5out *h)
{
    if (h == NULL)
        return;
    char made[sizeof h->made];
    snprintf(made, sizeof made, "%s", h->made);
    h->failed = 1; /* nothing is worth writing on the way out */
    h5out_close(h, NULL, 0);
    if (made[0] != '\0')
        unlink(made);
}

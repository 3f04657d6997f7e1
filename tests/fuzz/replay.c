/* replay.c: a main for the fuzz target where libFuzzer is not linked (gcc, the sanitizer build):
 * runs LLVMFuzzerTestOneInput once on each file named, or on each file in each directory named,
 * so the seed corpus (and any crash file kept from a fuzzing run) passes its checks in every
 * build. Fails when it finds no file at all, so a moved corpus cannot pass by checking nothing. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads and runs one file. Returns 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (grown == NULL)
                free(buf);
            buf = grown;
        }
    }
    int failed = buf == NULL || ferror(f);
    fclose(f);
    if (failed) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            errors++;
        } else if (!S_ISDIR(st.st_mode)) {
            errors += replay_file(argv[i]) != 0;
            files++;
        } else {
            DIR *dir = opendir(argv[i]);
            if (dir == NULL) {
                perror(argv[i]);
                errors++;
                continue;
            }
            struct dirent *e;
            while ((e = readdir(dir)) != NULL) {
                if (e->d_name[0] == '.')
                    continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                errors += replay_file(path) != 0;
                files++;
            }
            closedir(dir);
        }
    }
    printf("fuzz replay: %d files, %d unreadable\n", files, errors);
    return files > 0 && errors == 0 ? 0 : 1;
}

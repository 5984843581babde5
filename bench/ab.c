/* In-process A/B of two builds of the search (docs/performance.md,
 * "In-process A/B"): both shared objects (bench/ab_search.c, each linked
 * with its own core) loaded into one process, each answering every path in
 * turn, round after round, on one core: the machine's pace, which drifts by
 * a fifth from minute to minute on a shared host, is the same for both, and
 * between two runs of one search the others have gone through the caches,
 * as in a server. A first round compares the bodies (byte for byte, by
 * hash) and makes what each process makes at first use.
 *
 * usage: ab A.so INDEX_PREFIX_A B.so INDEX_PREFIX_B DB PATHS ROUNDS [OUT]
 *   DB     a SQLite file, or a PostgreSQL connection string (host=... dbname=...)
 *   PATHS  request paths beginning with /v1, one a line (bench's longtail.paths)
 *   OUT    per path: A's and B's least ns, tab-separated, then the path
 * Prints the mean of each path's least CPU time for A and for B, and how
 * many bodies differ (exit 1 when any does). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*init_fn)(const char *, const char *);
typedef double (*run_fn)(const char *, unsigned long long *);

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: ab A.so PREFIX_A B.so PREFIX_B DB PATHS ROUNDS [OUT]\n");
        return 2;
    }
    run_fn run[2];
    for (int k = 0; k < 2; k++) {
        void *h = dlopen(argv[1 + 2 * k], RTLD_NOW | RTLD_LOCAL);
        void *si = h ? dlsym(h, "ab_init") : NULL, *sr = h ? dlsym(h, "ab_run") : NULL;
        init_fn init = NULL;
        run[k] = NULL;
        /* POSIX's dlsym gives functions as object pointers: copied, as ISO C
         * has no conversion between the two */
        if (si) memcpy(&init, &si, sizeof(init));
        if (sr) memcpy(&run[k], &sr, sizeof(run[k]));
        if (!init || !run[k] || init(argv[5], argv[2 + 2 * k]) != 0) {
            fprintf(stderr, "ab: %s: %s\n", argv[1 + 2 * k], h ? "cannot start" : dlerror());
            return 1;
        }
    }
    FILE *f = fopen(argv[6], "r");
    if (!f) {
        perror(argv[6]);
        return 1;
    }
    char **paths = NULL, line[8192];
    size_t n = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "/v1/", 4) != 0) continue;
        if (n == cap && !(paths = realloc(paths, (cap = cap ? 2 * cap : 1024) * sizeof(*paths))))
            return 1;
        paths[n++] = strdup(line + 3);
    }
    fclose(f);
    int rounds = atoi(argv[7]);
    double *best[2] = {calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(double))};
    if (!best[0] || !best[1] || rounds < 1) return 1;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long long ha = 0, hb = 0;
        run[0](paths[i], &ha);
        run[1](paths[i], &hb);
        if (ha != hb && differ++ < 5) fprintf(stderr, "ab: bodies differ: /v1%s\n", paths[i]);
    }
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < 2; j++) {
            int k = (r + j) & 1; /* A first in even rounds, B in odd */
            for (size_t i = 0; i < n; i++) {
                double t = run[k](paths[i], NULL);
                if (r == 0 || t < best[k][i]) best[k][i] = t;
            }
        }
    double sum[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        sum[0] += best[0][i];
        sum[1] += best[1][i];
    }
    printf("%zu paths, %zu bodies differ: A %.1f us, B %.1f us a search (%+.1f%%)\n", n, differ,
           sum[0] / (double)n / 1000, sum[1] / (double)n / 1000,
           100 * (sum[1] - sum[0]) / sum[0]);
    if (argc > 8 && (f = fopen(argv[8], "w"))) {
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.0f\t%.0f\t/v1%s\n", best[0][i], best[1][i], paths[i]);
        fclose(f);
    }
    return differ ? 1 : 0;
}

/* The buying load of `make bench`: N agents, each on its own keep-alive
 * connection, each repeating POST /quotes then POST /orders (with a fresh
 * Idempotency-Key) for a fixed time. Prints the rates and latencies, and
 * writes every order a 201 reported ("<order id> <total cents> <line of its key>"),
 * so that the bench can audit the database against what the agents were told.
 *
 * usage: agents HOST PORT BASE KEYS SKUS SECONDS ORDERS_OUT
 *   KEYS  one agent key per line; agent i uses line i % lines
 *   SKUS  one SKU per line; agent i starts at line i and steps through them
 * The number of agents is AGENTS in the environment (default 32). */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_AGENTS 256
#define BUF 65536

typedef struct lat {
    double *v;
    size_t n, cap;
} lat;

typedef struct agent {
    int index;
    int key_line; /* which line of KEYS */
    const char *key;
    int fd;
    char buf[BUF];
    size_t have; /* bytes of the next response already read */
    lat quote_ms, order_ms, pair_ms;
    long quotes_ok, orders_ok, orders_202, refused, errors, reconnects, resent;
    char last_error[200];
    FILE *orders_out;
} agent;

static const char *host, *base;
static int port;
static char **skus;
static size_t n_skus;
static double deadline;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void lat_add(lat *l, double ms)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->v = realloc(l->v, l->cap * sizeof(double));
        if (!l->v) abort();
    }
    l->v[l->n++] = ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(lat *l, double p)
{
    if (!l->n) return 0;
    size_t i = (size_t)(p * (double)(l->n - 1) + 0.5);
    return l->v[i];
}

static int connect_to(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &sa.sin_addr);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One request on the agent's connection; the body of the answer is left
 * NUL-terminated in a->buf. Returns the status, or -1 when the connection
 * failed (it is then reopened for the next request). */
static int request(agent *a, const char *method, const char *path, const char *idem,
                   const char *body)
{
    char req[2048];
    int n = snprintf(req, sizeof(req),
                     "%s %s%s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
                     "Service-Agent: agentshop-bench/1.0\r\nContent-Type: application/json\r\n"
                     "%s%s%sContent-Length: %zu\r\n\r\n%s",
                     method, base, path, host, port, a->key, idem ? "Idempotency-Key: " : "",
                     idem ? idem : "", idem ? "\r\n" : "", strlen(body), body);
    if (n < 0 || (size_t)n >= sizeof(req)) return -1;
    if (a->fd < 0) {
        a->fd = connect_to();
        a->have = 0;
        a->reconnects++;
        if (a->fd < 0) return -1;
    }
    for (int off = 0; off < n;) {
        ssize_t w = write(a->fd, req + off, (size_t)(n - off));
        if (w <= 0) goto broken;
        off += (int)w;
    }
    /* headers, then Content-Length bytes of body */
    char *end = NULL;
    for (;;) {
        a->buf[a->have] = '\0';
        if ((end = strstr(a->buf, "\r\n\r\n"))) break;
        if (a->have >= BUF - 1) goto broken;
        ssize_t r = read(a->fd, a->buf + a->have, BUF - 1 - a->have);
        if (r <= 0) goto broken;
        a->have += (size_t)r;
    }
    int status = 0;
    if (sscanf(a->buf, "HTTP/1.%*d %d", &status) != 1) goto broken;
    size_t head = (size_t)(end + 4 - a->buf), len = 0;
    const char *cl = strcasestr(a->buf, "\r\nContent-Length:");
    if (!cl || cl > end) goto broken;
    len = strtoul(cl + 17, NULL, 10);
    const char *conn = strcasestr(a->buf, "\r\nConnection: close");
    int closing = conn && conn < end;
    if (head + len >= BUF) goto broken;
    while (a->have < head + len) {
        ssize_t r = read(a->fd, a->buf + a->have, BUF - 1 - a->have);
        if (r <= 0) goto broken;
        a->have += (size_t)r;
    }
    /* the body to the front; what follows it (nothing, for one request at a time) is dropped */
    memmove(a->buf, a->buf + head, len);
    a->buf[len] = '\0';
    a->have = 0;
    if (closing) {
        close(a->fd);
        a->fd = -1;
    }
    return status;
broken:
    close(a->fd);
    a->fd = -1;
    return -1;
}

/* A request, sent again on a new connection when the connection failed before
 * an answer: httpd's event MPM closes idle keep-alive connections when all of
 * a child's workers are busy, and a request sent at that moment gets no
 * answer. Sending it again is what a client should do: a quote commits
 * nothing, and an order goes again with the same Idempotency-Key, so it is
 * answered once (replayed if the first attempt got through). */
#define TRIES 3
static int request_again(agent *a, const char *method, const char *path, const char *idem,
                         const char *body)
{
    int st = request(a, method, path, idem, body);
    for (int t = 1; st == -1 && t < TRIES; t++) {
        a->resent++;
        st = request(a, method, path, idem, body);
    }
    return st;
}

/* The string value of "name" in a flat JSON body, or NULL. */
static int json_str(const char *body, const char *name, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", name);
    const char *p = strstr(body, pat);
    if (!p) return -1;
    p += strlen(pat);
    size_t n = strcspn(p, "\"");
    if (n >= cap) return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

static long json_int(const char *body, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":", name);
    const char *p = strstr(body, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static void note_error(agent *a, const char *what, int status)
{
    a->errors++;
    snprintf(a->last_error, sizeof(a->last_error), "%s: %d %.150s", what, status,
             status > 0 ? a->buf : "(connection failed)");
}

static void *run(void *arg)
{
    agent *a = arg;
    a->fd = -1;
    size_t next = (size_t)a->index;
    long seq = 0;
    char body[512], quote_id[64], order_id[64], idem[64];
    while (now_ms() < deadline) {
        const char *sku = skus[next++ % n_skus];
        double t0 = now_ms();
        snprintf(body, sizeof(body), "{\"sku\":\"%s\",\"quantity\":1}", sku);
        int st = request_again(a, "POST", "/quotes", NULL, body);
        double t1 = now_ms();
        lat_add(&a->quote_ms, t1 - t0);
        if (st != 201 || json_str(a->buf, "id", quote_id, sizeof(quote_id)) != 0) {
            note_error(a, "POST /quotes", st);
            continue;
        }
        a->quotes_ok++;
        snprintf(idem, sizeof(idem), "bench-%d-%ld-%ld", a->index, (long)getpid(), seq++);
        snprintf(body, sizeof(body),
                 "{\"quote_id\":\"%s\",\"reason\":\"Benchmark: the usual item the user "
                 "reorders every month.\"}",
                 quote_id);
        st = request_again(a, "POST", "/orders", idem, body);
        double t2 = now_ms();
        lat_add(&a->order_ms, t2 - t1);
        if (st == 201 && json_str(a->buf, "id", order_id, sizeof(order_id)) == 0) {
            a->orders_ok++;
            lat_add(&a->pair_ms, t2 - t0);
            pthread_mutex_lock(&out_lock);
            fprintf(a->orders_out, "%s %ld %d\n", order_id, json_int(a->buf, "total_cents"),
                    a->key_line);
            pthread_mutex_unlock(&out_lock);
        } else if (st == 202) {
            a->orders_202++;
        } else if (st == 422 || st == 403 || st == 409) {
            a->refused++; /* the mandate or stock said no: counted, not an error */
            snprintf(a->last_error, sizeof(a->last_error), "refused: %d %.150s", st, a->buf);
        } else {
            note_error(a, "POST /orders", st);
        }
    }
    if (a->fd >= 0) close(a->fd);
    return NULL;
}

static char **read_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    char **v = NULL, line[256];
    size_t cap = 0;
    *n = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0]) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof(char *));
            if (!v) abort();
        }
        v[(*n)++] = strdup(line);
    }
    fclose(f);
    if (!*n) {
        fprintf(stderr, "%s: empty\n", path);
        exit(2);
    }
    return v;
}

static void merge(lat *into, lat *from)
{
    for (size_t i = 0; i < from->n; i++)
        lat_add(into, from->v[i]);
    free(from->v);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: agents HOST PORT BASE KEYS SKUS SECONDS ORDERS_OUT\n");
        return 2;
    }
    host = argv[1];
    port = atoi(argv[2]);
    base = argv[3];
    size_t n_keys;
    char **keys = read_lines(argv[4], &n_keys);
    skus = read_lines(argv[5], &n_skus);
    double secs = atof(argv[6]);
    FILE *out = fopen(argv[7], "w");
    if (!out) {
        perror(argv[7]);
        return 2;
    }
    int n = getenv("AGENTS") ? atoi(getenv("AGENTS")) : 32;
    if (n < 1 || n > MAX_AGENTS) n = 32;
    static agent agents[MAX_AGENTS];
    pthread_t th[MAX_AGENTS];
    double start = now_ms();
    deadline = start + secs * 1e3;
    for (int i = 0; i < n; i++) {
        agents[i].index = i;
        agents[i].key_line = (int)((size_t)i % n_keys);
        agents[i].key = keys[agents[i].key_line];
        agents[i].orders_out = out;
        pthread_create(&th[i], NULL, run, &agents[i]);
    }
    lat q = {0}, o = {0}, p = {0};
    long quotes = 0, orders = 0, o202 = 0, refused = 0, errors = 0, reconnects = 0, resent = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        agent *a = &agents[i];
        quotes += a->quotes_ok;
        orders += a->orders_ok;
        o202 += a->orders_202;
        refused += a->refused;
        errors += a->errors;
        reconnects += a->reconnects - 1;
        resent += a->resent;
        merge(&q, &a->quote_ms);
        merge(&o, &a->order_ms);
        merge(&p, &a->pair_ms);
        if (a->errors) fprintf(stderr, "agent %d: %ld errors, last %s\n", i, a->errors, a->last_error);
    }
    double elapsed = (now_ms() - start) / 1e3;
    fclose(out);
    qsort(q.v, q.n, sizeof(double), cmp_double);
    qsort(o.v, o.n, sizeof(double), cmp_double);
    qsort(p.v, p.n, sizeof(double), cmp_double);
    /* one line per figure, read by scripts/bench.sh */
    printf("agents %d\nseconds %.2f\nrequests %zu\n", n, elapsed, q.n + o.n);
    printf("quotes %ld\norders %ld\nconfirmations %ld\nrefused %ld\nerrors %ld\nreconnects %ld\n"
           "resent %ld\n",
           quotes, orders, o202, refused, errors, reconnects, resent);
    printf("orders_per_s %.1f\nrequests_per_s %.1f\n", (double)orders / elapsed,
           (double)(q.n + o.n) / elapsed);
    printf("quote_p50 %.3f\nquote_p99 %.3f\norder_p50 %.3f\norder_p99 %.3f\n", pct(&q, 0.5),
           pct(&q, 0.99), pct(&o, 0.5), pct(&o, 0.99));
    printf("pair_p50 %.3f\npair_p99 %.3f\n", pct(&p, 0.5), pct(&p, 0.99));
    free(q.v);
    free(o.v);
    free(p.v);
    return errors ? 1 : 0;
}

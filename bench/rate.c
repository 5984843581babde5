/* The fixed-rate load of `make bench`: requests sent at a constant rate
 * whatever the server's pace (an open loop), each on whichever of CONNS
 * keep-alive connections is free, and each request's latency counted from
 * the moment it was due, not from when a connection was free to send it: a
 * server that falls behind the rate shows its queue in the latencies.
 *
 * wrk is a closed loop: each of its 16 connections sends the next request
 * when the answer to the last one is in, as fast as the server goes. Its
 * latencies are those of a saturated server, a queue 16 deep on 2 cores, and
 * on this machine a static file's own p99 under it is 35-50 ms. What an agent
 * meets is the latency at a rate the server sustains, which is what this
 * measures (the rate is the bench's: 40% of the static file's, issue 16).
 *
 * usage: rate HOST PORT PATHS RATE SECONDS
 *   HOST  an IPv4 address
 *   PATHS one request path per line, sent in turn from a random line
 *   RATE  requests per second; RATE * SECONDS requests in all
 * CONNS in the environment: connections (default 64, at most 1024).
 *
 * Prints "key value" lines: sent, done, unanswered (still not answered 30 s
 * after the last request was due: the run stops there, and they count in
 * the percentiles with the time they had waited, a lower bound), late
 * (requests sent more than 1 ms after they were due: no connection was
 * free, or this client was not given the CPU in time; either way the wait is
 * in their latency), resent (sent again on a new connection after httpd
 * closed an idle one), rate (answers per second over the run), p50_ms,
 * p90_ms, p99_ms, p999_ms, max_ms, s2xx, s4xx. Exits 1 on a status that is
 * neither 2xx nor 4xx, an answer that is not HTTP, or a connection that
 * cannot be made. */
#define _GNU_SOURCE /* strcasestr, epoll_pwait2 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define TRIES 3

typedef struct conn {
    int fd;
    bool busy;
    size_t req;   /* the request it carries (its index: when it was due) */
    int tries;    /* connections it has been sent on */
    char *buf;    /* the answer so far */
    size_t have, cap;
    size_t sent;  /* bytes of the request written */
} conn;

static const char *host;
static int port;
static char **paths;
static size_t n_paths, first_path;
static double t0, interval;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static double due_ms(size_t i)
{
    return t0 + (double)i * interval;
}

static void die(const char *what)
{
    fprintf(stderr, "rate: %s\n", what);
    exit(1);
}

static char **read_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char **v = NULL, *line = NULL;
    size_t cap = 0, len = 0;
    *n = 0;
    ssize_t got;
    while ((got = getline(&line, &len, f)) > 0) {
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        if (!got) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 1024;
            if (!(v = realloc(v, cap * sizeof(char *)))) die("out of memory");
        }
        if (!(v[(*n)++] = strdup(line))) die("out of memory");
    }
    free(line);
    fclose(f);
    return v;
}

/* A new non-blocking connection, its connect under way (epoll says when it
 * can be written). */
static int connect_to(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) die("HOST is not an IPv4 address");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static int ep;

static void watch(conn *c, int op, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    if (epoll_ctl(ep, op, c->fd, &ev) != 0) die("epoll_ctl failed");
}

/* Writes what is left of c's request; true when all of it is out. */
static bool send_rest(conn *c, bool *broken)
{
    char req[4096];
    const char *path = paths[(first_path + c->req) % n_paths];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path, host, port);
    if (n < 0 || (size_t)n >= sizeof(req)) die("a path is too long");
    while (c->sent < (size_t)n) {
        ssize_t w = send(c->fd, req + c->sent, (size_t)n - c->sent, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINPROGRESS)) return false;
        if (w <= 0) {
            *broken = true;
            return false;
        }
        c->sent += (size_t)w;
    }
    return true;
}

static void start(conn *c, size_t req)
{
    c->busy = true;
    c->req = req;
    c->tries = 1;
    c->have = 0;
    c->sent = 0;
    bool broken = false;
    bool out = send_rest(c, &broken);
    watch(c, EPOLL_CTL_MOD, out || broken ? EPOLLIN : EPOLLIN | EPOLLOUT);
}

/* The connection closed or failed: a new one, and c's request (if any) sent
 * on it again, at most TRIES times in all. */
static size_t resent;
static void reopen(conn *c)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if ((c->fd = connect_to()) < 0) die("cannot connect");
    c->have = 0;
    c->sent = 0;
    struct epoll_event ev = {.events = EPOLLIN | (c->busy ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl failed");
    if (c->busy) {
        if (++c->tries > TRIES) die("a request failed on three connections");
        resent++;
    }
}

/* The length of a whole answer in c->buf, 0 while it is not all in; its
 * status in *status. Content-Length or chunked. */
static size_t whole(conn *c, int *status)
{
    c->buf[c->have] = '\0';
    char *end = strstr(c->buf, "\r\n\r\n");
    if (!end) return 0;
    if (sscanf(c->buf, "HTTP/1.%*d %d", status) != 1) die("an answer that is not HTTP");
    size_t head = (size_t)(end + 4 - c->buf);
    *end = '\0'; /* the headers alone, for strcasestr */
    const char *cl = strcasestr(c->buf, "\r\nContent-Length:");
    bool chunked = strcasestr(c->buf, "\r\nTransfer-Encoding: chunked") != NULL;
    *end = '\r';
    if (cl && !chunked) {
        size_t len = strtoul(cl + 17, NULL, 10);
        return c->have >= head + len ? head + len : 0;
    }
    if (!chunked) die("an answer with neither Content-Length nor chunks");
    size_t at = head;
    for (;;) {
        char *eol = strstr(c->buf + at, "\r\n");
        if (!eol) return 0;
        size_t size = strtoul(c->buf + at, NULL, 16);
        at = (size_t)(eol + 2 - c->buf);
        if (!size) { /* the last chunk, then (no trailers) an empty line */
            return c->have >= at + 2 ? at + 2 : 0;
        }
        if (c->have < at + size + 2) return 0;
        at += size + 2;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 6) die("usage: rate HOST PORT PATHS RATE SECONDS");
    host = argv[1];
    port = atoi(argv[2]);
    double rate = atof(argv[4]), secs = atof(argv[5]);
    if (port <= 0 || rate <= 0 || secs <= 0) die("PORT, RATE and SECONDS are positive numbers");
    if (!(paths = read_lines(argv[3], &n_paths)) || !n_paths) die("no paths");
    const char *cn = getenv("CONNS");
    int nconns = cn ? atoi(cn) : 64;
    if (nconns < 1 || nconns > MAX_CONNS) die("CONNS is 1 to 1024");
    struct timespec seed;
    clock_gettime(CLOCK_REALTIME, &seed);
    srand((unsigned)(seed.tv_nsec ^ getpid()));
    first_path = (size_t)rand() % n_paths;
    size_t total = (size_t)(rate * secs);
    interval = 1000.0 / rate;
    double *lat = malloc((total ? total : 1) * sizeof(double));
    conn *cs = calloc((size_t)nconns, sizeof(conn));
    conn **idle = calloc((size_t)nconns, sizeof(conn *));
    if (!lat || !cs || !idle) die("out of memory");
    if ((ep = epoll_create1(0)) < 0) die("epoll_create1 failed");
    size_t nidle = 0;
    for (int i = 0; i < nconns; i++) {
        conn *c = &cs[i];
        c->cap = 65536;
        if (!(c->buf = malloc(c->cap + 1))) die("out of memory");
        if ((c->fd = connect_to()) < 0) die("cannot connect");
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl failed");
        idle[nidle++] = c;
    }
    size_t next = 0, done = 0, late = 0, s2xx = 0, s4xx = 0;
    t0 = now_ms() + 50; /* the connections made */
    double stop_by = t0 + secs * 1000.0 + 30000.0; /* the last answers: at most 30 s more */
    struct epoll_event evs[64];
    while (done < total) {
        double now = now_ms();
        if (now > stop_by) break; /* a server this far behind: what is missing, below */
        /* the requests due, each on a free connection */
        while (next < total && due_ms(next) <= now && nidle) {
            if (now - due_ms(next) > 1.0) late++;
            start(idle[--nidle], next++);
        }
        /* until the next is due (when a connection is free to take it), or an event */
        struct timespec wait = {1, 0}, *tw = &wait;
        if (next < total && nidle) {
            double ms = due_ms(next) - now;
            if (ms < 0) ms = 0;
            wait.tv_sec = (time_t)(ms / 1000);
            wait.tv_nsec = (long)((ms - (double)wait.tv_sec * 1000) * 1e6);
        }
        int n = epoll_pwait2(ep, evs, 64, tw, NULL);
        if (n < 0 && errno != EINTR) die("epoll_pwait2 failed");
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            bool broken = false;
            if (c->busy && (evs[i].events & EPOLLOUT)) {
                if (send_rest(c, &broken)) watch(c, EPOLL_CTL_MOD, EPOLLIN);
                if (broken) {
                    reopen(c);
                    continue;
                }
            }
            if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            for (;;) {
                if (c->have == c->cap) {
                    c->cap *= 2;
                    if (!(c->buf = realloc(c->buf, c->cap + 1))) die("out of memory");
                }
                ssize_t r = recv(c->fd, c->buf + c->have, c->cap - c->have, 0);
                if (r < 0 && errno == EAGAIN) break;
                if (r <= 0) { /* closed: an idle one by httpd, or one mid-request */
                    broken = true;
                    break;
                }
                c->have += (size_t)r;
            }
            int status = 0;
            size_t len = c->busy && c->have ? whole(c, &status) : 0;
            if (len) {
                lat[done++] = now_ms() - due_ms(c->req);
                if (status >= 200 && status < 300)
                    s2xx++;
                else if (status >= 400 && status < 500)
                    s4xx++;
                else {
                    fprintf(stderr, "rate: status %d for %s\n", status,
                            paths[(first_path + c->req) % n_paths]);
                    exit(1);
                }
                c->busy = false;
                c->have = 0;
                idle[nidle++] = c;
                if (broken) reopen(c);
                continue;
            }
            if (broken) reopen(c);
        }
    }
    double end = now_ms(), span = end - t0;
    /* the requests still unanswered 30 s after the last was due (sent or
     * not) count with the time they have waited so far: their latencies,
     * and so the percentiles, are at least that; a slow server is a figure,
     * not a failure */
    size_t sent = next, answered = done, unanswered = total - done;
    for (int i = 0; i < nconns; i++)
        if (cs[i].busy) lat[done++] = end - due_ms(cs[i].req);
    while (next < total)
        lat[done++] = end - due_ms(next++);
    qsort(lat, done, sizeof(double), cmp_double);
#define PCT(p) (done ? lat[(size_t)((double)(done - 1) * (p))] : 0.0)
    printf("sent %zu\ndone %zu\nunanswered %zu\nlate %zu\nresent %zu\nrate %.1f\n", sent, answered,
           unanswered, late, resent, span > 0 ? (double)answered * 1000.0 / span : 0.0);
    printf("p50_ms %.2f\np90_ms %.2f\np99_ms %.2f\np999_ms %.2f\nmax_ms %.2f\n", PCT(0.5), PCT(0.9),
           PCT(0.99), PCT(0.999), done ? lat[done - 1] : 0.0);
    printf("s2xx %zu\ns4xx %zu\n", s2xx, s4xx);
    return 0;
}

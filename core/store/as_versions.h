/* The store's versions (as_search_version) one request read, shared with the
 * server's other requests for a short while (docs/search.md, "Reading the
 * versions").
 *
 * Every search and every product view needs the store's versions: which
 * catalogue, which rank version and how far the live sequence has gone. On
 * PostgreSQL that is a round trip per request, which under load is most of a
 * search's latency beyond its own CPU. A cell keeps the last versions read,
 * with the monotonic time their read began, in memory every process of the
 * server maps (httpd: anonymous shared memory made before the children
 * fork); a request reuses them while they are younger than the server's
 * limit (AgentShopVersionsMaxAge), else it reads the store and puts what it
 * read back. So versions are never older than the limit. Every commit made
 * through the server marks the cell stale before its request answers
 * (as_versions_stale, called by the store after each commit), and a read
 * that began before that mark is never put back (the generation): whatever
 * the server has written is seen by its next request, in any process.
 * Changes made elsewhere (another node, agentshopctl, a catalogue load) are
 * seen within the limit.
 *
 * Lock-free: readers check a sequence number around what they read, a
 * commit only raises the generation (what is kept counts only while kept at
 * the current one), and a request that finds the cell being written by
 * another keeps nothing (the other's read is as good; a writer that died
 * halfway leaves every request reading the store, as without a cell). Every
 * field is an atomic, so the cell works across processes on any platform
 * whose 64-bit atomics are lock-free (x86-64, arm64). */
#ifndef AS_VERSIONS_H
#define AS_VERSIONS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "as_store.h"

typedef struct as_versions_cell {
    _Atomic uint64_t seq; /* odd while a writer changes the cell */
    _Atomic uint64_t gen; /* raised by every commit (as_versions_stale) */
    _Atomic uint64_t kept_gen; /* the generation the kept read began at */
    _Atomic int64_t catalogue, rank, live;
    _Atomic int64_t read_ms; /* when the kept read began; 0: nothing kept */
} as_versions_cell;

#define AS_VERSIONS_MAX_AGE_MS 100   /* AgentShopVersionsMaxAge's default */
#define AS_VERSIONS_MAX_AGE_LIMIT 1000 /* its largest: a change shows within a second */

/* An empty cell (nothing kept). */
void as_versions_init(as_versions_cell *c);

/* The monotonic clock, in milliseconds, shared by every process of a host. */
int64_t as_versions_now_ms(void);

/* The kept versions into out when their read began less than max_age_ms
 * before now_ms; false otherwise (the caller reads the store). */
bool as_versions_get(as_versions_cell *c, int64_t now_ms, int64_t max_age_ms,
                     as_search_version *out);

/* The generation, taken before reading the store; given back to put. */
uint64_t as_versions_gen(as_versions_cell *c);

/* Keeps v, read from the store beginning at read_ms, unless a commit came
 * since gen was taken, a read that began later is kept already, or another
 * process is writing the cell. */
void as_versions_put(as_versions_cell *c, uint64_t gen, int64_t read_ms,
                     const as_search_version *v);

/* After a commit, before its request answers: nothing kept is reused, and
 * no read begun before now is kept. */
void as_versions_stale(as_versions_cell *c);

#endif

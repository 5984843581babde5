/* libFuzzer harness: a line of the catalogue feed (core/rules/as_feed.c), which an
 * operator's suppliers write and agentshopctl catalogue import reads.
 *
 * Invariants (abort() when broken): a line is either a record (a type, a
 * key, a withdrawal only with its keys) or at least one problem, each with a
 * reason; a record's export line (as_feed_line) reads back as a record of the
 * same type and key, and writes the same line again (export's round trip);
 * the problems' texts are valid UTF-8 when the line is (what agentshopctl
 * prints). Memory is the leak checker's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "as_feed.h"
#include "as_mem.h"
#include "as_util.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    as_feed_problems probs = {&m, NULL, 0, 0};
    as_feed_rec r;
    bool ok = as_feed_read(&m, (const char *)data, size, 1, &r, &probs);
    if (!ok) {
        CHECK(probs.n > 0, "a line refused without a problem");
        for (size_t i = 0; i < probs.n; i++) {
            CHECK(probs.v[i].reason && *probs.v[i].reason, "a problem without a reason");
            if (as_utf8_valid((const char *)data, size))
                CHECK(utf8_ok(probs.v[i].reason) && (!probs.v[i].field || utf8_ok(probs.v[i].field)),
                      "a problem's text is not UTF-8");
        }
        CHECK(r.v == NULL, "a refused line kept its object");
    } else {
        CHECK(probs.n == 0, "a record with problems");
        CHECK(r.v && r.key && *r.key, "a record without its key");
        CHECK(r.type < AS_FEED_N, "a record of no type");
        CHECK(r.type != AS_FEED_COMPAT || r.key2, "a compatibility without its device");
        char *line = as_feed_line(&m, r.v);
        CHECK(line, "a record export cannot write");
        as_feed_rec again;
        CHECK(as_feed_read(&m, line, strlen(line), 2, &again, &probs), "export's line is refused: %s",
              line);
        CHECK(again.type == r.type && strcmp(again.key, r.key) == 0 &&
                  again.withdrawn == r.withdrawn,
              "export's line is another record: %s", line);
        char *line2 = as_feed_line(&m, again.v);
        CHECK(line2 && strcmp(line, line2) == 0, "export's line changes when read and written: %s",
              line);
        json_decref(again.v);
        json_decref(r.v);
    }
    as_arena_destroy(a);
    return 0;
}

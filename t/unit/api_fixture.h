/* The endpoint tests' fixture: requests through as_handle against the fake
 * store's default catalogue. */
#ifndef API_FIXTURE_H
#define API_FIXTURE_H

#include "fake_store.h"
#include "unit_check.h"

#define API_TODAY 20468 /* 2026-01-15 */

typedef struct api_fx {
    unit_fx base; /* first: unit_mem() works on it */
    fake_db db;
    as_store store;
    as_config cfg;
    as_shop shop;
} api_fx;

/* The default catalogue, default configuration, noon of API_TODAY. */
static inline int api_setup(void **state)
{
    api_fx *fx = calloc(1, sizeof(*fx));
    if (!fx) return -1;
    fx->base.arena = as_arena_create();
    fx->base.mem = as_arena_mem(fx->base.arena);
    fake_db_default(&fx->db);
    fx->store = fake_store_make(&fx->db);
    as_config_defaults(&fx->cfg);
    fx->shop.mem = &fx->base.mem;
    fx->shop.store = &fx->store;
    fx->shop.cfg = &fx->cfg;
    fx->shop.now = (int64_t)API_TODAY * 86400 + 12 * 3600;
    *state = fx;
    return 0;
}

static inline int api_teardown(void **state)
{
    return unit_teardown(state); /* base is first: one arena and the fixture */
}

#endif

/* A synthetic catalogue of any size, for scale tests. */
#ifndef CTL_GENERATE_H
#define CTL_GENERATE_H

#include <jansson.h>

#include "as_db.h"

/* n_products products (and merchants, devices, offers, compatibility) into a
 * database without a catalogue, deterministically for seed, in one
 * transaction. */
apr_status_t ctl_generate_catalogue(as_db *db, apr_int64_t n_products, apr_uint64_t seed,
                                    json_t **summary, const char **err);

#endif

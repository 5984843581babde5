/* Loading a catalogue from JSON data files (sql/demo/) into the database. */
#ifndef AS_LOAD_H
#define AS_LOAD_H

#include <jansson.h>

#include "as_db.h"

/* A catalogue directory's merchants.json, devices.json and products.json,
 * parsed. Read apart from loading, so that the admin tool can read them before
 * it gives up root for the database's owner, who may not reach them (a
 * checkout under /root). On failure the arrays are NULL and err says why. */
typedef struct as_catalogue_files {
    json_t *merchants, *devices, *products;
    const char *err;
} as_catalogue_files;

void as_load_read(apr_pool_t *p, const char *dir, as_catalogue_files *out);
void as_load_release(as_catalogue_files *files);

/* Loads the files in one transaction. Does nothing when products exist
 * already (idempotent), so a read error matters only for an empty catalogue;
 * *summary says which. */
apr_status_t as_load_catalogue(as_db *db, const as_catalogue_files *files, json_t **summary,
                               const char **err);

#endif

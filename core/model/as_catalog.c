#include "as_catalog.h"

#include <string.h>

static const char *const fit_names[] = {"unknown", "fits", "does_not_fit"};
static const char *const verif_names[] = {"pending", "verified", "contradicted"};

const char *as_fit_name(as_fit f)
{
    return (unsigned)f <= AS_FIT_DOES_NOT_FIT ? fit_names[f] : fit_names[AS_FIT_UNKNOWN];
}

as_fit as_fit_parse(const char *name)
{
    if (name && strcmp(name, "fits") == 0) return AS_FIT_FITS;
    if (name && strcmp(name, "does_not_fit") == 0) return AS_FIT_DOES_NOT_FIT;
    return AS_FIT_UNKNOWN;
}

const char *as_verif_name(as_verif v)
{
    return (unsigned)v <= AS_VERIF_CONTRADICTED ? verif_names[v] : verif_names[AS_VERIF_PENDING];
}

as_verif as_verif_parse(const char *name)
{
    if (name && strcmp(name, "verified") == 0) return AS_VERIF_VERIFIED;
    if (name && strcmp(name, "contradicted") == 0) return AS_VERIF_CONTRADICTED;
    return AS_VERIF_PENDING;
}

/* What the buying operations share among their files (not for bindings). */
#ifndef AS_BUYING_INTERNAL_H
#define AS_BUYING_INTERNAL_H

#include "as_buying.h"

/* The confirmation link's token: an HMAC over what the link stands for (the
 * confirmation, its order and expiry) with the signing key. */
const char *as_confirmation_token(as_shop *shop, const as_confirmation *c);
/* An order that waited past its confirmation's expiry gives back its budget
 * and stock, inside the caller's transaction (AS_OK when another request
 * moved it first). */
int as_order_expire(as_shop *shop, as_order *o);

/* A refusal: *why filled, AS_SHOP_REFUSED returned. */
static inline as_shop_rc buying_refuse(as_problem *why, int status, const char *code,
                                       const char *field, const char *message)
{
    *why = (as_problem){status, code, field, message};
    return AS_SHOP_REFUSED;
}

#endif

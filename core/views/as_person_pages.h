/* The HTML pages a person reads: behind a confirmation link, a return label
 * to print, a passkey enrolment (docs/buying.md, docs/orders.md). Each
 * returns the whole page, allocated on m. */
#ifndef AS_PERSON_PAGES_H
#define AS_PERSON_PAGES_H

#include <stdbool.h>

#include "as_commerce.h"
#include "as_mem.h"

/* What the confirmation page shows for approving (core/api/as_passkey_api.c). */
typedef struct as_approval_ui {
    bool passkey;        /* the policy asks for one */
    bool has_passkey;    /* ... and the user has one */
    const char *options; /* JSON for the page's script: challenge, RP ID, credentials */
    const char *script;  /* the URL of webauthn.js */
    const char *problem; /* why passkeys cannot work here (the base URL), or NULL */
} as_approval_ui;

/* The page a human sees behind the signed link; ui NULL: the link approves.
 * now: the request's time, for "in 23 hours" and the delivery date. */
const char *as_confirmation_page(as_mem *m, const as_confirmation *c, const as_order *o,
                                 const char *action, const char *token, const char *notice,
                                 const as_approval_ui *ui, int64_t now);
/* The page a person's browser gets instead of an error object on a
 * confirmation link: what happened and what to do. again: a link that tries
 * the same page again (NULL: none); docs: the error's help page (or NULL). */
const char *as_person_error_page(as_mem *m, int status, const char *code, int retry_after,
                                 const char *again, const char *docs);
/* The label of return r of order o, to print and attach to the parcel. */
const char *as_return_label_page(as_mem *m, const as_return *r, const as_order *o);
/* The page of a passkey enrolment link: options and script for the page's
 * script, or the problem that stops it (then no button). */
const char *as_enrol_page(as_mem *m, const as_enrolment *e, const char *options, const char *script,
                          const char *problem);
/* Text for HTML: & < > " ' as entities. */
const char *as_html_escape(as_mem *m, const char *s);

#endif

/* JSON views of passkeys (docs/security.md): what a confirmation's page and
 * its JSON offer for approving, and an enrolment's options and outcome. Each
 * returns a new reference; those taking a json_t * steal it. */
#ifndef AS_PASSKEY_VIEW_H
#define AS_PASSKEY_VIEW_H

#include <jansson.h>

#include "as_commerce.h"
#include "as_mem.h"
#include "as_webauthn.h"

/* Approval by the signed link alone (AgentShopApproval link). */
json_t *as_view_approval_link(void);
/* Approval needs a passkey, and none can be asked for now: message says why
 * (NULL: the confirmation is decided). */
json_t *as_view_approval_unavailable(bool enrolled, const char *message);
/* The assertion's options for one of the person's passkeys. */
json_t *as_view_assertion_options(const char *challenge, const char *rp_id, const as_passkey *keys,
                                  size_t n, int64_t timeout_ms);
/* Approval with a passkey: the assertion's options (stolen). */
json_t *as_view_approval_passkey(json_t *options);
/* The registration's options of an enrolment (action: where the page posts
 * the result; token: the link's). */
json_t *as_view_enrol_options(as_mem *m, const char *challenge, const char *rp_id,
                              const as_enrolment *e, const as_passkey *keys, size_t n,
                              const char *action, const char *token, int64_t timeout_ms);
/* GET /enrol/{id} as JSON: the enrolment and its options (stolen). */
json_t *as_view_enrolment(const as_enrolment *e, json_t *options);
/* POST /enrol/{id}: the passkey registered. */
json_t *as_view_passkey_registered(as_mem *m, const as_passkey *key);

#endif

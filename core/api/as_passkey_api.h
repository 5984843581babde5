/* Passkeys for the people behind mandates (issue 17, docs/security.md): the
 * confirmation page's approval, over the shop's operations
 * (core/shop/as_passkeys.h). The enrolment endpoints and the pages' script
 * are handlers (as_handlers.h). */
#ifndef AS_PASSKEY_API_H
#define AS_PASSKEY_API_H

#include "as_api.h"
#include "as_passkeys.h"
#include "as_person_pages.h"

/* For a pending confirmation: under the passkey policy a challenge for it
 * (single use, 5 to 10 minutes left; the same one for every look within 5
 * minutes) and the user's credentials, as the JSON view's `approval` object
 * and *ui for the page (as_approval_plan_for, rendered). NULL when storage
 * failed. */
json_t *as_approval_offer(as_shop *shop, const as_request *req, const as_confirmation *c,
                          as_approval_ui *ui);

/* Inside the decision's transaction, before an approval under the passkey
 * policy: NULL when `a` is an assertion by one of the confirmation's user's
 * passkeys, user verified, answering a challenge issued for this very
 * confirmation (now used up) with a counter that grew (now kept). Otherwise
 * why not, for the person and the agent; *rc is set on a storage failure
 * (as_approval_check, its refusal as text). */
const char *as_approval_verify(as_shop *shop, const as_request *req, const as_confirmation *c,
                               const as_assertion *a, int *rc);

#endif

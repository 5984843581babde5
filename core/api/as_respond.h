/* The /v1 answers every handler and the glue share: the error object for
 * clients (docs/api.md, "Errors"), and the page a person's browser gets
 * instead on a confirmation link. */
#ifndef AS_RESPOND_H
#define AS_RESPOND_H

#include "as_mem.h"
#include "as_http.h" /* the error object: as_respond_error, as_respond_problem */
#include "as_request.h"
#include "as_validate.h"

/* The JSON error for a status httpd raised itself (413 from LimitRequestBody...). */
void as_respond_http_status(as_response *resp, int status);
/* The same, naming the part of the request httpd refused ("path", "headers" or
 * "body"): a 400 then carries it as `field`, with a message about that part. */
void as_respond_http_refusal(as_response *resp, int status, const char *part);

/* The error of a confirmation link as a page, when a person's browser asked
 * (docs/buying.md); as_handle calls it, the glue too for its own refusals. */
void as_person_error(as_mem *m, const as_request *req, as_response *resp);

#endif

#include "as_passkey_view.h"

#include <string.h>

#include "as_crypto.h"
#include "as_util.h"

static json_t *credential_ids(const as_passkey *keys, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(keys[i].id));
    return a;
}

json_t *as_view_approval_link(void)
{
    return json_pack("{s:s}", "method", "link");
}

json_t *as_view_approval_unavailable(bool enrolled, const char *message)
{
    return json_pack("{s:s, s:b, s:s?}", "method", "passkey", "passkey_enrolled", enrolled,
                     "message", message);
}

json_t *as_view_assertion_options(const char *challenge, const char *rp_id, const as_passkey *keys,
                                  size_t n, int64_t timeout_ms)
{
    return json_pack("{s:s, s:s, s:o, s:s, s:I}", "challenge", challenge, "rp_id", rp_id,
                     "allow_credentials", credential_ids(keys, n), "user_verification", "required",
                     "timeout_ms", (json_int_t)timeout_ms);
}

json_t *as_view_approval_passkey(json_t *options)
{
    return json_pack("{s:s, s:b, s:o, s:s}", "method", "passkey", "passkey_enrolled", true,
                     "passkey", options, "message",
                     "Approving needs the person's passkey (WebAuthn): only they can approve, "
                     "on this page. An agent cannot.");
}

json_t *as_view_enrol_options(as_mem *m, const char *challenge, const char *rp_id,
                              const as_enrolment *e, const as_passkey *keys, size_t n,
                              const char *action, const char *token, int64_t timeout_ms)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:[i, i, i], s:s, s:s, s:I}", "challenge", challenge,
        "rp_id", rp_id, "rp_name", "Agent Shop", "user", e->user_id, "user_handle",
        as_b64url_encode(m, (const unsigned char *)e->user_id, strlen(e->user_id)),
        "exclude_credentials", credential_ids(keys, n), "algorithms", AS_COSE_ES256, AS_COSE_EDDSA,
        AS_COSE_RS256, "user_verification", "required", "action", action, "timeout_ms",
        (json_int_t)timeout_ms);
    if (o) json_object_set_new(o, "token", json_string(token));
    return o;
}

json_t *as_view_enrolment(const as_enrolment *e, json_t *options)
{
    return json_pack("{s:s, s:s, s:I, s:o}", "enrolment_id", e->id, "user", e->user_id,
                     "expires_at_unix", (json_int_t)e->expires_at, "publicKey", options);
}

json_t *as_view_passkey_registered(as_mem *m, const as_passkey *key)
{
    return json_pack("{s:s, s:{s:s, s:I, s:s}, s:s}", "user", key->user_id, "passkey", "id",
                     key->id, "alg", (json_int_t)key->alg, "created_at",
                     as_time_format(m, key->created_at), "message",
                     "Passkey registered. Purchases above the threshold now wait for your "
                     "approval with it.");
}

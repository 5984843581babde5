/* WebAuthn (Level 2) for the people behind mandates: checking a passkey's
 * registration and an assertion made with it, as a relying party must
 * (section 7.1 and 7.2 of the W3C recommendation): the client data's type,
 * challenge and origin, the RP ID hash, the user-present and user-verified
 * flags, the signature over the authenticator data and the client data's
 * hash (OpenSSL), and the signature counter. CBOR (the attestation object,
 * the COSE public key) is read with libcbor once every length and count it
 * declares fits in the bytes it has; the authenticator data is read exactly
 * (after the key, one map of extensions when flagged, nothing else). Every
 * public key passes OpenSSL's check, RSA's only with exponent 65537.
 * Attestation statements are not verified: the server asks for attestation
 * "none" and trusts no authenticator model over another. */
#ifndef AS_WEBAUTHN_H
#define AS_WEBAUTHN_H

#include <stdbool.h>
#include <stdint.h>

#include "as_commerce.h"
#include "as_mem.h"


/* Who the server is: the RP ID (a host name) and the origin pages come from
 * ("https://shop.example", "http://localhost:8080"). */
typedef struct as_webauthn_rp {
    const char *id;
    const char *origin;
} as_webauthn_rp;

/* Both derived from the API's base URL (AgentShopBaseURL): false when it is
 * not an absolute http(s) URL. */
bool as_webauthn_rp_from_base(as_mem *m, const char *base_url, as_webauthn_rp *rp);

/* A registration (navigator.credentials.create) answering `challenge`: the
 * base64url clientDataJSON and attestationObject of the browser. On success
 * *out holds the new passkey (without user_id and created_at). Otherwise
 * false, and *why says what was wrong, for the person. */
bool as_webauthn_register(as_mem *m, const as_webauthn_rp *rp, const char *challenge,
                          const char *client_data, const char *attestation, as_passkey *out,
                          const char **why);

/* An assertion (navigator.credentials.get) by `key` answering `challenge`:
 * base64url clientDataJSON, authenticatorData and signature. On success
 * *new_count is the counter to keep. A counter that does not grow when
 * either side has one is refused (a cloned authenticator). */
bool as_webauthn_verify(as_mem *m, const as_webauthn_rp *rp, const char *challenge,
                        const as_passkey *key, const char *client_data, const char *auth_data,
                        const char *signature, int64_t *new_count, const char **why);

#endif

#include "as_webauthn.h"

#include <cbor.h>
#include <ctype.h>
#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>
#include <string.h>
#include <strings.h>

#include "as_crypto.h"
#include "as_util.h"

/* Authenticator data flags (section 6.1). */
enum { F_UP = 0x01, F_UV = 0x04, F_AT = 0x40, F_ED = 0x80 };
/* rpIdHash, flags, signCount */
enum { AUTH_HEAD = 37 };

static bool fail(const char **why, const char *msg)
{
    *why = msg;
    return false;
}

bool as_webauthn_rp_from_base(as_mem *m, const char *base, as_webauthn_rp *rp)
{
    const char *host;
    bool https;
    if (!base) return false;
    if (strncasecmp(base, "https://", 8) == 0) {
        https = true;
        host = base + 8;
    } else if (strncasecmp(base, "http://", 7) == 0) {
        https = false;
        host = base + 7;
    } else {
        return false;
    }
    size_t hl = strcspn(host, ":/?#");
    if (hl == 0 || host[0] == '[') return false; /* no IP literals: not an RP ID */
    char *id = as_strndup(m, host, hl);
    if (strspn(id, "0123456789.") == hl) return false; /* an IPv4 address is no RP ID either */
    for (char *c = id; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    const char *port = "";
    if (host[hl] == ':') {
        size_t pl = strspn(host + hl + 1, "0123456789");
        const char *digits = as_strndup(m, host + hl + 1, pl);
        bool usual = strcmp(digits, https ? "443" : "80") == 0;
        if (pl && !usual) port = as_printf(m, ":%s", digits);
    }
    rp->id = id;
    rp->origin = as_printf(m, "%s://%s%s", https ? "https" : "http", id, port);
    return true;
}

/* ---- CBOR ---- */

enum { CBOR_DEPTH = 8 }; /* COSE keys and attestation objects nest two or three deep */

/* One item's head at *at: its major type and argument (a length, a count or
 * a value). Indefinite lengths and reserved forms are refused: CTAP2's
 * canonical CBOR has none. */
static bool cbor_head(const unsigned char *p, size_t n, size_t *at, int *major, uint64_t *v)
{
    if (*at >= n) return false;
    unsigned ib = p[(*at)++], ai = ib & 31;
    *major = (int)(ib >> 5);
    if (ai < 24) {
        *v = ai;
        return true;
    }
    if (ai > 27) return false;
    size_t k = (size_t)1 << (ai - 24);
    if (k > n - *at) return false;
    *v = 0;
    for (size_t i = 0; i < k; i++)
        *v = *v << 8 | p[(*at)++];
    return true;
}

/* The size in bytes of the one CBOR item p starts with, or 0 when it is not
 * well formed. Every length and count it declares is checked against the
 * bytes that remain before libcbor sees it: cbor_load allocates what a
 * header declares (2^27 array items from 9 bytes). */
static size_t cbor_item_size(const unsigned char *p, size_t n)
{
    uint64_t left[CBOR_DEPTH] = {1}; /* items still to read at each depth */
    int d = 0;
    size_t at = 0;
    while (d >= 0) {
        if (left[d] == 0) {
            d--;
            continue;
        }
        left[d]--;
        int major;
        uint64_t v;
        if (!cbor_head(p, n, &at, &major, &v)) return 0;
        if (major == 2 || major == 3) { /* a byte or text string: its bytes follow */
            if (v > n - at) return 0;
            at += (size_t)v;
            continue;
        }
        if (major < 4 || major > 6) continue;   /* a number or a simple value */
        if (major != 6 && v > n - at) return 0; /* each item takes a byte at least */
        uint64_t items = major == 6 ? 1 : major == 5 ? 2 * v : v;
        if (items > n - at) return 0;
        if (items == 0) continue;
        if (++d == CBOR_DEPTH) return 0;
        left[d] = items;
    }
    return at;
}

/* Exactly one CBOR item in p, loaded; NULL for anything else. */
static cbor_item_t *cbor_load_one(const unsigned char *p, size_t n)
{
    struct cbor_load_result res;
    if (n == 0 || cbor_item_size(p, n) != n) return NULL;
    cbor_item_t *it = cbor_load(p, n, &res);
    if (it && (res.error.code != CBOR_ERR_NONE || res.read != n)) cbor_decref(&it);
    return it;
}

static bool cbor_int_value(const cbor_item_t *it, int64_t *v)
{
    if (cbor_isa_uint(it)) {
        uint64_t u = cbor_get_int(it);
        if (u > INT64_MAX) return false;
        *v = (int64_t)u;
        return true;
    }
    if (cbor_isa_negint(it)) {
        uint64_t u = cbor_get_int(it);
        if (u > INT64_MAX) return false;
        *v = -1 - (int64_t)u;
        return true;
    }
    return false;
}

/* A definite byte string's bytes. */
static bool cbor_bytes(const cbor_item_t *it, const unsigned char **b, size_t *n)
{
    if (!it || !cbor_isa_bytestring(it) || !cbor_bytestring_is_definite(it)) return false;
    *b = cbor_bytestring_handle(it);
    *n = cbor_bytestring_length(it);
    return true;
}

/* The value under integer key k of a COSE key map, or NULL. */
static cbor_item_t *cose_get(const cbor_item_t *map, int64_t k)
{
    struct cbor_pair *pairs = cbor_map_handle(map);
    for (size_t i = 0; i < cbor_map_size(map); i++) {
        int64_t v;
        if (cbor_int_value(pairs[i].key, &v) && v == k) return pairs[i].value;
    }
    return NULL;
}

/* The value under text key k of a map, or NULL. */
static cbor_item_t *text_get(const cbor_item_t *map, const char *k)
{
    struct cbor_pair *pairs = cbor_map_handle(map);
    size_t kl = strlen(k);
    for (size_t i = 0; i < cbor_map_size(map); i++) {
        const cbor_item_t *key = pairs[i].key;
        if (cbor_isa_string(key) && cbor_string_is_definite(key) &&
            cbor_string_length(key) == kl && memcmp(cbor_string_handle(key), k, kl) == 0)
            return pairs[i].value;
    }
    return NULL;
}

/* ---- keys ---- */

static EVP_PKEY *from_params(const char *type, OSSL_PARAM_BLD *bld)
{
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return pkey;
}

/* OpenSSL's checks of a public key (an EC point on its curve, an RSA modulus
 * and exponent in range), and RSA's exponent 65537, the only one
 * authenticators use: with e = 1 anyone forges a signature. */
static bool key_sound(EVP_PKEY *pkey)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    bool ok = c && EVP_PKEY_public_check(c) == 1;
    EVP_PKEY_CTX_free(c);
    if (ok && EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA) {
        BIGNUM *e = NULL;
        ok = EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e) == 1 && BN_is_word(e, 65537);
        BN_free(e);
    }
    return ok;
}

/* The COSE_Key (RFC 9053) as an OpenSSL key, for the algorithms offered. */
static EVP_PKEY *cose_key(const cbor_item_t *map, int64_t *alg, const char **why)
{
    int64_t kty = 0, a = 0, crv = 0;
    const cbor_item_t *kty_item = cbor_isa_map(map) ? cose_get(map, 1) : NULL;
    const cbor_item_t *alg_item = cbor_isa_map(map) ? cose_get(map, 3) : NULL;
    if (!kty_item || !alg_item || !cbor_int_value(kty_item, &kty) ||
        !cbor_int_value(alg_item, &a)) {
        *why = "the public key is not a COSE key with a type and an algorithm";
        return NULL;
    }
    const unsigned char *x, *y;
    size_t xn, yn;
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (a == AS_COSE_ES256 && kty == 2) {
        /* EC2, P-256 (crv 1), x and y of 32 bytes */
        if (cose_get(map, -1) && cbor_int_value(cose_get(map, -1), &crv) && crv == 1 &&
            cbor_bytes(cose_get(map, -2), &x, &xn) && xn == 32 &&
            cbor_bytes(cose_get(map, -3), &y, &yn) && yn == 32) {
            unsigned char pt[65];
            pt[0] = 4;
            memcpy(pt + 1, x, 32);
            memcpy(pt + 33, y, 32);
            OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
            OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt));
            pkey = from_params("EC", bld);
        }
    } else if (a == AS_COSE_RS256 && kty == 3) {
        /* RSA: n and e */
        if (cbor_bytes(cose_get(map, -1), &x, &xn) && xn >= 256 && xn <= 1024 &&
            cbor_bytes(cose_get(map, -2), &y, &yn) && yn >= 1 && yn <= 8) {
            BIGNUM *n = BN_bin2bn(x, (int)xn, NULL), *e = BN_bin2bn(y, (int)yn, NULL);
            if (n && e && BN_num_bits(n) >= 2048) {
                OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n);
                OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e);
                pkey = from_params("RSA", bld);
            }
            BN_free(n);
            BN_free(e);
        }
    } else if (a == AS_COSE_EDDSA && kty == 1) {
        /* OKP, Ed25519 (crv 6) */
        if (cose_get(map, -1) && cbor_int_value(cose_get(map, -1), &crv) && crv == 6 &&
            cbor_bytes(cose_get(map, -2), &x, &xn) && xn == 32)
            pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, 32);
    } else {
        OSSL_PARAM_BLD_free(bld);
        *why = "the passkey uses an algorithm this shop does not accept (ES256, RS256, Ed25519)";
        return NULL;
    }
    OSSL_PARAM_BLD_free(bld);
    if (pkey && !key_sound(pkey)) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    if (!pkey) *why = "the public key is malformed";
    *alg = a;
    return pkey;
}

/* ---- the client data ---- */

static bool client_data_ok(as_mem *m, const as_webauthn_rp *rp, const char *type,
                           const char *challenge, const char *b64, unsigned char hash[32],
                           const char **why)
{
    size_t n;
    unsigned char *raw = as_b64url_decode(m, b64, &n);
    if (!raw || n == 0) return fail(why, "clientDataJSON is not base64url");
    unsigned int hl = 0;
    if (!EVP_Digest(raw, n, hash, &hl, EVP_sha256(), NULL) || hl != 32)
        return fail(why, "hashing the client data failed");
    json_t *cd = json_loadb((const char *)raw, n, 0, NULL);
    const char *t = json_string_value(json_object_get(cd, "type"));
    const char *c = json_string_value(json_object_get(cd, "challenge"));
    const char *o = json_string_value(json_object_get(cd, "origin"));
    bool cross = json_is_true(json_object_get(cd, "crossOrigin"));
    bool ok = false;
    if (!json_is_object(cd))
        fail(why, "clientDataJSON is not a JSON object");
    else if (!t || strcmp(t, type) != 0)
        fail(why, "the client data is of another ceremony (type)");
    else if (!c || !challenge || !as_secure_equal(c, challenge))
        fail(why, "the client data answers another challenge");
    else if (!o || strcmp(o, rp->origin) != 0)
        fail(why, as_printf(m, "the client data comes from another origin (%.80s, not %s)",
                            o ? o : "none", rp->origin));
    else if (cross)
        fail(why, "the ceremony ran in a frame of another origin");
    else
        ok = true;
    json_decref(cd);
    return ok;
}

static bool rp_hash_ok(const as_webauthn_rp *rp, const unsigned char *auth)
{
    unsigned char h[32];
    unsigned int hl = 0;
    return EVP_Digest(rp->id, strlen(rp->id), h, &hl, EVP_sha256(), NULL) && hl == 32 &&
           memcmp(h, auth, 32) == 0;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- registration (section 7.1) ---- */

/* What follows the credential's public key: one CBOR map of extensions when
 * the ED flag says so, otherwise nothing. */
static bool extensions_ok(const unsigned char *p, size_t n, uint8_t flags, const char **why)
{
    if (!(flags & F_ED))
        return n == 0 || fail(why, "the authenticator data has bytes after the public key");
    if (n == 0 || p[0] >> 5 != 5 || cbor_item_size(p, n) != n)
        return fail(why, "the authenticator data's extensions are not one CBOR map");
    return true;
}

bool as_webauthn_register(as_mem *m, const as_webauthn_rp *rp, const char *challenge,
                          const char *client_data, const char *attestation, as_passkey *out,
                          const char **why)
{
    unsigned char cd_hash[32];
    memset(out, 0, sizeof(*out));
    if (!client_data_ok(m, rp, "webauthn.create", challenge, client_data, cd_hash, why))
        return false;
    size_t an;
    unsigned char *att = as_b64url_decode(m, attestation, &an);
    if (!att || an == 0) return fail(why, "attestationObject is not base64url");
    cbor_item_t *obj = cbor_load_one(att, an);
    bool ok = false;
    EVP_PKEY *pkey = NULL;
    cbor_item_t *key = NULL;
    const unsigned char *auth;
    size_t auth_n;
    if (!obj || !cbor_isa_map(obj)) {
        fail(why, "attestationObject is not a CBOR map");
        goto done;
    }
    if (!cbor_bytes(text_get(obj, "authData"), &auth, &auth_n) || auth_n < AUTH_HEAD + 18) {
        fail(why, "the attestation has no authenticator data with a credential");
        goto done;
    }
    if (!rp_hash_ok(rp, auth)) {
        fail(why, "the passkey was made for another site (RP ID hash)");
        goto done;
    }
    uint8_t flags = auth[32];
    if (!(flags & F_UP)) {
        fail(why, "the authenticator saw no user present");
        goto done;
    }
    if (!(flags & F_UV)) {
        fail(why, "the authenticator did not verify the user (PIN or biometrics)");
        goto done;
    }
    if (!(flags & F_AT)) {
        fail(why, "the authenticator data carries no credential");
        goto done;
    }
    size_t id_n = (size_t)auth[AUTH_HEAD + 16] << 8 | auth[AUTH_HEAD + 17];
    size_t at = AUTH_HEAD + 18;
    if (id_n == 0 || id_n > 1023 || at + id_n >= auth_n) {
        fail(why, "the credential id is malformed");
        goto done;
    }
    const unsigned char *cred_id = auth + at;
    at += id_n;
    size_t key_n = cbor_item_size(auth + at, auth_n - at);
    if (key_n == 0 || !(key = cbor_load_one(auth + at, key_n))) {
        fail(why, "the credential's public key is not CBOR");
        goto done;
    }
    if (!extensions_ok(auth + at + key_n, auth_n - at - key_n, flags, why)) goto done;
    int64_t alg = 0;
    pkey = cose_key(key, &alg, why);
    if (!pkey) goto done;
    unsigned char *der = NULL;
    int der_n = i2d_PUBKEY(pkey, &der);
    if (der_n <= 0) {
        fail(why, "the public key could not be encoded");
        goto done;
    }
    out->id = as_b64url_encode(m, cred_id, id_n);
    out->alg = alg;
    out->public_key = as_b64url_encode(m, der, (size_t)der_n);
    out->sign_count = be32(auth + 33);
    OPENSSL_free(der);
    ok = true;
done:
    EVP_PKEY_free(pkey);
    if (key) cbor_decref(&key);
    if (obj) cbor_decref(&obj);
    return ok;
}

/* ---- assertion (section 7.2) ---- */

static int key_type_of(int64_t alg)
{
    return alg == AS_COSE_ES256   ? EVP_PKEY_EC
           : alg == AS_COSE_RS256 ? EVP_PKEY_RSA
           : alg == AS_COSE_EDDSA ? EVP_PKEY_ED25519
                                  : -1;
}

bool as_webauthn_verify(as_mem *m, const as_webauthn_rp *rp, const char *challenge,
                        const as_passkey *key, const char *client_data, const char *auth_data,
                        const char *signature, int64_t *new_count, const char **why)
{
    unsigned char cd_hash[32];
    if (!client_data_ok(m, rp, "webauthn.get", challenge, client_data, cd_hash, why))
        return false;
    size_t auth_n, sig_n, der_n;
    unsigned char *auth = as_b64url_decode(m, auth_data, &auth_n);
    unsigned char *sig = as_b64url_decode(m, signature, &sig_n);
    unsigned char *der = as_b64url_decode(m, key->public_key, &der_n);
    if (!auth || auth_n < AUTH_HEAD) return fail(why, "authenticatorData is malformed");
    if (!sig || sig_n == 0 || sig_n > 1024) return fail(why, "the signature is malformed");
    if (!der) return fail(why, "the stored public key is unreadable");
    if (!rp_hash_ok(rp, auth)) return fail(why, "the assertion was made for another site");
    if (!(auth[32] & F_UP)) return fail(why, "the authenticator saw no user present");
    if (!(auth[32] & F_UV))
        return fail(why, "the authenticator did not verify the user (PIN or biometrics)");

    const unsigned char *p = der;
    EVP_PKEY *pkey = d2i_PUBKEY(NULL, &p, (long)der_n);
    if (!pkey || EVP_PKEY_get_base_id(pkey) != key_type_of(key->alg) || !key_sound(pkey)) {
        EVP_PKEY_free(pkey); /* a key registered before the checks were made is refused too */
        return fail(why, "the stored public key does not match its algorithm or is unsound");
    }
    /* signed: authenticatorData || SHA-256(clientDataJSON) */
    unsigned char *msg = as_alloc(m, auth_n + 32);
    memcpy(msg, auth, auth_n);
    memcpy(msg + auth_n, cd_hash, 32);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool good = ctx &&
                EVP_DigestVerifyInit(ctx, NULL, key->alg == AS_COSE_EDDSA ? NULL : EVP_sha256(),
                                     NULL, pkey) == 1 &&
                EVP_DigestVerify(ctx, sig, sig_n, msg, auth_n + 32) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    if (!good) return fail(why, "the signature does not verify with this passkey");
    int64_t count = be32(auth + 33);
    if ((count != 0 || key->sign_count != 0) && count <= key->sign_count)
        return fail(why, "the authenticator's counter went back: a copy of the passkey, or a "
                         "replayed assertion");
    *new_count = count;
    return true;
}

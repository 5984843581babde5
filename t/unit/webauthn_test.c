/* as_webauthn: a software authenticator (OpenSSL keys, libcbor) registers and
 * asserts as a browser would; every check a relying party makes is broken
 * once and must refuse. */
#include "unit_check.h"

#include <cbor.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "as_crypto.h"
#include "as_webauthn.h"

static const as_webauthn_rp RP = {"shop.example", "https://shop.example"};
static const char CHALLENGE[] = "Y2hhbGxlbmdlLW9mLXRoZS1jb25maXJtYXRpb24";

/* The authenticator: one key, its credential id and counter. */
typedef struct authn {
    EVP_PKEY *key;
    int64_t alg;
    unsigned char cred[16];
    uint32_t count;
} authn;

static authn make_authn(int64_t alg)
{
    authn a = {NULL, alg, {0}, 0};
    const char *type = alg == AS_COSE_ES256 ? "EC" : alg == AS_COSE_RS256 ? "RSA" : "ED25519";
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    assert_non_null(ctx);
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    if (alg == AS_COSE_ES256) {
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0),
            OSSL_PARAM_construct_end()};
        assert_int_equal(EVP_PKEY_CTX_set_params(ctx, params), 1);
    } else if (alg == AS_COSE_RS256) {
        assert_int_equal(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048), 1);
    }
    assert_int_equal(EVP_PKEY_generate(ctx, &a.key), 1);
    EVP_PKEY_CTX_free(ctx);
    for (size_t i = 0; i < sizeof(a.cred); i++)
        a.cred[i] = (unsigned char)(0xA0 + i);
    return a;
}

static void put(cbor_item_t *map, cbor_item_t *k, cbor_item_t *v)
{
    assert_true(cbor_map_add(map, (struct cbor_pair){cbor_move(k), cbor_move(v)}));
}

static cbor_item_t *cose_int(int64_t v)
{
    return v >= 0 ? cbor_build_uint32((uint32_t)v) : cbor_build_negint32((uint32_t)(-1 - v));
}

/* An RSA exponent of the test's choosing: its big-endian bytes. */
typedef struct rsa_e {
    const unsigned char *b;
    size_t n;
} rsa_e;

/* The key as COSE_Key; an RSA key with exponent e when e->b is set. */
static cbor_item_t *cose_of(const authn *a, int64_t alg_claimed, const rsa_e *e_as)
{
    cbor_item_t *map = cbor_new_definite_map(5);
    if (a->alg == AS_COSE_ES256) {
        unsigned char pt[65];
        size_t n = 0;
        assert_int_equal(EVP_PKEY_get_octet_string_param(a->key, OSSL_PKEY_PARAM_PUB_KEY, pt,
                                                         sizeof(pt), &n),
                         1);
        assert_int_equal(n, 65);
        put(map, cose_int(1), cose_int(2));
        put(map, cose_int(3), cose_int(alg_claimed));
        put(map, cose_int(-1), cose_int(1));
        put(map, cose_int(-2), cbor_build_bytestring(pt + 1, 32));
        put(map, cose_int(-3), cbor_build_bytestring(pt + 33, 32));
    } else if (a->alg == AS_COSE_RS256) {
        BIGNUM *n = NULL, *e = NULL;
        assert_int_equal(EVP_PKEY_get_bn_param(a->key, OSSL_PKEY_PARAM_RSA_N, &n), 1);
        assert_int_equal(EVP_PKEY_get_bn_param(a->key, OSSL_PKEY_PARAM_RSA_E, &e), 1);
        unsigned char nb[512], eb[8];
        int nl = BN_bn2bin(n, nb), el = BN_bn2bin(e, eb);
        put(map, cose_int(1), cose_int(3));
        put(map, cose_int(3), cose_int(alg_claimed));
        put(map, cose_int(-1), cbor_build_bytestring(nb, (size_t)nl));
        put(map, cose_int(-2),
            e_as->b ? cbor_build_bytestring(e_as->b, e_as->n)
                    : cbor_build_bytestring(eb, (size_t)el));
        BN_free(n);
        BN_free(e);
    } else {
        unsigned char raw[32];
        size_t n = sizeof(raw);
        assert_int_equal(EVP_PKEY_get_raw_public_key(a->key, raw, &n), 1);
        put(map, cose_int(1), cose_int(1));
        put(map, cose_int(3), cose_int(alg_claimed));
        put(map, cose_int(-1), cose_int(6));
        put(map, cose_int(-2), cbor_build_bytestring(raw, 32));
    }
    return map;
}

typedef struct shape {
    const char *rp_id;   /* NULL: RP.id */
    uint8_t flags;       /* 0: UP | UV (| AT when registering) */
    const char *type;    /* NULL: the ceremony's own */
    const char *challenge, *origin;
    bool cross_origin;
    int64_t alg_claimed; /* 0: the key's */
    const char *after;   /* bytes after the COSE key */
    size_t after_n;      /* how many */
    rsa_e e;             /* an RSA key's exponent; unset: the key's own */
} shape;

static const char *client_data(as_mem *m, const shape *s, const char *type)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:b}", "type", s->type ? s->type : type, "challenge",
                          s->challenge ? s->challenge : CHALLENGE, "origin",
                          s->origin ? s->origin : RP.origin, "crossOrigin", s->cross_origin);
    char *text = json_dumps(o, JSON_COMPACT);
    const char *b = as_b64url_encode(m, (const unsigned char *)text, strlen(text));
    free(text);
    json_decref(o);
    return b;
}

/* rpIdHash | flags | counter [| attested credential data] */
static size_t auth_head(unsigned char *buf, const shape *s, uint8_t flags, uint32_t count)
{
    const char *id = s->rp_id ? s->rp_id : RP.id;
    unsigned int hl = 0;
    assert_int_equal(EVP_Digest(id, strlen(id), buf, &hl, EVP_sha256(), NULL), 1);
    buf[32] = s->flags ? s->flags : flags;
    buf[33] = (unsigned char)(count >> 24);
    buf[34] = (unsigned char)(count >> 16);
    buf[35] = (unsigned char)(count >> 8);
    buf[36] = (unsigned char)count;
    return 37;
}

/* The browser's (clientDataJSON, attestationObject) of a registration. */
static void registration(as_mem *m, const authn *a, const shape *s, const char **cd,
                         const char **att)
{
    unsigned char auth[2048];
    size_t n = auth_head(auth, s, 0x01 | 0x04 | 0x40, a->count);
    memset(auth + n, 0x11, 16); /* aaguid */
    n += 16;
    auth[n++] = 0;
    auth[n++] = sizeof(a->cred);
    memcpy(auth + n, a->cred, sizeof(a->cred));
    n += sizeof(a->cred);
    cbor_item_t *key = cose_of(a, s->alg_claimed ? s->alg_claimed : a->alg, &s->e);
    unsigned char *kb = NULL;
    size_t kcap = 0, kn = cbor_serialize_alloc(key, &kb, &kcap);
    assert_true(kn > 0 && n + kn + s->after_n < sizeof(auth));
    memcpy(auth + n, kb, kn);
    n += kn;
    if (s->after_n) memcpy(auth + n, s->after, s->after_n); /* none: after may be NULL */
    n += s->after_n;
    free(kb);
    cbor_decref(&key);
    cbor_item_t *obj = cbor_new_definite_map(3);
    put(obj, cbor_build_string("fmt"), cbor_build_string("none"));
    put(obj, cbor_build_string("attStmt"), cbor_new_definite_map(0));
    put(obj, cbor_build_string("authData"), cbor_build_bytestring(auth, n));
    unsigned char *ob = NULL;
    size_t ocap = 0, on = cbor_serialize_alloc(obj, &ob, &ocap);
    *att = as_b64url_encode(m, ob, on);
    free(ob);
    cbor_decref(&obj);
    *cd = client_data(m, s, "webauthn.create");
}

/* The browser's (clientDataJSON, authenticatorData, signature) of an assertion. */
static void assertion(as_mem *m, authn *a, const shape *s, const char **cd, const char **ad,
                      const char **sig)
{
    unsigned char auth[64];
    size_t n = auth_head(auth, s, 0x01 | 0x04, ++a->count);
    *cd = client_data(m, s, "webauthn.get");
    size_t cdn;
    unsigned char *cdraw = as_b64url_decode(m, *cd, &cdn);
    unsigned char msg[96];
    memcpy(msg, auth, n);
    unsigned int hl = 0;
    assert_int_equal(EVP_Digest(cdraw, cdn, msg + n, &hl, EVP_sha256(), NULL), 1);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    assert_int_equal(EVP_DigestSignInit(ctx, NULL, a->alg == AS_COSE_EDDSA ? NULL : EVP_sha256(),
                                        NULL, a->key),
                     1);
    unsigned char sb[512];
    size_t sn = sizeof(sb);
    assert_int_equal(EVP_DigestSign(ctx, sb, &sn, msg, n + 32), 1);
    EVP_MD_CTX_free(ctx);
    *ad = as_b64url_encode(m, auth, n);
    *sig = as_b64url_encode(m, sb, sn);
}

static void test_rp_from_base(void **state)
{
    as_mem *m = unit_mem(state);
    as_webauthn_rp rp;
    assert_true(as_webauthn_rp_from_base(m, "http://localhost:8080/v1", &rp));
    assert_string_equal(rp.id, "localhost");
    assert_string_equal(rp.origin, "http://localhost:8080");
    assert_true(as_webauthn_rp_from_base(m, "https://Shop.Example:443/v1", &rp));
    assert_string_equal(rp.id, "shop.example");
    assert_string_equal(rp.origin, "https://shop.example");
    assert_true(as_webauthn_rp_from_base(m, "https://shop.example/api/v1", &rp));
    assert_string_equal(rp.origin, "https://shop.example");
    assert_false(as_webauthn_rp_from_base(m, "http://127.0.0.1:8080/v1", &rp));
    assert_false(as_webauthn_rp_from_base(m, "http://[::1]:8080/v1", &rp));
    assert_false(as_webauthn_rp_from_base(m, "ftp://shop.example/v1", &rp));
    assert_false(as_webauthn_rp_from_base(m, NULL, &rp));
}

/* Each algorithm: registered, then two assertions; the key of one does not
 * verify the other's. */
static void test_round_trip(void **state)
{
    as_mem *m = unit_mem(state);
    const int64_t algs[] = {AS_COSE_ES256, AS_COSE_EDDSA, AS_COSE_RS256};
    as_passkey keys[3];
    authn as[3];
    for (size_t i = 0; i < 3; i++) {
        as[i] = make_authn(algs[i]);
        shape s = {0};
        const char *cd, *att, *why = NULL, *ad, *sig;
        registration(m, &as[i], &s, &cd, &att);
        assert_true(as_webauthn_register(m, &RP, CHALLENGE, cd, att, &keys[i], &why));
        assert_int_equal(keys[i].alg, algs[i]);
        assert_string_equal(keys[i].id, as_b64url_encode(m, as[i].cred, sizeof(as[i].cred)));
        for (int k = 0; k < 2; k++) {
            int64_t count = -1;
            assertion(m, &as[i], &s, &cd, &ad, &sig);
            assert_true(as_webauthn_verify(m, &RP, CHALLENGE, &keys[i], cd, ad, sig, &count, &why));
            assert_int_equal(count, as[i].count);
            keys[i].sign_count = count;
        }
    }
    /* the ES256 authenticator's assertion against the Ed25519 key */
    shape s = {0};
    const char *cd, *ad, *sig, *why = NULL;
    int64_t count;
    assertion(m, &as[0], &s, &cd, &ad, &sig);
    as_passkey other = keys[1];
    other.sign_count = 0;
    assert_false(as_webauthn_verify(m, &RP, CHALLENGE, &other, cd, ad, sig, &count, &why));
    for (size_t i = 0; i < 3; i++)
        EVP_PKEY_free(as[i].key);
}

static void test_registration_refusals(void **state)
{
    as_mem *m = unit_mem(state);
    authn a = make_authn(AS_COSE_ES256);
    const struct {
        const char *label;
        shape s;
        const char *needle;
    } rows[] = {
        {"another challenge", {.challenge = "b3RoZXI"}, "another challenge"},
        {"another origin", {.origin = "https://evil.example"}, "another origin"},
        {"a get, not a create", {.type = "webauthn.get"}, "another ceremony"},
        {"another RP ID", {.rp_id = "evil.example"}, "another site"},
        {"no user verification", {.flags = 0x01 | 0x40}, "did not verify the user"},
        {"no user present", {.flags = 0x04 | 0x40}, "no user present"},
        {"no credential", {.flags = 0x01 | 0x04}, "no credential"},
        {"in a cross-origin frame", {.cross_origin = true}, "frame of another origin"},
        {"ES384", {.alg_claimed = -35}, "algorithm"},
        {"bytes after the key", {.after = "\x00", .after_n = 1}, "after the public key"},
        {"an extensions map, but no ED flag",
         {.after = "\xa0", .after_n = 1},
         "after the public key"},
        {"ED, and no extensions",
         {.flags = 0x01 | 0x04 | 0x40 | 0x80},
         "extensions are not one CBOR map"},
        {"ED, and a number, not a map",
         {.flags = 0x01 | 0x04 | 0x40 | 0x80, .after = "\x00", .after_n = 1},
         "extensions are not one CBOR map"},
        {"ED, and a byte after the extensions",
         {.flags = 0x01 | 0x04 | 0x40 | 0x80, .after = "\xa0\x00", .after_n = 2},
         "extensions are not one CBOR map"},
        {"ED, and a map cut short",
         {.flags = 0x01 | 0x04 | 0x40 | 0x80, .after = "\xa1\x00", .after_n = 2},
         "extensions are not one CBOR map"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *cd, *att, *why = NULL;
        as_passkey k;
        registration(m, &a, &rows[i].s, &cd, &att);
        CHECK(rows[i].label, !as_webauthn_register(m, &RP, CHALLENGE, cd, att, &k, &why));
        CHECK_CONTAINS(rows[i].label, why, rows[i].needle);
    }
    ROWS_DONE();
    const char *why = NULL;
    as_passkey k;
    assert_false(as_webauthn_register(m, &RP, CHALLENGE, "e30", "not base64url!", &k, &why));
    assert_false(as_webauthn_register(m, &RP, CHALLENGE, "e30", "oA", &k, &why)); /* {} */
    EVP_PKEY_free(a.key);
}

/* authenticatorData parsed exactly: with ED, one map of extensions after the
 * key is accepted (the refusals are rows of test_registration_refusals). */
static void test_registration_extensions(void **state)
{
    as_mem *m = unit_mem(state);
    authn a = make_authn(AS_COSE_ES256);
    static const char ext[] = "\xa1\x6b"
                              "credProtect\x01";
    shape s = {.flags = 0x01 | 0x04 | 0x40 | 0x80, .after = ext, .after_n = sizeof(ext) - 1};
    const char *cd, *att, *why = NULL;
    as_passkey k;
    registration(m, &a, &s, &cd, &att);
    assert_true(as_webauthn_register(m, &RP, CHALLENGE, cd, att, &k, &why));
    EVP_PKEY_free(a.key);
}

/* RSA keys with any exponent but 65537 are refused (with e = 1 a signature
 * is the padded hash itself: anyone could forge one). */
static void test_rsa_exponents(void **state)
{
    as_mem *m = unit_mem(state);
    authn a = make_authn(AS_COSE_RS256);
    const struct {
        const char *label;
        rsa_e e;
    } rows[] = {
        {"e = 0", {(const unsigned char *)"\x00", 1}},
        {"e = 1", {(const unsigned char *)"\x01", 1}},
        {"e = 2", {(const unsigned char *)"\x02", 1}},
        {"e = 3", {(const unsigned char *)"\x03", 1}},
        {"e = 17", {(const unsigned char *)"\x11", 1}},
        {"e of 8 bytes", {(const unsigned char *)"\x01\x00\x00\x00\x00\x00\x00\x01", 8}},
        {"e = 65539", {(const unsigned char *)"\x01\x00\x03", 3}},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        shape s = {.e = rows[i].e};
        const char *cd, *att, *why = NULL;
        as_passkey k;
        registration(m, &a, &s, &cd, &att);
        CHECK(rows[i].label, !as_webauthn_register(m, &RP, CHALLENGE, cd, att, &k, &why));
        CHECK_CONTAINS(rows[i].label, why, "malformed");
    }
    ROWS_DONE();
    shape s = {.e = {(const unsigned char *)"\x01\x00\x01", 3}};
    const char *cd, *att, *why = NULL;
    as_passkey k;
    registration(m, &a, &s, &cd, &att);
    assert_true(as_webauthn_register(m, &RP, CHALLENGE, cd, att, &k, &why));
    EVP_PKEY_free(a.key);
}

/* A passkey stored with e = 1 (as registration allowed before): the agent
 * alone makes a "signature" (the PKCS #1 v1.5 encoding of the hash) that
 * verifies under it. verify refuses the key. */
static void test_rsa_e1_forgery(void **state)
{
    as_mem *m = unit_mem(state);
    authn a = make_authn(AS_COSE_RS256);
    BIGNUM *n = NULL, *one = BN_new();
    assert_int_equal(EVP_PKEY_get_bn_param(a.key, OSSL_PKEY_PARAM_RSA_N, &n), 1);
    assert_int_equal(BN_set_word(one, 1), 1);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n);
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, one);
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *weak = NULL;
    assert_int_equal(EVP_PKEY_fromdata_init(ctx), 1);
    assert_int_equal(EVP_PKEY_fromdata(ctx, &weak, EVP_PKEY_PUBLIC_KEY, params), 1);
    unsigned char *der = NULL;
    int der_n = i2d_PUBKEY(weak, &der);
    assert_true(der_n > 0);
    as_passkey key = {.id = as_b64url_encode(m, a.cred, sizeof(a.cred)),
                      .user_id = "u1",
                      .alg = AS_COSE_RS256,
                      .public_key = as_b64url_encode(m, der, (size_t)der_n)};
    /* the assertion the agent makes up: EM = 00 01 FF.. 00 DigestInfo(SHA-256(msg)) */
    shape plain = {0};
    const char *cd = client_data(m, &plain, "webauthn.get");
    unsigned char auth[37];
    size_t an = auth_head(auth, &plain, 0x01 | 0x04, 1);
    size_t cdn;
    unsigned char *cdraw = as_b64url_decode(m, cd, &cdn);
    unsigned char msg[37 + 32], h[32];
    memcpy(msg, auth, an);
    unsigned int hl = 0;
    assert_int_equal(EVP_Digest(cdraw, cdn, msg + an, &hl, EVP_sha256(), NULL), 1);
    assert_int_equal(EVP_Digest(msg, an + 32, h, &hl, EVP_sha256(), NULL), 1);
    static const unsigned char info[] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                         0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};
    size_t k = (size_t)BN_num_bytes(n);
    unsigned char *em = as_alloc(m, k);
    memset(em, 0xff, k);
    em[0] = 0x00, em[1] = 0x01;
    em[k - 32 - sizeof(info) - 1] = 0x00;
    memcpy(em + k - 32 - sizeof(info), info, sizeof(info));
    memcpy(em + k - 32, h, 32);
    int64_t count = 0;
    const char *why = NULL;
    assert_false(as_webauthn_verify(m, &RP, CHALLENGE, &key, cd, as_b64url_encode(m, auth, an),
                                    as_b64url_encode(m, em, k), &count, &why));
    assert_non_null(strstr(why, "unsound"));
    OPENSSL_free(der);
    EVP_PKEY_free(weak);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(one);
    EVP_PKEY_free(a.key);
}

/* Registers the attestation object att (raw bytes) in a child process: true
 * when it was refused and the child's peak memory stayed within 64 MiB of the
 * parent's. */
static bool refused_small(as_mem *m, const unsigned char *att, size_t n)
{
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        shape s = {0};
        const char *why = NULL;
        as_passkey k;
        bool ok = as_webauthn_register(m, &RP, CHALLENGE, client_data(m, &s, "webauthn.create"),
                                       as_b64url_encode(m, att, n), &k, &why);
        _exit(ok ? 1 : 0);
    }
    int status = 0;
    struct rusage child;
    assert_int_equal(wait4(pid, &status, 0, &child), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status) == 0 && child.ru_maxrss - self.ru_maxrss < 64 * 1024;
}

/* An attestation object whose authData holds a credential whose key is `key`. */
static size_t att_with_key(unsigned char *out, const unsigned char *key, size_t kn)
{
    unsigned char auth[256];
    shape s = {0};
    size_t n = auth_head(auth, &s, 0x01 | 0x04 | 0x40, 0);
    memset(auth + n, 0x11, 16);
    n += 16;
    auth[n++] = 0, auth[n++] = 4;
    memcpy(auth + n, "cred", 4);
    n += 4;
    memcpy(auth + n, key, kn);
    n += kn;
    static const unsigned char head[] = {0xa1, 0x68, 'a', 'u', 't', 'h', 'D', 'a', 't', 'a', 0x58};
    memcpy(out, head, sizeof(head));
    out[sizeof(head)] = (unsigned char)n;
    memcpy(out + sizeof(head) + 1, auth, n);
    return sizeof(head) + 1 + n;
}

/* CBOR whose headers declare more than it holds is refused before libcbor
 * allocates for it: 9 bytes declaring 2^27 items took 1 GiB. */
static void test_cbor_bounds(void **state)
{
    as_mem *m = unit_mem(state);
    static const struct {
        const char *label;
        const char *cbor;
        size_t n;
    } rows[] = {
        {"an array of 2^27 items", "\x9b\x00\x00\x00\x00\x08\x00\x00\x00", 9},
        {"a map of 2^26 pairs", "\xbb\x00\x00\x00\x00\x04\x00\x00\x00", 9},
        {"an array of 2^32 items", "\x9a\xff\xff\xff\xff", 5},
        {"a byte string of 2^40 bytes", "\x5b\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10},
        {"an indefinite array", "\x9f\x00\xff", 3},
        {"arrays 16 deep", "\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\x80", 16},
        {"a map of 2^27 pairs after a key",
         "\xa2\x63"
         "fmt\xbb\x00\x00\x00\x00\x08\x00\x00\x00",
         13},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        CHECK(rows[i].label, refused_small(m, (const unsigned char *)rows[i].cbor, rows[i].n));
    }
    /* the same header in the credential's public key */
    unsigned char att[512];
    size_t an = att_with_key(att, (const unsigned char *)"\x9b\x00\x00\x00\x00\x08\x00\x00\x00", 9);
    CHECK("a COSE key of 2^27 items", refused_small(m, att, an));
    ROWS_DONE();
}

static void test_assertion_refusals(void **state)
{
    as_mem *m = unit_mem(state);
    authn a = make_authn(AS_COSE_ES256);
    shape plain = {0};
    const char *cd, *att, *ad, *sig, *why = NULL;
    as_passkey key;
    registration(m, &a, &plain, &cd, &att);
    assert_true(as_webauthn_register(m, &RP, CHALLENGE, cd, att, &key, &why));
    const struct {
        const char *label;
        shape s;
        const char *needle;
    } rows[] = {
        {"another challenge", {.challenge = "b3RoZXI"}, "another challenge"},
        {"another origin", {.origin = "http://shop.example"}, "another origin"},
        {"a create, not a get", {.type = "webauthn.create"}, "another ceremony"},
        {"another RP ID", {.rp_id = "shop.example.evil"}, "another site"},
        {"no user verification", {.flags = 0x01}, "did not verify the user"},
        {"no user present", {.flags = 0x04}, "no user present"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int64_t count;
        assertion(m, &a, &rows[i].s, &cd, &ad, &sig);
        CHECK(rows[i].label,
              !as_webauthn_verify(m, &RP, CHALLENGE, &key, cd, ad, sig, &count, &why));
        CHECK_CONTAINS(rows[i].label, why, rows[i].needle);
    }
    ROWS_DONE();
    int64_t count;
    /* a signature with one bit changed */
    assertion(m, &a, &plain, &cd, &ad, &sig);
    size_t sn;
    unsigned char *raw = as_b64url_decode(m, sig, &sn);
    raw[sn / 2] ^= 0x01;
    assert_false(as_webauthn_verify(m, &RP, CHALLENGE, &key, cd, ad, as_b64url_encode(m, raw, sn),
                                    &count, &why));
    assert_non_null(strstr(why, "does not verify"));
    /* the same assertion twice: its counter does not grow the second time */
    assertion(m, &a, &plain, &cd, &ad, &sig);
    assert_true(as_webauthn_verify(m, &RP, CHALLENGE, &key, cd, ad, sig, &count, &why));
    key.sign_count = count;
    assert_false(as_webauthn_verify(m, &RP, CHALLENGE, &key, cd, ad, sig, &count, &why));
    assert_non_null(strstr(why, "counter"));
    EVP_PKEY_free(a.key);
}

static void test_b64url(void **state)
{
    as_mem *m = unit_mem(state);
    const char *cases[][2] = {{"", ""}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"},
                              {"\xfb\xff", "-_8"}};
    for (size_t i = 0; i < 5; i++) {
        size_t n;
        assert_string_equal(
            as_b64url_encode(m, (const unsigned char *)cases[i][0], strlen(cases[i][0])),
            cases[i][1]);
        unsigned char *d = as_b64url_decode(m, cases[i][1], &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(cases[i][0]));
        assert_memory_equal(d, cases[i][0], n);
    }
    size_t n;
    assert_null(as_b64url_decode(m, "Zg==", &n)); /* padding */
    assert_null(as_b64url_decode(m, "Zm9v+", &n));
    assert_null(as_b64url_decode(m, "Zh", &n)); /* leftover bits */
    assert_null(as_b64url_decode(m, "Z", &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_rp_from_base),
        UNIT_TEST(test_b64url),
        UNIT_TEST(test_round_trip),
        UNIT_TEST(test_registration_refusals),
        UNIT_TEST(test_assertion_refusals),
        UNIT_TEST(test_registration_extensions),
        UNIT_TEST(test_rsa_exponents),
        UNIT_TEST(test_rsa_e1_forgery),
        UNIT_TEST(test_cbor_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

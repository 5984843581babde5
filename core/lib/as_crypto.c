#include "as_crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *as_sha256_hex(as_mem *m, const char *s, size_t n)
{
    unsigned char md[32];
    unsigned int len = 0;
    if (!EVP_Digest(s, n, md, &len, EVP_sha256(), NULL) || len != 32) abort();
    char *hex = as_alloc(m, 65);
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    return hex;
}

/* OpenSSL 3 looks an algorithm up on every EVP_sha256()-style call made
 * without a fetched one: fetched once per process. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

struct as_sha256 {
    EVP_MD_CTX *ctx;
    bool failed;
};

as_sha256 *as_sha256_begin(void)
{
    pthread_once(&sha256_once, sha256_fetch);
    as_sha256 *h = malloc(sizeof(*h));
    if (!h) return NULL;
    h->ctx = EVP_MD_CTX_new();
    h->failed = !h->ctx || !EVP_DigestInit_ex(h->ctx, sha256_md ? sha256_md : EVP_sha256(), NULL);
    return h;
}

void as_sha256_add(as_sha256 *h, const void *p, size_t n)
{
    if (h && !h->failed && n) h->failed = !EVP_DigestUpdate(h->ctx, p, n);
}

bool as_sha256_end(as_sha256 *h, unsigned char out[32])
{
    if (!h) return false;
    unsigned int len = 0;
    bool ok = !h->failed && EVP_DigestFinal_ex(h->ctx, out, &len) && len == 32;
    EVP_MD_CTX_free(h->ctx);
    free(h);
    return ok;
}

static inline uint64_t rotl64(uint64_t x, int b)
{
    return x << b | x >> (64 - b);
}

static inline uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl64(v1, 13);                                                                       \
        v1 ^= v0;                                                                                  \
        v0 = rotl64(v0, 32);                                                                       \
        v2 += v3;                                                                                  \
        v3 = rotl64(v3, 16);                                                                       \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = rotl64(v3, 21);                                                                       \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = rotl64(v1, 17);                                                                       \
        v1 ^= v2;                                                                                  \
        v2 = rotl64(v2, 32);                                                                       \
    } while (0)

uint64_t as_siphash24(const unsigned char key[16], const void *msg, size_t n)
{
    const unsigned char *in = msg;
    uint64_t k0 = le64(key), k1 = le64(key + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull,
             v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    size_t whole = n - n % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = le64(in + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t i = 0; i < n % 8; i++)
        b |= (uint64_t)in[whole + i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

const char *as_hmac_b64url(as_mem *m, const unsigned char *key, size_t key_len, const char *msg)
{
    unsigned char mac[32];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, strlen(msg), mac,
              &len) ||
        len != 32)
        abort();
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = as_alloc(m, 44);
    size_t o = 0;
    for (size_t i = 0; i < 32; i += 3) {
        unsigned v = (unsigned)mac[i] << 16 | (i + 1 < 32 ? (unsigned)mac[i + 1] << 8 : 0) |
                     (i + 2 < 32 ? mac[i + 2] : 0);
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        if (i + 1 < 32) out[o++] = b64[(v >> 6) & 63];
        if (i + 2 < 32) out[o++] = b64[v & 63];
    }
    out[o] = '\0';
    return out;
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const char *as_b64url_encode(as_mem *m, const unsigned char *d, size_t n)
{
    char *out = as_alloc(m, n / 3 * 4 + 5);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
                     (i + 2 < n ? d[i + 2] : 0);
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
        if (i + 1 < n) out[o++] = b64url[(v >> 6) & 63];
        if (i + 2 < n) out[o++] = b64url[v & 63];
    }
    out[o] = '\0';
    return out;
}

unsigned char *as_b64url_decode(as_mem *m, const char *s, size_t *n)
{
    size_t len = s ? strlen(s) : 0;
    *n = 0;
    if (!s || len % 4 == 1) return NULL;
    unsigned char *out = as_alloc(m, len / 4 * 3 + 3);
    unsigned v = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        const char *p = strchr(b64url, s[i]);
        if (!s[i] || !p) return NULL;
        v = v << 6 | (unsigned)(p - b64url);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(v >> bits);
            v &= (1u << bits) - 1;
        }
    }
    if (v != 0) return NULL; /* leftover bits must be zero: one encoding per value */
    out[o] = 0;
    *n = o;
    return out;
}

const char *as_random_b64url(as_mem *m, size_t n)
{
    unsigned char *buf = as_alloc(m, n ? n : 1);
    if (RAND_bytes(buf, (int)n) != 1) abort();
    return as_b64url_encode(m, buf, n);
}

bool as_secure_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb) return false;
    return CRYPTO_memcmp(a, b, la) == 0;
}

const char *as_random_id(as_mem *m, const char *prefix, size_t n, bool mixed_case)
{
    static const char lower[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    static const char mixed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const char *set = mixed_case ? mixed : lower;
    size_t setn = mixed_case ? 62 : 36, pl = strlen(prefix);
    char *s = as_alloc(m, pl + n + 1);
    memcpy(s, prefix, pl);
    for (size_t i = 0; i < n;) {
        unsigned char buf[64];
        if (RAND_bytes(buf, sizeof(buf)) != 1) abort();
        for (size_t k = 0; k < sizeof(buf) && i < n; k++) {
            /* reject values that would bias the modulo */
            if (buf[k] >= 256 - 256 % setn) continue;
            s[pl + i++] = set[buf[k] % setn];
        }
    }
    s[pl + n] = '\0';
    return s;
}

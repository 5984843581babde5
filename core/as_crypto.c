#include "as_crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
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

uint64_t as_hmac_u64(const unsigned char *key, size_t key_len, const char *msg, size_t n)
{
    unsigned char mac[32];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, n, mac, &len) ||
        len != 32)
        abort();
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | mac[i];
    return v;
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

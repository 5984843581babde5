/* Hashes, signatures and random ids (OpenSSL libcrypto). */
#ifndef AS_CRYPTO_H
#define AS_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_mem.h"

/* Lowercase hex SHA-256 of s (64 characters). */
const char *as_sha256_hex(as_mem *m, const char *s, size_t n);
/* SHA-256 of a body written in pieces (a response as it is encoded): begin,
 * add any number of times, end (which frees the state; NULL from begin only
 * when out of memory, and add and end take that NULL too). */
typedef struct as_sha256 as_sha256;
as_sha256 *as_sha256_begin(void);
void as_sha256_add(as_sha256 *h, const void *p, size_t n);
/* The digest into out (32 bytes); false when h was NULL. */
bool as_sha256_end(as_sha256 *h, unsigned char out[32]);
/* base64url (no padding) HMAC-SHA256 of msg under key (43 characters). */
const char *as_hmac_b64url(as_mem *m, const unsigned char *key, size_t key_len, const char *msg);
/* SipHash-2-4 (Aumasson and Bernstein, 2012) of msg under a 16-byte key: a
 * 64-bit keyed hash made for hash tables, which nobody without the key can
 * aim (the rate limiter's slots); about a hundredth of an HMAC-SHA256's cost
 * through OpenSSL 3, which fetches its algorithms on every call. */
uint64_t as_siphash24(const unsigned char key[16], const void *msg, size_t n);
/* base64url without padding (RFC 4648 section 5), as WebAuthn uses it. */
const char *as_b64url_encode(as_mem *m, const unsigned char *data, size_t n);
/* NULL for anything but base64url (padding and whitespace refused); *n the
 * length of the bytes (a NUL follows them). */
unsigned char *as_b64url_decode(as_mem *m, const char *s, size_t *n);
/* n random bytes, base64url (a challenge, an enrolment token). */
const char *as_random_b64url(as_mem *m, size_t n);
/* Equal strings, in time that depends only on their lengths. */
bool as_secure_equal(const char *a, const char *b);
/* prefix + n random characters of [a-z0-9] (ids) or [A-Za-z0-9] (keys). */
const char *as_random_id(as_mem *m, const char *prefix, size_t n, bool mixed_case);

#endif

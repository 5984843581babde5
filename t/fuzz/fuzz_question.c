/* libFuzzer harness: questions about a product (as_question_match and
 * as_question_answer) over a fixed product whose specification rows vary in
 * kind, unit and claimed/measured JSON (numbers, strings, arrays, booleans,
 * null, missing, malformed).
 *
 * Input: one control byte, then the question (a NUL-terminated copy).
 *   byte 0  bits 0-1 verification status: pending, verified, contradicted, verified
 *           bit 2    a product without specification rows
 *           bit 3    only the first three rows
 *
 * Invariants (abort() when broken): at most three rows, distinct and in range;
 * the answer is an object with boolean answered, string text, basis "measured"
 * (only when answered) or "none", one cited row per match, and the measurement's
 * details when answered; a pending product is never answered; the answer can
 * be encoded (json_dumps). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "as_catalog.h"
#include "as_mem.h"
#include "as_questions.h"
#include "fuzz_check.h"


static const as_spec_row specs[] = {
    {"volume_ml", "Volume", "performance", "ml", "500", "492", 2},
    {"pack_count", "Bottles in the pack", "categorical", NULL, "3", "3", 0},
    {"vegan", "Vegan", "categorical", NULL, "true", "true", 0},
    {"fragrance", "Fragrance", "categorical", NULL, "\"lavender\"", "\"rose\"", 0},
    {"paraben_free", "Paraben free", "categorical", NULL, "true", NULL, 0},
    {"capacity_mah", "Capacity", "performance", "mAh", "3000", "2650", 5},
    {"voltage_v", "Voltage", "info", "V", "3.7", "3.69", 0},
    {"filter_efficiency_pct", "Filter efficiency", "performance", "%", "99.97", "99.99", 0.5},
    {"diameter_mm", "Diameter", "categorical", "mm", "80", "80.0", 0},
    {"colour", "Colour", "categorical", "", NULL, "\"black\"", 0},
    {"pack_contents", "In the box", "categorical", NULL, "[\"pump\",\"refill\"]",
     "[\"refill\",\"pump\",\"cap\"]", 0},
    {"ph", "pH value", "info", NULL, "5.5", "{bad json", 0},
    {"washable", "Washable", "categorical", NULL, "null", "false", 0},
    {"lifetime_months", "Lifetime", "performance", "months", "0", "-1", 10},
    {"page_yield", "Page yield", "performance", "pages", "1e300", "1.7976931348623157e308", 0},
    {"custom_spec", "Ünïcödé label — 測定", "info", "µm", "\"a\\u0000b\"", "[[1,2],{\"k\":3}]", 0},
};

static const as_verif statuses[4] = {AS_VERIF_PENDING, AS_VERIF_VERIFIED, AS_VERIF_CONTRADICTED,
                                     AS_VERIF_VERIFIED};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t ctl = data[0];
    char *question = malloc(size);
    if (!question) abort();
    memcpy(question, data + 1, size - 1);
    question[size - 1] = '\0';

    as_product p = {
        .id = 7,
        .sku = "SOAP-007",
        .name = "Hand soap refill",
        .brand = "Savon",
        .category = "hand-soap",
        .part_type = "hand-soap",
        .verif_status = statuses[ctl & 3],
        .measured_at = (ctl & 3) == 2 ? NULL : "2026-01-05T09:00:00Z",
        .measured_node = (ctl & 3) == 3 ? NULL : "lab-1",
        .sample_size = 3,
        .specs = (as_spec_row *)specs,
        .n_specs = (ctl & 4) ? 0 : (ctl & 8) ? 3 : sizeof(specs) / sizeof(specs[0]),
    };

    as_arena *arena = as_arena_create();
    as_mem m = as_arena_mem(arena);

    size_t rows[3] = {0};
    size_t k = as_question_match(&m, &p, question, rows);
    CHECK(k <= 3, "%zu rows", k);
    for (size_t i = 0; i < k; i++) {
        CHECK(rows[i] < p.n_specs, "row %zu out of range", rows[i]);
        for (size_t j = 0; j < i; j++)
            CHECK(rows[i] != rows[j], "row %zu cited twice", rows[i]);
    }

    json_t *a = as_question_answer(&m, &p, question);
    CHECK(json_is_object(a), "the answer is not an object");
    json_t *answered = json_object_get(a, "answered");
    CHECK(json_is_boolean(answered), "answered is not a boolean");
    CHECK(json_is_string(json_object_get(a, "text")), "text is not a string");
    const char *basis = json_string_value(json_object_get(a, "basis"));
    CHECK(basis && strcmp(basis, json_is_true(answered) ? "measured" : "none") == 0, "basis");
    CHECK(json_array_size(json_object_get(a, "rows")) == k, "%zu rows cited for %zu matches",
          json_array_size(json_object_get(a, "rows")), k);
    if (json_is_true(answered)) {
        CHECK(p.verif_status != AS_VERIF_PENDING, "a pending product was answered");
        CHECK(json_is_string(json_object_get(a, "measured_at")), "measured_at");
        CHECK(json_is_integer(json_object_get(a, "sample_size")), "sample_size");
    }
    char *s = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(12));
    CHECK(s != NULL, "the answer cannot be encoded");
    free(s);
    json_decref(a);

    as_arena_destroy(arena);
    free(question);
    return 0;
}

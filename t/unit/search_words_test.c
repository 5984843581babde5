/* Search, stage 1: as_search_words, as_search_stem, as_search_filler and
 * as_query_read (core/search/as_search_words.h). */
#include "unit_check.h"

#include <pthread.h>

#include "as_devices.h"
#include "as_search_words.h"

/* Words as "text" joined by '|', parts marked "+"; with stems, "text/stem". */
static const char *words_str(as_mem *m, const as_sword *w, size_t n, bool stems)
{
    as_buf b;
    as_buf_init(&b, m);
    for (size_t i = 0; i < n; i++) {
        as_buf_printf(&b, "%s%s%s", i ? "|" : "", w[i].part ? "+" : "", w[i].text);
        if (stems) as_buf_printf(&b, "/%s", w[i].stem);
    }
    return as_buf_str(&b);
}

/* A query's words as "text", parts "+text", filler "text~", device words "text@". */
static const char *qwords_str(as_mem *m, const as_query_text *t)
{
    as_buf b;
    as_buf_init(&b, m);
    for (size_t i = 0; i < t->n; i++) {
        const as_qword *w = &t->words[i];
        as_buf_printf(&b, "%s%s%s%s", i ? "|" : "", w->part ? "+" : "", w->text,
                      w->device   ? "@"
                      : w->filler ? "~"
                                  : "");
    }
    return as_buf_str(&b);
}

typedef struct words_row {
    const char *in, *want;
} words_row;

static void test_words(void **state)
{
    as_mem *m = unit_mem(state);
    const words_row rows[] = {
        {"", ""},
        {"  ,;-- ", ""},
        {"soap", "soap"},
        /* folding: case, Latin diacritics, sharp s (and capital sharp s) as "ss" */
        {"\xC3\x89"
         "CLAIR \xC3\x9C"
         "ber Stra\xC3\x9F"
         "e",
         "eclair|uber|strasse"},
        {"GRO\xE1\xBA\x9E"
         "E",
         "grosse"},
        {"K\xC3\xB6ln \xC3\xB8l", "koln|\xC3\xB8l"},
        /* punctuation and signs separate words */
        {"USB-C", "usb|c"},
        {"De'Longhi", "de|longhi"},
        /* a decimal number is one word, written one way (a point, no trailing
         * zeros): "1.2 m" does not give "2", which "2m" would find */
        {"\xE2\x82\xAC"
         "12,50",
         "12.5"},
        {"1.2 m 2m", "1.2|m|2m|+2|+m"},
        {"1.2m 0,9m", "1.2m|+1.2|+m|0.9m|+0.9|+m"},
        {"5.0Ah 3,00 l", "5ah|+5|+ah|3|l"},
        {"99.92 %", "99.92"},
        {"usb3.0", "usb3|+usb|+3"},
        /* not decimals: a thousands group, model and version codes */
        {"1,000 ml", "1|000|ml"},
        {"ECAM 22.110.B", "ecam|22|110|b"},
        {"3.1.2", "3|1|2"},
        {"end. 2", "end|2"},
        {"a_b", "a|b"},
        /* letters and digits meeting: the run, then its parts */
        {"2m", "2m|+2|+m"},
        {"v11", "v11|+v|+11"},
        {"V11 Absolute", "v11|+v|+11|absolute"},
        {"usb3", "usb3|+usb|+3"},
        {"65W", "65w|+65|+w"},
        {"1000ml", "1000ml|+1000|+ml"},
        {"BGLS4POW2", "bgls4pow2|+bgls|+4|+pow|+2"},
        /* units written one way, as words and as parts after a number */
        {"1 liter", "1|l"},
        {"1 l", "1|l"},
        {"1l", "1l|+1|+l"},
        {"1Liter", "1l|+1|+l"},
        {"2 Litres 3 ltr", "2|l|3|l"},
        {"1000mls 250 millilitres", "1000ml|+1000|+ml|250|ml"},
        {"2 metres 3 meters", "2|m|3|m"},
        {"30 Centimetres 5 millimeter", "30|cm|5|mm"},
        {"18 volts 18V", "18|v|18v|+18|+v"},
        {"65 Watts", "65|w"},
        {"500 grams 2 kilograms 1kg", "500|g|2|kg|1kg|+1|+kg"},
        {"13 inches 13inch", "13|in|13in|+13|+in"},
        {"5000mAh", "5000mah|+5000|+mah"},
        {"10 pieces 2pc pc2", "10|pcs|2pcs|+2|+pcs|pc2|+pc|+2"},
        {"4 packs 4pack", "4|pack|4pack|+4|+pack"},
        /* a unit only after a number: a model code stays as written */
        {"v8 w1a53a", "v8|+v|+8|w1a53a|+w|+1|+a|+53|+a"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_sword *w = NULL;
        size_t n = as_search_words(m, rows[i].in, &w);
        CHECK_STR(as_printf(m, "row %zu: '%s'", i, rows[i].in), words_str(m, w, n, false),
                  rows[i].want);
    }
    ROWS_DONE();
    as_sword *w = NULL;
    assert_int_equal(as_search_words(m, NULL, &w), 0);
}

static void test_words_orig_and_offsets(void **state)
{
    as_mem *m = unit_mem(state);
    as_sword *w;
    const char *q = "Hello, \xC3\x89T\xC3\x89 V11!";
    size_t n = as_search_words(m, q, &w);
    assert_int_equal(n, 5);
    assert_string_equal(w[0].orig, "Hello");
    assert_int_equal(w[0].at, 0);
    assert_false(w[0].part);
    assert_string_equal(w[1].orig, "\xC3\x89T\xC3\x89");
    assert_string_equal(w[1].text, "ete");
    assert_int_equal(w[1].at, 7);
    assert_string_equal(w[2].orig, "V11");
    assert_int_equal(w[2].at, 13);
    assert_false(w[2].part);
    assert_string_equal(w[3].orig, "V");
    assert_int_equal(w[3].at, 13);
    assert_true(w[3].part);
    assert_false(w[3].unit);
    assert_string_equal(w[4].orig, "11");
    assert_int_equal(w[4].at, 14);
    assert_true(w[4].part);

    n = as_search_words(m, "2 Liters", &w);
    assert_int_equal(n, 2);
    assert_string_equal(w[1].orig, "Liters");
    assert_string_equal(w[1].text, "l");
    assert_true(w[1].unit);
    assert_false(w[0].unit);
}

static void test_words_cut(void **state)
{
    as_mem *m = unit_mem(state);
    char buf[200];
    memset(buf, 'a', 70);
    strcpy(buf + 70, " b");
    as_sword *w;
    size_t n = as_search_words(m, buf, &w);
    assert_int_equal(n, 2);
    assert_int_equal(strlen(w[0].text), AS_SWORD_MAX);
    assert_int_equal(strlen(w[0].orig), AS_SWORD_MAX);
    assert_string_equal(w[1].text, "b");
    assert_int_equal(w[1].at, 71);
    /* cut on a character: 35 two-byte letters are 70 bytes, 32 of them fit */
    buf[0] = '\0';
    for (int i = 0; i < 35; i++)
        strcat(buf, "\xC3\xA9");
    n = as_search_words(m, buf, &w);
    assert_int_equal(n, 1);
    assert_int_equal(strlen(w[0].orig), 64);
    assert_int_equal(strlen(w[0].text), 32);
    /* a long run of letters and digits: cut, then split */
    buf[0] = '\0';
    for (int i = 0; i < 40; i++)
        strcat(buf, "a1");
    n = as_search_words(m, buf, &w);
    assert_int_equal(n, 1 + 64);
    assert_int_equal(strlen(w[0].text), 64);
    assert_true(w[64].part);
    assert_string_equal(w[64].text, "1");
}

static void test_stems(void **state)
{
    as_mem *m = unit_mem(state);
    as_sword *w;
    size_t n = as_search_words(m, "Filters filter Batteries battery cartridges 2m v11", &w);
    assert_string_equal(words_str(m, w, n, true),
                        "filters/filter|filter/filter|batteries/batteri|battery/batteri|"
                        "cartridges/cartridg|2m/2m|+2/2|+m/m|v11/v11|+v/v|+11/11");
    assert_string_equal(as_search_stem(m, "filters"), "filter");
    assert_string_equal(as_search_stem(m, "batteries"), as_search_stem(m, "battery"));
    assert_string_equal(as_search_stem(m, "descaler"), "descal");
    /* not ASCII: unchanged, and a copy */
    const char *word = "\xC3\xB8lfilters";
    const char *s = as_search_stem(m, word);
    assert_string_equal(s, word);
    assert_ptr_not_equal(s, word);
    assert_string_equal(as_search_stem(m, ""), "");
    assert_null(as_search_stem(m, NULL));
    /* units are not stemmed: "pcs" stays "pcs" */
    n = as_search_words(m, "10 pieces", &w);
    assert_string_equal(w[1].stem, "pcs");
}

/* Threads stemming at once get the same stems (one stemmer per thread). */
static void *stem_many(void *arg)
{
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    intptr_t bad = 0;
    for (int i = 0; i < 2000; i++) {
        bad += strcmp(as_search_stem(&m, "batteries"), "batteri") != 0;
        bad += strcmp(as_search_stem(&m, "filters"), "filter") != 0;
        bad += strcmp(as_search_stem(&m, "descaling"), "descal") != 0;
    }
    as_arena_destroy(a);
    (void)arg;
    return (void *)bad;
}

static void test_stem_threads(void **state)
{
    (void)state;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, stem_many, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;
        assert_int_equal(pthread_join(t[i], &bad), 0);
        assert_int_equal((intptr_t)bad, 0);
    }
}

static void test_filler(void **state)
{
    (void)state;
    static const char *const yes[] = {
        "a",       "an",     "the",  "for",   "my",      "our",      "your",        "his",
        "her",     "their",  "me",   "i",     "we",      "you",      "it",          "its",
        "of",      "to",     "in",   "on",    "at",      "by",       "with",        "without",
        "and",     "or",     "from", "into",  "onto",    "that",     "this",        "these",
        "those",   "is",     "are",  "be",    "need",    "needs",    "want",        "wants",
        "looking", "look",   "find", "show",  "get",     "buy",      "buying",      "order",
        "some",    "any",    "new",  "cheap", "cheaper", "cheapest", "inexpensive", "affordable",
        "budget",  "best",   "good", "great", "nice",    "top",      "quality",     "recommended",
        "please",  "thanks",
    };
    static const char *const no[] = {
        "replacement", "original", "small", "large", "refill", "pack", "set",
        "kit",         "filter",   "v11",   "2m",    "l",      "ml",   "inch",
        "hepa",        "",         "fo",    "forr",  "zzz",    "aaa",
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(yes); i++)
        CHECK(yes[i], as_search_filler(yes[i]));
    for (size_t i = 0; i < N_ROWS(no); i++)
        CHECK(no[i], !as_search_filler(no[i]));
    ROWS_DONE();
    assert_false(as_search_filler(NULL));
}

typedef struct typo_row {
    const char *typed, *word;
    int edits; /* -1: not a correction of typed */
} typo_row;

/* The correction rule that matching and device names share. */
static void test_typo_rule(void **state)
{
    as_mem *m = unit_mem(state);
    const typo_row rows[] = {
        {"tonner", "toner", 1},        {"chargr", "charger", 1},  {"lavendre", "lavender", 1},
        {"macbok", "macbook", 1},      {"macbook", "macbook", 0}, {"fariphoen", "fairphone", 2},
        {"makbok", "macbook", -1},     /* two edits below 9 letters */
        {"fariphon", "fairphone", -1}, /* 8 letters: one edit only */
        {"hnad", "hand", -1},          /* 4 letters: never */
        {"nacbook", "macbook", -1},    /* the first letter as typed */
        {"2000mah", "2000mh", -1},     /* begins with a digit */
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *label = as_printf(m, "'%s' -> '%s'", rows[i].typed, rows[i].word);
        CHECK_INT(label, as_search_typo(rows[i].typed, rows[i].word), rows[i].edits);
    }
    ROWS_DONE();
    assert_int_equal(as_search_typo_max("hand"), 0);
    assert_int_equal(as_search_typo_max("hands"), 1);
    assert_int_equal(as_search_typo_max("batteries"), 2);
    assert_int_equal(as_search_typo_max("18650cell"), 0);
    /* one edit allowed (its own pass) against the table's answer with two
     * allowed, over random words of a three-letter alphabet (near misses of
     * every kind: changed, added, removed, swapped, and two of them) */
    uint32_t x = 12345u;
    for (int k = 0; k < 200000; k++) {
        char a[12], b[12];
        size_t la = 1 + (x = x * 1103515245u + 12345u) % 10, lb = la;
        for (size_t i = 0; i < la; i++)
            a[i] = b[i] = (char)('a' + (x = x * 1103515245u + 12345u) % 3);
        for (int e = (int)((x >> 16) % 3); e > 0; e--) { /* up to two random edits */
            size_t at = (x = x * 1103515245u + 12345u) % lb;
            switch ((x >> 20) % 4) {
            case 0: b[at] = (char)('a' + (x >> 24) % 3); break;
            case 1: if (lb < 11) { memmove(b + at + 1, b + at, lb - at); b[at] = 'c'; lb++; } break;
            case 2: if (lb > 1) { memmove(b + at, b + at + 1, lb - at - 1); lb--; } break;
            default: if (at + 1 < lb) { char t = b[at]; b[at] = b[at + 1]; b[at + 1] = t; }
            }
        }
        int two = as_search_distance(a, la, b, lb, 2);
        assert_int_equal(as_search_distance(a, la, b, lb, 1), two > 1 ? 2 : two);
    }
}

/* Devices of the demo catalogue (sql/demo/catalogue.jsonl), as the store gives them, but for
 * the aliases: joined by spaces here, by newlines in the store; the search reads both as spaces. */
static const as_device devs[] = {
    {1, "apple-iphone-13", "Apple iPhone 13", "Apple", "phone", "A2633 iPhone 13"},
    {2, "apple-iphone-15", "Apple iPhone 15", "Apple", "phone", "A3090 iPhone 15"},
    {3, "apple-macbook-air-13-m2", "Apple MacBook Air 13-inch (M2, 2022)", "Apple", "laptop",
     "A2681 MacBook Air M2"},
    {4, "blueair-blue-pure-211", "Blueair Blue Pure 211+", "Blueair", "air-purifier", "211+"},
    {5, "bosch-gsr-18v-55", "Bosch Professional GSR 18V-55", "Bosch", "cordless-tool",
     "06019H5202"},
    {6, "bosch-serie-4-bgls4pow2", "Bosch Serie 4 ProPower BGLS4POW2", "Bosch", "vacuum-cleaner",
     "BGLS4POW2"},
    {7, "brita-aluna", "Brita Aluna", "Brita", "water-jug", ""},
    {8, "brita-marella", "Brita Marella", "Brita", "water-jug", ""},
    {9, "brita-style-xl", "Brita Style XL", "Brita", "water-jug", "Style"},
    {10, "brother-hl-l2350dw", "Brother HL-L2350DW", "Brother", "printer", "HLL2350DW"},
    {11, "brother-mfc-l3750cdw", "Brother MFC-L3750CDW", "Brother", "printer", "MFCL3750CDW"},
    {12, "bwt-vida", "BWT Vida", "BWT", "water-jug", "Vida 2.6 l"},
    {13, "canon-pixma-ts5150", "Canon PIXMA TS5150", "Canon", "printer", "2228C006"},
    {14, "dell-xps-13-9340", "Dell XPS 13 9340", "Dell", "laptop", "XPS 9340"},
    {15, "delonghi-magnifica-s-ecam22-110", "De'Longhi Magnifica S ECAM 22.110.B", "De'Longhi",
     "coffee-machine", "ECAM22.110.B Magnifica S"},
    {16, "dewalt-dcd796", "DeWalt DCD796 Combi Drill", "DeWalt", "cordless-tool", "DCD796N"},
    {17, "dyson-v11-absolute", "Dyson V11 Absolute", "Dyson", "vacuum-cleaner", "SV14 V11"},
    {18, "dyson-v15-detect", "Dyson V15 Detect", "Dyson", "vacuum-cleaner", "SV22 V15"},
    {19, "dyson-v8-animal", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", "SV10 V8"},
    {20, "einhell-te-cd-18-40-li", "Einhell TE-CD 18/40 Li", "Einhell", "cordless-tool",
     "TE-CD 18/40"},
    {21, "epson-workforce-wf-2930", "Epson WorkForce WF-2930DWF", "Epson", "printer",
     "WF-2930 C11CH57402"},
    {22, "fairphone-5", "Fairphone 5", "Fairphone", "phone", "FP5"},
    {23, "framework-laptop-13", "Framework Laptop 13", "Framework", "laptop", ""},
    {24, "google-pixel-8", "Google Pixel 8", "Google", "phone", "GKWS6"},
    {25, "hp-laserjet-pro-m404dn", "HP LaserJet Pro M404dn", "HP", "printer", "W1A53A M404dn"},
    {26, "hp-laserjet-pro-mfp-m428fdw", "HP LaserJet Pro MFP M428fdw", "HP", "printer",
     "W1A30A M428fdw"},
    {27, "hp-officejet-pro-8022e", "HP OfficeJet Pro 8022e", "HP", "printer", "229W7B"},
    {28, "hp-officejet-pro-9010", "HP OfficeJet Pro 9010", "HP", "printer", "3UK83B"},
    {29, "jura-e8", "Jura E8", "Jura", "coffee-machine", "E8"},
    {30, "lenovo-thinkpad-x1-carbon-gen-11", "Lenovo ThinkPad X1 Carbon Gen 11", "Lenovo", "laptop",
     "21HM X1 Carbon G11"},
    {31, "levoit-core-300", "Levoit Core 300", "Levoit", "air-purifier", "Core 300"},
    {32, "makita-ddf485", "Makita DDF485 Drill Driver", "Makita", "cordless-tool", "DDF485Z"},
    {33, "makita-dhp482", "Makita DHP482 Combi Drill", "Makita", "cordless-tool",
     "DHP482Z DHP482RFJ"},
    {34, "miele-classic-c1", "Miele Classic C1 Flex", "Miele", "vacuum-cleaner", "SBAF5 C1"},
    {35, "miele-complete-c3", "Miele Complete C3 Cat & Dog", "Miele", "vacuum-cleaner", "SGEF3 C3"},
    {36, "philips-ac0820", "Philips Series 800 Air Purifier AC0820", "Philips", "air-purifier",
     "AC0820/10"},
    {37, "philips-ac1215", "Philips Series 1000i Air Purifier AC1215", "Philips", "air-purifier",
     "AC1215/10"},
    {38, "philips-ac2887", "Philips Series 2000i Air Purifier AC2887", "Philips", "air-purifier",
     "AC2887/10 2000i"},
    {39, "philips-ep2220", "Philips Series 2200 EP2220", "Philips", "coffee-machine", "EP2220/10"},
    {40, "philips-ep3246", "Philips Series 3200 LatteGo EP3246", "Philips", "coffee-machine",
     "EP3246/70"},
    {41, "samsung-galaxy-s24", "Samsung Galaxy S24", "Samsung", "phone", "SM-S921B S24"},
    {42, "siemens-eq6-plus-s300", "Siemens EQ.6 plus s300", "Siemens", "coffee-machine",
     "TE653501DE"},
    {43, "xiaomi-mi-air-purifier-3h", "Xiaomi Mi Air Purifier 3H", "Xiaomi", "air-purifier",
     "AC-M6-SC 3H"},
    /* as agentshopctl catalogue generate makes them: the slug spells the kind */
    {44, "gen-cordless-tool-200", "Redcliff Classic K300", "Redcliff", "cordless-tool", "K300"},
};

typedef struct price_row {
    const char *q;
    int64_t cents;
    const char *text;  /* price_text, NULL when none */
    const char *words; /* as qwords_str */
} price_row;

static void test_price(void **state)
{
    as_mem *m = unit_mem(state);
    const price_row rows[] = {
        {"hepa filter under 20 euros", 2000, "under 20 euros", "hepa|filter"},
        {"below \xE2\x82\xAC"
         "15.50 hepa",
         1550,
         "below \xE2\x82\xAC"
         "15.50",
         "hepa"},
        {"descaler max 30 eur", 3000, "max 30 eur", "descaler"},
        {"soap less than 10", 1000, "less than 10", "soap"},
        {"bags up to 25\xE2\x82\xAC", 2500, "up to 25\xE2\x82\xAC", "bags"},
        {"filter under 20,50 \xE2\x82\xAC please", 2050, "under 20,50 \xE2\x82\xAC",
         "filter|please~"},
        {"cheaper than 9,9", 990, "cheaper than 9,9", ""},
        {"at most EUR 12", 1200, "at most EUR 12", ""},
        {"maximum 7.05 Euro", 705, "maximum 7.05 Euro", ""},
        {"budget of 15 eur", 1500, "budget of 15 eur", ""},
        {"no more than 8 euros", 800, "no more than 8 euros", ""},
        {"cable < 20", 2000, "< 20", "cable"},
        {"cable <=\xE2\x82\xAC"
         "12,5",
         1250,
         "<=\xE2\x82\xAC"
         "12,5",
         "cable"},
        {"cable under 10eur", 1000, "under 10eur", "cable"},
        {"20 euros max filter", 2000, "20 euros max", "filter"},
        {"under 1,000.50 eur", 100050, "under 1,000.50 eur", ""},
        {"cable under 20.5eur", 2050, "under 20.5eur", "cable"},
        {"\xE2\x82\xAC"
         "20 or less",
         2000,
         "\xE2\x82\xAC"
         "20 or less",
         ""},
        {"under 1.000,50 \xE2\x82\xAC", 100050, "under 1.000,50 \xE2\x82\xAC", ""},
        {"less than 10 for my sink", 1000, "less than 10", "for~|my~|sink"},
        /* no price */
        {"aa batteries 4 pack", 0, NULL, "aa|batteries|4|pack"},
        {"up to 4 cups", 0, NULL, "up|to~|4|cups"},
        {"under 20%", 0, NULL, "under|20"},
        {"under sink filter", 0, NULL, "under|sink|filter"},
        {"under 0 eur", 0, NULL, "under|0|eur"},
        {"under 2000000 eur", 0, NULL, "under|2000000|eur"},
        {"max 65w", 0, NULL, "max|65w|+65|+w"},
        {"under $20", 0, NULL, "under|20"},
        {"20 euros", 0, NULL, "20|euros"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const price_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: '%s'", i, r->q);
        as_query_text t;
        as_query_read(m, r->q, devs, N_ROWS(devs), &t);
        CHECK_INT(label, t.max_price_cents, r->cents);
        if (r->text)
            CHECK_STR(label, t.price_text, r->text);
        else
            CHECK(label, t.price_text == NULL);
        CHECK_STR(label, qwords_str(m, &t), r->words);
    }
    ROWS_DONE();
}

typedef struct device_row {
    const char *q;
    const char *slug; /* NULL: no device */
    const char *text; /* device_text */
    const char *words;
} device_row;

static void test_device(void **state)
{
    as_mem *m = unit_mem(state);
    const device_row rows[] = {
        {"filters for my dyson v11", "dyson-v11-absolute", "dyson v11",
         "filters|for~|my~|dyson@|v11@|+v@|+11@"},
        {"iphone 13 case", "apple-iphone-13", "iphone 13", "iphone@|13@|case"},
        {"Dyson-V11-Absolute", "dyson-v11-absolute", "Dyson-V11-Absolute",
         "dyson@|v11@|+v@|+11@|absolute@"},
        {"V11 filter", "dyson-v11-absolute", "V11", "v11@|+v@|+11@|filter"},
        {"bags for BGLS4POW2", "bosch-serie-4-bgls4pow2", "BGLS4POW2",
         "bags|for~|bgls4pow2@|+bgls@|+4@|+pow@|+2@"},
        /* one De'Longhi device: the brand names it, as device=delonghi would */
        {"descaler for delonghi", "delonghi-magnifica-s-ecam22-110", "delonghi",
         "descaler|for~|delonghi@"},
        {"De'Longhi descaler", "delonghi-magnifica-s-ecam22-110", "De'Longhi",
         "de@|longhi@|descaler"},
        {"for my fairphone 5", "fairphone-5", "fairphone 5", "for~|my~|fairphone@|5@"},
        {"macbook air charger", "apple-macbook-air-13-m2", "macbook air", "macbook@|air@|charger"},
        {"bosch 18v battery", "bosch-gsr-18v-55", "bosch 18v", "bosch@|18v@|+18@|+v@|battery"},
        /* the price first, then the device among the words left */
        {"dyson v8 filter under 20 euros", "dyson-v8-animal", "dyson v8",
         "dyson@|v8@|+v@|+8@|filter"},
        {"cheap descaler for jura e8 max 12\xE2\x82\xAC", "jura-e8", "jura e8",
         "cheap~|descaler|for~|jura@|e8@|+e@|+8@"},
        /* a device word with a typo, corrected as catalogue words are (one edit
         * from 5 letters, two from 9, the first letter as typed) */
        {"macbok air charger", "apple-macbook-air-13-m2", "macbok air", "macbok@|air@|charger"},
        {"descaler for delonhgi", "delonghi-magnifica-s-ecam22-110", "delonhgi",
         "descaler|for~|delonhgi@"},
        {"fariphoen 5 case", "fairphone-5", "fariphoen 5", "fariphoen@|5@|case"},
        /* by brand and kind, when the brand has one device of that kind */
        {"best 18v battery for bosch drill", "bosch-gsr-18v-55", "bosch drill",
         "best~|18v|+18|+v|battery|for~|bosch@|drill@"},
        {"bags for my Bosch vacuum cleaner", "bosch-serie-4-bgls4pow2", "Bosch vacuum cleaner",
         "bags|for~|my~|bosch@|vacuum@|cleaner@"},
        {"apple laptop charger", "apple-macbook-air-13-m2", "apple laptop",
         "apple@|laptop@|charger"},
        {"jura coffee machines descaler", "jura-e8", "jura coffee machines",
         "jura@|coffee@|machines@|descaler"},
        /* the kind after the device's own name is part of it */
        {"delonghi coffee machine descaler", "delonghi-magnifica-s-ecam22-110",
         "delonghi coffee machine", "delonghi@|coffee@|machine@|descaler"},
        {"filter for brita marella jug", "brita-marella", "brita marella jug",
         "filter|for~|brita@|marella@|jug@"},
        /* no device */
        {"macbk air charger", NULL, NULL, "macbk|air|charger"},     /* 5 letters: one edit only */
        {"makbok air charger", NULL, NULL, "makbok|air|charger"},   /* two edits from 6 letters */
        {"nacbook air charger", NULL, NULL, "nacbook|air|charger"}, /* the first letter */
        {"mcbk air charger", NULL, NULL, "mcbk|air|charger"},       /* 4 letters: never */
        {"battery for makita drill", NULL, NULL, "battery|for~|makita|drill"}, /* two drills */
        {"descaler for philips coffee machine", NULL, NULL,
         "descaler|for~|philips|coffee|machine"}, /* two Philips coffee machines */
        {"dyson vacuum filter", NULL, NULL, "dyson|vacuum|filter"},
        {"usb c cable 2m", NULL, NULL, "usb|c|cable|2m|+2|+m"},
        {"hepa filters", NULL, NULL, "hepa|filters"},
        {"aa batteries", NULL, NULL, "aa|batteries"},
        {"soap", NULL, NULL, "soap"},
        {"dyson filter", NULL, NULL, "dyson|filter"}, /* three Dyson devices */
        {"iphone case", NULL, NULL, "iphone|case"},   /* two iPhones */
        {"brita cartridges", NULL, NULL, "brita|cartridges"},
        {"5 pack", NULL, NULL, "5|pack"},                  /* not Fairphone 5 */
        {"18v battery", NULL, NULL, "18v|+18|+v|battery"}, /* a measure, not Bosch's 18V */
        {"laptop stand", NULL, NULL, "laptop|stand"},      /* not Framework Laptop 13 */
        {"13 inch sleeve", NULL, NULL, "13|in|sleeve"},    /* not MacBook Air 13-inch */
        {"300 ml", NULL, NULL, "300|ml"},                  /* not Levoit Core 300 */
        /* a model line and a kind name no device: "classic" and the slug's
         * "tool" are both the Redcliff Classic K300's, but neither says which */
        {"classic tool battery", NULL, NULL, "classic|tool|battery"},
        {"classic tool", NULL, NULL, "classic|tool"},
        {"battery for redcliff classic k300", "gen-cordless-tool-200", "redcliff classic k300",
         "battery|for~|redcliff@|classic@|k300@|+k@|+300@"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const device_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: '%s'", i, r->q);
        as_query_text t;
        as_query_read(m, r->q, devs, N_ROWS(devs), &t);
        CHECK_STR(label, t.device ? t.device->slug : "(none)", r->slug ? r->slug : "(none)");
        CHECK_STR(label, t.device_text ? t.device_text : "(none)", r->text ? r->text : "(none)");
        CHECK_STR(label, qwords_str(m, &t), r->words);
    }
    ROWS_DONE();
}

/* as_query_devices_resolve (what the reader asks of each span) finds the
 * device as_device_resolve_words finds, on texts made of the demo devices'
 * words, their beginnings, slugs, repeats and other words: every text of one
 * to three such words from a fixed pseudo-random sequence. */
static void test_device_resolve_same(void **state)
{
    as_mem *m = unit_mem(state);
    const as_query_devices *qd = as_query_devices_make(m, devs, N_ROWS(devs));
    const char *pool[512];
    size_t np = 0;
    for (size_t d = 0; d < N_ROWS(devs); d++) {
        const char **t;
        const char *all = as_printf(m, "%s %s %s", devs[d].name, devs[d].slug, devs[d].aliases);
        size_t n = as_text_terms(m, all, &t);
        for (size_t i = 0; i < n && np + 3 < N_ROWS(pool); i++) {
            pool[np++] = t[i];
            if (strlen(t[i]) > 2) pool[np++] = as_strndup(m, t[i], 2);
            if (strlen(t[i]) > 3) pool[np++] = as_strndup(m, t[i], 3);
        }
        if (np + 1 < N_ROWS(pool)) pool[np++] = devs[d].slug;
    }
    const char *other[] = {"filter", "for", "my", "a", "c", "v", "13", "air", "pro", "soap", "x"};
    for (size_t i = 0; i < N_ROWS(other) && np < N_ROWS(pool); i++)
        pool[np++] = other[i];
    uint32_t seed = 12345;
    size_t found = 0, runs = 4000;
    for (size_t run = 0; run < runs; run++) {
        as_buf b;
        as_buf_init(&b, m);
        seed = seed * 1103515245u + 12345u;
        size_t k = 1 + (seed >> 16) % 3;
        for (size_t j = 0; j < k; j++) {
            seed = seed * 1103515245u + 12345u;
            as_buf_printf(&b, "%s%s", j ? " " : "", pool[(seed >> 16) % np]);
        }
        const char *text = as_buf_str(&b), *cands;
        const as_device *want = NULL;
        if (as_device_resolve_words(m, devs, NULL, N_ROWS(devs), text, &want, &cands) !=
            AS_DEV_FOUND)
            want = NULL;
        const as_device *got = as_query_devices_resolve(m, qd, text);
        if (got != want)
            fail_msg("'%s': %s, as_device_resolve_words %s", text, got ? got->slug : "none",
                     want ? want->slug : "none");
        found += want != NULL;
    }
    /* the texts name devices often enough to mean something */
    assert_true(found > runs / 10);
}

static void test_query_edges(void **state)
{
    as_mem *m = unit_mem(state);
    as_query_text t;
    as_query_read(m, "", devs, N_ROWS(devs), &t);
    assert_int_equal(t.n, 0);
    assert_null(t.device);
    assert_int_equal(t.max_price_cents, 0);
    as_query_read(m, NULL, devs, N_ROWS(devs), &t);
    assert_int_equal(t.n, 0);
    as_query_read(m, " \xE2\x82\xAC < , ", devs, N_ROWS(devs), &t);
    assert_int_equal(t.n, 0);
    assert_int_equal(t.max_price_cents, 0);
    /* no devices */
    as_query_read(m, "filters for my dyson v11", NULL, 0, &t);
    assert_null(t.device);
    assert_string_equal(qwords_str(m, &t), "filters|for~|my~|dyson|v11|+v|+11");
    /* "in" is filler, "inch" written as the unit "in" is not */
    as_query_read(m, "13 inch in a box", NULL, 0, &t);
    assert_string_equal(qwords_str(m, &t), "13|in|in~|a~|box");
    /* the words keep stems and where they were written */
    as_query_read(m, "the filters", NULL, 0, &t);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.words[1].stem, "filter");
    assert_string_equal(t.words[1].orig, "filters");
    assert_int_equal(t.words[1].at, 4);
    /* every word filler: still read */
    as_query_read(m, "the best for me", NULL, 0, &t);
    assert_string_equal(qwords_str(m, &t), "the~|best~|for~|me~");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_words),        UNIT_TEST(test_words_orig_and_offsets),
        UNIT_TEST(test_words_cut),    UNIT_TEST(test_stems),
        UNIT_TEST(test_stem_threads), UNIT_TEST(test_filler),
        UNIT_TEST(test_price),        UNIT_TEST(test_device),
        UNIT_TEST(test_device_resolve_same),
        UNIT_TEST(test_query_edges),  UNIT_TEST(test_typo_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

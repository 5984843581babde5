#!/usr/bin/env python3
"""Writes the seed corpora t/fuzz/corpus/<harness>/ (run from anywhere; the
files are committed, so this only needs running again to change them). Every
seed is named after what it exercises. Input formats: see each harness's
header comment."""
import json
import os
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def reset(harness):
    shutil.rmtree(os.path.join(CORPUS, harness), ignore_errors=True)


# ---- fuzz_query: a raw query string ----
reset("fuzz_query")
for name, q in {
    "search-text-device": "q=hepa+filter&device=dyson-v11&sort=price&limit=5",
    "search-price-date": "q=soap&max_price=12.50&deliver_by=2026-03-10&verified_only=false",
    "search-filters": "category=vacuum-parts&part_type=filter&merchant=Alpha+Parts&postcode=3511+AB",
    "paging-max": "offset=100000&limit=100",
    "limit-zero": "limit=0",
    "limit-huge": "limit=99999999999999999999",
    "offset-negative": "offset=-1",
    "weights-pairs": "weights=price:0.5,delivery:0.2",
    "weights-pairs-all": "weights=price:1,delivery:0,quality:0,reliability:0",
    "weights-json-encoded": "weights=%7B%22price%22%3A0.7%2C%22quality%22%3A0.3%7D",
    "weights-raw-json": '{"price":0.5,"delivery":0.5}',
    "weights-raw-json-dup": '{"price":0.5,"price":0.5}',
    "weights-raw-json-huge": '{"price":1e400}',
    "weights-raw-pairs": "price:.5,quality:0.25",
    "weights-twice": "weights=price:0.5,price:0.5",
    "weights-unknown": "weights=bogus:1",
    "weights-null": "weights=null",
    "weights-empty": "weights=",
    "weights-zero": "weights=price:0",
    "date-leap": "deliver_by=2028-02-29",
    "date-not-leap": "deliver_by=2026-02-29",
    "date-past": "deliver_by=1969-12-31",
    "eur-too-precise": "max_price=0.001",
    "eur-max": "max_price=1000000.00",
    "eur-over": "max_price=1000000.01",
    "bad-escape": "q=%2",
    "bad-utf8": "q=%FF",
    "nul": "q=%00",
    "utf8-text": "q=caf%C3%A9+%E2%82%AC",
    "empty-pieces": "a=b=c&&&=",
    "repeated": "sort=score&sort=price",
    "unknown": "unknown=1",
    "bool-bad": "verified_only=yes",
    "path-params": "sku=SOAP-001&token=abcdefgh",
    "slug-bad": "sku=SO%20AP",
    "long-key": "a" * 60 + "=1",
}.items():
    write("fuzz_query", name, q)

# ---- fuzz_body: a table byte, then JSON ----
reset("fuzz_body")
QUOTE, ORDER, RET, CHECK, QUESTION, DECIDE = range(6)
ANY = 0x80
body_seeds = [
    ("quote-full", QUOTE, json.dumps({"sku": "SOAP-001", "quantity": 2, "offer_id": "of-soap-a",
                                      "device": "dyson v11", "postcode": "3511 AB",
                                      "deliver_by": "2026-03-10",
                                      "weights": {"price": 0.6, "delivery": 0.4}})),
    ("quote-weights-null", QUOTE, '{"sku":"FILT-002","weights":null}'),
    ("quote-weights-empty", QUOTE, '{"sku":"FILT-002","weights":{}}'),
    ("quote-weights-bad", QUOTE, '{"sku":"FILT-002","weights":{"price":2,"speed":1}}'),
    ("quote-weights-array", QUOTE, '{"sku":"FILT-002","weights":[1]}'),
    ("quote-quantity-high", QUOTE, '{"sku":"SOAP-001","quantity":11}'),
    ("quote-quantity-string", QUOTE, '{"sku":"SOAP-001","quantity":"2"}'),
    ("quote-quantity-real", QUOTE, '{"sku":"SOAP-001","quantity":2.5}'),
    ("quote-quantity-null", QUOTE, '{"sku":"SOAP-001","quantity":null}'),
    ("quote-sku-short", QUOTE, '{"sku":"ab"}'),
    ("quote-sku-nul", QUOTE, '{"sku":"SO\\u0000AP"}'),
    ("quote-missing", QUOTE, "{}"),
    ("quote-dup", QUOTE, '{"sku":"SOAP-001","sku":"X"}'),
    ("quote-unknown", QUOTE, '{"sku":"SOAP-001","extra":1}'),
    ("quote-date-past", QUOTE, '{"sku":"SOAP-001","deliver_by":"2020-01-01"}'),
    ("quote-postcode-bad", QUOTE, '{"sku":"SOAP-001","postcode":"35_11"}'),
    ("order-ok", ORDER, '{"quote_id":"q_ok","reason":"Restocking the bathroom soap as agreed","mandate_id":"md_1"}'),
    ("order-reason-short", ORDER, '{"quote_id":"q_ok","reason":"because"}'),
    ("order-reason-utf8", ORDER, '{"quote_id":"q_ok","reason":"Ünïcödé: counted by code point, not bytes"}'),
    ("order-reason-long", ORDER, json.dumps({"quote_id": "q_ok", "reason": "x" * 501})),
    ("return-ok", RET, '{"order_id":"ord_delivered","reason_code":"does_not_fit","note":"too small"}'),
    ("return-bad-code", RET, '{"order_id":"ord_delivered","reason_code":"meh","note":null}'),
    ("check-ok", CHECK, '{"sku":"FILT-002","device":"dyson-v11"}'),
    ("question-ok", QUESTION, '{"sku":"SOAP-001","question":"Is it vegan?"}'),
    ("decide-ok", DECIDE, '{"decision":"approve","token":"abcdefgh12"}'),
    ("decide-bad", DECIDE, '{"decision":"maybe"}'),
    ("any-string", QUOTE | ANY, '"just a string"'),
    ("any-number", ORDER | ANY, "42"),
    ("any-array", RET | ANY, "[1,2]"),
    ("truncated", QUOTE, '{"sku": '),
    ("bad-utf8", QUESTION, b'{"sku":"SOAP-001","question":"\xff\xfe is it?"}'),
    ("long-key", CHECK, json.dumps({"k" * 50: 1})),
]
for name, table, text in body_seeds:
    if isinstance(text, str):
        text = text.encode()
    write("fuzz_body", name, bytes([table]) + text)

# ---- fuzz_api: four control bytes, then path \n query \n body ----
reset("fuzz_api")
METHODS = {"GET": 0, "HEAD": 1, "POST": 2, "PUT": 3, "DELETE": 4}
IDEM = {"k-fresh": 0, None: 1, "k-replay": 2, "k-busy": 3, "k-other": 4, "k-badjson": 5, "": 6,
        "a b": 7}


def store_ops():
    """The FAKE_OP_* names of the fake store (t/unit/fake_faults.h) in enum
    order (byte 2 of an input is an index into it), read from the header so the
    two cannot drift apart."""
    with open(os.path.join(HERE, "..", "unit", "fake_faults.h")) as f:
        header = f.read()
    body = re.search(r"enum\s*{([^}]*FAKE_OP_N\b[^}]*)}", header).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = re.findall(r"\bFAKE_OP_(\w+)", body)
    assert names[0] == "NONE" and names[-1] == "N", names
    return names[:-1]


OPS = store_ops()
RC = {"EDB": 0, "ENOTFOUND": 1, "ECONFLICT": 2}


def api(name, method, path, query="", body=None, idem="k-fresh", html=False, form=False,
        ident=0, keymode=0, nosign=False, nobase=False, clock=0, fail=None, nth=0, rc="EDB",
        user=0, auth=None, agent=None):
    b0 = METHODS[method] | IDEM[idem] << 3 | html << 6 | form << 7
    b1 = ident | keymode << 2 | nosign << 4 | nobase << 5 | clock << 6
    b2 = OPS.index(fail) if fail else 255
    b3 = nth | RC[rc] << 3 | user << 5
    text = path + "\n" + query
    if ident == 2:
        text += "\n" + (auth or "") + "\n" + (agent or "")
    if body is not None:
        text += "\n" + (body if isinstance(body, str) else json.dumps(body))
    write("fuzz_api", name, bytes([b0, b1, b2, b3]) + text.encode())


REASON = "Restocking the bathroom soap as agreed"
api("root", "GET", "/")
api("search-text-device", "GET", "/search", "q=filter&device=dyson-v11")
api("search-sorted-weights", "GET", "/search", "q=battery&verified_only=false&sort=price&weights=price:1")
api("search-offer-filters", "GET", "/search", "max_price=20&deliver_by=2026-03-03&merchant=m-beta")
api("search-ambiguous-device", "GET", "/search", "device=dyson+v11")
# the engine reads the index's versions on every search, builds the index from
# index_rows (and the others) and reads the page's stock; the store's search is
# what GET /devices/{slug}/compatible reads
api("search-store-fails", "GET", "/search", "q=soap", fail="SEARCH_VERSION")
api("search-index-build-fails", "GET", "/search", "q=soap", fail="INDEX_ROWS")
api("search-page-stock-fails", "GET", "/search", "q=soap", fail="OFFERS_STOCK")
api("compatible-store-fails", "GET", "/devices/dyson-v11/compatible", fail="SEARCH")
api("product-device-weights", "GET", "/products/FILT-002",
    "device=dyson-v8&weights=%7B%22price%22%3A1%7D")
api("product-battery", "HEAD", "/products/BATT-004", "device=dyson-v11&deliver_by=2026-03-02")
api("product-missing", "GET", "/products/NOPE-1")
api("devices-query", "GET", "/devices", "q=dyson&limit=2")
api("compatible", "GET", "/devices/dyson-v11/compatible", "part_type=filter")
api("compatible-missing", "GET", "/devices/nope/compatible")
api("mandate", "GET", "/mandates/current")
api("mandate-no-key", "GET", "/mandates/current", ident=1)
api("mandate-raw-headers", "GET", "/mandates/current", ident=2,
    auth="Bearer agentshop_sk_test_0123456789abcdef0123456789abcdef", agent="bot/2")
api("mandate-revoked-key", "GET", "/mandates/current", keymode=1)
api("quote", "POST", "/quotes", body={"sku": "FILT-002", "quantity": 2, "device": "dyson v11 absolute",
                                      "postcode": "3511 AB", "weights": {"price": 0.7, "delivery": 0.3}})
api("quote-out-of-stock", "POST", "/quotes", body={"sku": "BATT-004", "offer_id": "of-batt-c"})
api("quote-too-many", "POST", "/quotes", body={"sku": "BATT-004", "quantity": 5})
api("order", "POST", "/orders", body={"quote_id": "q_ok", "reason": REASON})
api("order-needs-confirmation", "POST", "/orders", body={"quote_id": "q_big", "reason": REASON})
api("order-over-limit", "POST", "/orders", body={"quote_id": "q_huge", "reason": REASON, "mandate_id": "md_1"})
api("order-category", "POST", "/orders", body={"quote_id": "q_batt", "reason": REASON, "mandate_id": "md_open"})
api("order-expired-quote", "POST", "/orders", body={"quote_id": "q_expired", "reason": REASON})
api("order-replay", "POST", "/orders", body={"quote_id": "q_ok", "reason": REASON}, idem="k-replay")
api("order-busy", "POST", "/orders", body={"quote_id": "q_ok", "reason": REASON}, idem="k-busy")
api("order-commit-fails", "POST", "/orders", body={"quote_id": "q_ok", "reason": REASON}, fail="COMMIT")
api("order-get-due", "GET", "/orders/ord_due")
api("cancel", "POST", "/orders/ord_await/cancel")
api("cancel-shipped", "POST", "/orders/ord_shipped/cancel")
api("return", "POST", "/returns", body={"order_id": "ord_delivered", "reason_code": "wrong_item", "note": "wrong size"})
api("return-window-closed", "POST", "/returns", body={"order_id": "ord_old", "reason_code": "defective"})
api("return-label", "GET", "/returns/ret_1/label")
api("confirmation-page", "GET", "/confirmations/conf_ok", "token=@TOKEN@", html=True)
api("confirmation-approve", "POST", "/confirmations/conf_ok", body={"decision": "approve", "token": "@TOKEN@"})
api("confirmation-form", "POST", "/confirmations/conf_ok", "token=@TOKEN@", body="decision=decline", form=True, html=True)
api("confirmation-expired", "POST", "/confirmations/conf_exp", "token=@TOKEN@", body={"decision": "approve"})
api("compat-check", "POST", "/compatibility/check", body={"sku": "FILT-005", "device": "dyson-v11"})
api("question", "POST", "/questions", body={"sku": "BATT-004", "question": "How long does the battery last?"})
api("mandate-expired", "GET", "/mandates/current", user=2)
api("mandate-revoked", "GET", "/mandates/current", user=3)
api("order-other-user", "GET", "/orders/ord_placed", user=1)
api("order-quote-used", "POST", "/orders", body={"quote_id": "q_used", "reason": REASON})
api("order-no-stock", "POST", "/orders", body={"quote_id": "q_nostock", "reason": REASON})
api("quote-units-left", "POST", "/quotes", body={"sku": "FILT-002", "offer_id": "of-filt-a", "quantity": 6})
api("quote-not-eligible", "POST", "/quotes", body={"sku": "SOAP-001", "offer_id": "of-soap-b", "deliver_by": "2026-03-03"})
api("confirmation-decided", "POST", "/confirmations/conf_done", "token=@TOKEN@", body={"decision": "decline"})
api("wrong-method", "DELETE", "/orders/ord_placed")
api("bad-path", "GET", "/products/%2Fx")

# ---- fuzz_question: a control byte, then the question ----
reset("fuzz_question")
for name, ctl, q in [
    ("vegan", "A", "Is it vegan?"),
    ("volume-contradicted", "B", "How much liquid is in the bottle?"),
    ("capacity-pending", "@", "What is the capacity in mAh?"),
    ("no-specs", "D", "Does it smell of lavender?"),
    ("first-three", "I", "how many bottles are in the pack"),
    ("ph", "A", "What's the pH, is it acidic?"),
    ("washable", "A", "Is it washable, can I rinse it?"),
    ("box", "C", "What comes with it, what is in the box?"),
    ("hepa", "A", "HEPA filter efficiency for allergens and dust"),
    ("voltage", "A", "voltage volts"),
    ("diameter", "A", "diameter size how wide"),
    ("colour", "A", "colour black color"),
    ("yield", "A", "page yield, how many pages"),
    ("lifetime", "A", "lifetime: how often should I replace it"),
    ("unicode", "A", "ééé 測定 µm label"),
    ("stopwords", "A", "a an the is it of this that"),
    ("stems", "A", "measured measurement measure fragranced"),
    ("empty", "A", ""),
    ("spaces", "A", "   "),
    ("long", "A", "volume " * 60),
]:
    write("fuzz_question", name, ctl + q)

print("seeds written to", CORPUS)

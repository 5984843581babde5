// A TypeScript client of the Agent Shopping API as a third party would write
// one: types generated from the served OpenAPI document by openapi-typescript
// (into ./api.d.ts, at test time, never committed), requests made by
// openapi-fetch, the whole compiled with `tsc --strict`. t/api/ts_client.t
// builds and runs it against the real server: search -> quote -> order ->
// get -> cancel, and an error. A field renamed or retyped in the document
// breaks the compile; a server answering other than the document says breaks
// a check here or in ts_client.t.
//
//   node shop-client.js http://127.0.0.1:8529/v1 AGENT_KEY
//
// Prints one JSON object (what each step saw, and `failure` when a check
// failed) and exits 0 when it could print it.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";
import { randomUUID } from "node:crypto";
import dns from "node:dns";

type Order = components["schemas"]["Order"];
type ConfirmationRequired = components["schemas"]["ConfirmationRequired"];

// Node.js 18 resolves localhost to ::1 first without falling back to
// 127.0.0.1, where the suite's httpd listens.
dns.setDefaultResultOrder("ipv4first");

const [base, key] = process.argv.slice(2);
if (!base || !key) {
  console.error("usage: node shop-client.js API_BASE AGENT_KEY");
  process.exit(2);
}

interface Step {
  name: string;
  status: number;
  [field: string]: unknown;
}
const out: { steps: Step[]; failure?: string } = { steps: [] };

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what);
}

const isCents = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0;

// A 201 carries the order, a 202 the confirmation it waits for: told apart
// by the fields only one of them has.
const isOrder = (d: Order | ConfirmationRequired): d is Order => "receipt" in d && "timeline" in d;

const client = createClient<paths>({
  baseUrl: base,
  headers: { Authorization: `Bearer ${key}`, "Service-Agent": "ts-client-test/1.0" },
});

async function main(): Promise<void> {
  // Public search: the first result with an offer in stock.
  const search = await client.GET("/search", { params: { query: { q: "filter", limit: 20 } } });
  out.steps.push({ name: "search", status: search.response.status, count: search.data?.count ?? null });
  check(search.data, `search: ${search.response.status} without a body`);
  check(search.data.count >= search.data.results.length, "search: count is less than the results listed");
  const hit = search.data.results.find((r) => r.best_offer !== null && r.best_offer.stock >= 1);
  check(hit && hit.best_offer, "search: no result with an offer in stock");
  const offer = hit.best_offer;
  out.steps[0].sku = hit.sku;
  out.steps[0].offer_id = offer.offer_id;
  out.steps[0].price_cents = offer.price_cents;
  check(isCents(offer.price_cents), "search: the offer's price_cents is not integer cents");

  // Quote that product.
  const quote = await client.POST("/quotes", { body: { sku: hit.sku, quantity: 1 } });
  check(quote.data, `quote: ${quote.response.status} ${JSON.stringify(quote.error)}`);
  const q = quote.data;
  out.steps.push({
    name: "quote", status: quote.response.status, id: q.id, sku: q.sku, offer_id: q.offer_id,
    quantity: q.quantity, unit_price_cents: q.unit_price_cents, total_cents: q.total_cents,
    currency: q.currency, expires_at: q.expires_at,
  });
  check(isCents(q.total_cents) && q.total_cents === q.unit_price_cents * q.quantity,
        "quote: total_cents is not quantity x unit_price_cents");
  check(Date.parse(q.expires_at) > Date.parse(q.created_at), "quote: expires before it was made");

  // Order it, with an Idempotency-Key (a header parameter of the operation).
  const idem = randomUUID();
  const body = { quote_id: q.id, reason: "Bought by the generated TypeScript client test." };
  const order = await client.POST("/orders", { params: { header: { "Idempotency-Key": idem } }, body });
  check(order.data, `order: ${order.response.status} ${JSON.stringify(order.error)}`);
  check(isOrder(order.data), `order: ${order.response.status} is not an order: ${JSON.stringify(order.data)}`);
  const o = order.data;
  out.steps.push({
    name: "order", status: order.response.status, id: o.id, order_status: o.status, quote_id: o.quote_id,
    sku: o.sku, total_cents: o.total_cents, replayed: order.response.headers.get("Idempotent-Replayed"),
    timeline: o.timeline.map((t) => t.status),
  });

  // The same request again is the same order, replayed.
  const again = await client.POST("/orders", { params: { header: { "Idempotency-Key": idem } }, body });
  check(again.data && isOrder(again.data), `order again: ${again.response.status}`);
  out.steps.push({
    name: "order_again", status: again.response.status, id: again.data.id,
    replayed: again.response.headers.get("Idempotent-Replayed"),
  });

  // Read it back, then cancel it.
  const got = await client.GET("/orders/{id}", { params: { path: { id: o.id } } });
  check(got.data, `get order: ${got.response.status} ${JSON.stringify(got.error)}`);
  out.steps.push({
    name: "get", status: got.response.status, id: got.data.id, order_status: got.data.status,
    cancellable: got.data.cancellable, shipped_at: got.data.shipped_at,
  });

  const cancel = await client.POST("/orders/{id}/cancel", { params: { path: { id: o.id } } });
  check(cancel.data, `cancel: ${cancel.response.status} ${JSON.stringify(cancel.error)}`);
  out.steps.push({
    name: "cancel", status: cancel.response.status, id: cancel.data.id, order_status: cancel.data.status,
    cancellable: cancel.data.cancellable, timeline: cancel.data.timeline.map((t) => t.status),
  });

  // An error is the document's error object, typed as such.
  const missing = await client.GET("/orders/{id}", { params: { path: { id: "ord_doesnotexist" } } });
  check(missing.data === undefined && missing.error, `missing order: ${missing.response.status} with a body`);
  out.steps.push({
    name: "missing", status: missing.response.status, error: missing.error.error,
    message: missing.error.message, docs: missing.error.docs ?? null,
  });
}

try {
  await main();
} catch (e) {
  out.failure = e instanceof Error ? (e.stack ?? e.message) : String(e);
}
process.stdout.write(JSON.stringify(out) + "\n");

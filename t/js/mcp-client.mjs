// The official MCP TypeScript SDK against mod_agentshop's POST /v1/mcp: connect,
// list the tools, call each of them (search, read, buy and cancel, errors),
// and print what happened as one JSON object for t/api/mcp_sdk.t to judge. The SDK
// checks each structuredContent against the tool's outputSchema itself (a
// mismatch is a thrown error, reported as a protocol_error); every one is also
// validated here with Ajv as JSON Schema 2020-12, formats included.
//
//   node t/js/mcp-client.mjs http://127.0.0.1:8529/v1/mcp AGENT_KEY
//
// Exits 0 when it could print its findings (even bad ones), 1 when it could not.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import dns from 'node:dns';

// Debian 12's Node.js 18 resolves localhost to ::1 first and, unlike Node 20,
// does not fall back to 127.0.0.1, where the suite's httpd listens.
dns.setDefaultResultOrder('ipv4first');

const [url, key] = process.argv.slice(2);
if (!url || !key) {
  console.error('usage: node mcp-client.mjs MCP_URL AGENT_KEY');
  process.exit(2);
}

const out = { steps: [] };
const step = (name, data) => out.steps.push({ name, ...data });

// A tool call that never throws: the result, or the protocol error.
async function call(client, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { result: r };
  } catch (e) {
    return { error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validators = {};

const summary = (c, tool) =>
  c.error
    ? { protocol_error: c.error }
    : {
        isError: c.result.isError === true,
        status: c.result._meta?.['agentshop/status'] ?? null,
        replayed: c.result._meta?.['agentshop/replayed'] === true,
        text_is_json: (() => {
          try {
            return JSON.stringify(JSON.parse(c.result.content[0].text)) ===
              JSON.stringify(c.result.structuredContent);
          } catch {
            return false;
          }
        })(),
        // the summary is shorter than the data it sums up
        text_bytes: Buffer.byteLength(c.result.content[0]?.text ?? ''),
        data_bytes: Buffer.byteLength(JSON.stringify(c.result.structuredContent ?? null)),
        text: String(c.result.content[0]?.text ?? '').slice(0, 400),
        texts: c.result.content.length,
        schema_errors: validators[tool]
          ? validators[tool](c.result.structuredContent)
            ? []
            : validators[tool].errors.slice(0, 3).map((e) => `${e.instancePath} ${e.message}`)
          : ['no outputSchema'],
      };

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: {
      headers: { Authorization: `Bearer ${key}`, 'Service-Agent': 'mcp-sdk-test/1.0' },
    },
  });
  const client = new Client({ name: 'agentshop-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  out.protocol_version = transport.protocolVersion ?? null;
  out.session_id = transport.sessionId ?? null;
  out.server = client.getServerVersion() ?? null;
  out.capabilities = client.getServerCapabilities() ?? null;
  out.instructions = typeof client.getInstructions() === 'string';

  const { tools } = await client.listTools();
  out.tools = tools.map((t) => t.name);
  out.object_schemas = tools.every(
    (t) => t.inputSchema?.type === 'object' && typeof t.inputSchema.properties === 'object',
  );
  out.annotated = tools.every((t) => typeof t.annotations?.readOnlyHint === 'boolean');
  out.schema_compile_errors = [];
  for (const t of tools) {
    try {
      validators[t.name] = ajv.compile(t.outputSchema);
    } catch (e) {
      out.schema_compile_errors.push(`${t.name}: ${e.message}`);
    }
  }

  // Compiling blocked the event loop: let it see a connection httpd closed
  // meanwhile (a kept-alive one it ended), or the next POST is sent on it and
  // fails with "other side closed" (a POST is not retried).
  await new Promise((resolve) => setImmediate(resolve));
  // search_products: the first result that has an offer to buy.
  const search = await call(client, 'search_products', { q: 'filter', limit: 20 });
  step('search_products', summary(search, 'search_products'));
  const hit = search.result?.structuredContent?.results?.find((r) => r.best_offer);
  if (!hit) throw new Error('search_products found nothing to buy');
  out.sku = hit.sku;

  out.search_detail = search.result?.structuredContent?.detail ?? null;
  const full = await call(client, 'search_products', { q: 'filter', limit: 20, detail: 'full' });
  step('search_products_full', summary(full, 'search_products'));
  out.full_has_components = !!full.result?.structuredContent?.results?.find((r) => r.best_offer)?.best_offer
    ?.components;

  // The reading tools, each once.
  step('get_product', summary(await call(client, 'get_product', { sku: hit.sku }), 'get_product'));
  const devices = await call(client, 'find_devices', { q: 'dyson' });
  step('find_devices', summary(devices, 'find_devices'));
  const slug = devices.result?.structuredContent?.candidates?.[0]?.slug;
  if (!slug) throw new Error('find_devices found no dyson');
  const parts = await call(client, 'compatible_parts', { slug });
  step('compatible_parts', summary(parts, 'compatible_parts'));
  step('check_compatibility',
    summary(await call(client, 'check_compatibility', { sku: hit.sku, device: slug }), 'check_compatibility'));
  step('ask_question', summary(await call(client, 'ask_question', {
    sku: hit.sku, question: 'What are the dimensions of this part?',
  }), 'ask_question'));
  step('get_mandate', summary(await call(client, 'get_mandate', {}), 'get_mandate'));

  const quote = await call(client, 'create_quote', { sku: hit.sku, quantity: 1 });
  step('create_quote', summary(quote, 'create_quote'));
  const q = quote.result?.structuredContent;
  out.quote = { id: q?.id ?? null, sku: q?.sku ?? null, total_cents: q?.total_cents ?? null };

  const idem = randomUUID();
  const orderArgs = {
    quote_id: q?.id,
    reason: 'Bought by the MCP SDK test: the best-ranked offer for a filter.',
    idempotency_key: idem,
  };
  const order = await call(client, 'create_order', orderArgs);
  step('create_order', summary(order, 'create_order'));
  const o = order.result?.structuredContent;
  out.order = { id: o?.id ?? null, status: o?.status ?? null, quote_id: o?.quote_id ?? null };

  const again = await call(client, 'create_order', orderArgs);
  step('create_order_again', summary(again, 'create_order'));
  out.replay_same_order = again.result?.structuredContent?.id === o?.id;

  const got = await call(client, 'get_order', { order_id: o?.id });
  step('get_order', summary(got, 'get_order'));
  out.got_status = got.result?.structuredContent?.status ?? null;

  const cancel = await call(client, 'cancel_order', { order_id: o?.id });
  step('cancel_order', summary(cancel, 'cancel_order'));
  out.cancelled_status = cancel.result?.structuredContent?.status ?? null;

  // Errors are tool results too, and their Error objects fit the outputSchema.
  const ret = await call(client, 'start_return', {
    order_id: o?.id, reason_code: 'no_longer_needed', idempotency_key: randomUUID(),
  });
  step('start_return', summary(ret, 'start_return'));
  out.return_error = ret.result?.structuredContent?.error ?? null;

  const missing = await call(client, 'get_order', { order_id: 'ord_doesnotexist' });
  step('get_order_missing', summary(missing, 'get_order'));
  out.missing_error = missing.result?.structuredContent?.error ?? null;

  const unknown = await call(client, 'no_such_tool', {});
  step('no_such_tool', summary(unknown, 'no_such_tool'));
  out.unknown_tool_code = unknown.error?.code ?? null;

  out.ping = await client.ping().then(
    () => true,
    () => false,
  );
  await client.close();
}

try {
  await main();
} catch (e) {
  out.failure = String(e?.stack ?? e);
}
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);

// Do the MCP tools take and give what their REST operations take and give?
// For each tool of a tools/list result, the operation of the OpenAPI document
// with the same operationId:
//   - arguments: exactly the operation's query, path and body parameters (the
//     Idempotency-Key header is the argument idempotency_key; a path `id` is
//     `order_id`; the `weights` query text is the body's WeightsInput object),
//     with the same schema: type, limits, enums, patterns, required-ness, and
//     for objects their properties, recursively. Arguments of MCP's own (a
//     search's `detail`) are listed below.
//   - the same argument name means the same schema in every tool, except the
//     few the document itself defines differently per operation (SAME_NAME).
//   - outputSchema: an object schema whose anyOf is the operation's 2xx
//     response schemas and then the Error object, each exactly the document's
//     (its schemas copied into $defs), after the tool's own result form when
//     it has one (OWN_FORM).
//   node tools-match-openapi.mjs <openapi.json> <tools-list.json>
// Prints one JSON object: {tool: [differences...]} (empty arrays when they
// match); exit 1 when any differs or a tool has no operation.
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const [docPath, toolsPath] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const tools = JSON.parse(readFileSync(toolsPath, "utf8")).tools;

const SCHEMAS = "#/components/schemas/";
const deref = (o) => {
  for (let n = 0; o && typeof o.$ref === "string" && n < 10; n++)
    o = o.$ref.slice(2).split("/").reduce((a, k) => a[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  return o;
};
const ops = {};
for (const item of Object.values(doc.paths))
  for (const m of ["get", "post", "put", "patch", "delete"])
    if (item[m]?.operationId) ops[item[m].operationId] = { op: item[m], item };

const RENAME = { "Idempotency-Key": "idempotency_key" };
// Query parameters that carry an object encoded as text (docs/api.md): the
// tool takes the object itself, as the request bodies define it.
const ENCODED = { weights: SCHEMAS + "WeightsInput" };
// Arguments of the MCP tool alone (docs/mcp.md): not sent to the operation.
const MCP_ONLY = { search_products: ["detail"] };
// Tools whose first outputSchema member is their own result form.
const OWN_FORM = new Set(["search_products"]);
// Names the document gives different rules in different operations, and why.
const SAME_NAME = {
  q: "search text (may be empty) vs a device's name (at least one character)",
};

// The validation keywords of a schema, refs resolved, recursively; what only
// informs (description, default, examples, title) is left out, so a tool may
// word its descriptions for a model.
const KEYS = ["type", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "enum", "const", "format", "pattern", "minProperties", "maxProperties", "minItems", "maxItems", "required"];
// The document writes "X or null" (and any value of several types) as oneOf
// single-type schemas, which every generator reads alike; a tool's input
// schema may say the same with a type array. Both read here as one schema
// with a list of types.
const flatten = (s) => {
  const alts = s.anyOf || s.oneOf;
  if (!Array.isArray(alts)) return s;
  const branches = alts.map(deref);
  if (!branches.every((b) => b && typeof b.type === "string")) return s;
  const typed = branches.filter((b) => b.type !== "null");
  const out = typed.length === 1 ? { ...typed[0] } : {};
  out.type = branches.map((b) => b.type);
  return out;
};
function norm(s, depth = 0) {
  s = flatten(deref(s) || {});
  if (depth > 12) return {};
  const out = {};
  for (const k of KEYS) if (s[k] !== undefined) out[k] = s[k];
  if (Array.isArray(out.type)) out.type = [...out.type].sort();
  if (Array.isArray(out.required)) out.required = [...out.required].sort();
  if (s.properties)
    out.properties = Object.fromEntries(Object.entries(s.properties).sort().map(([k, v]) => [k, norm(v, depth + 1)]));
  if (s.additionalProperties !== undefined)
    out.additionalProperties = typeof s.additionalProperties === "object" ? norm(s.additionalProperties, depth + 1) : s.additionalProperties;
  if (s.items) out.items = norm(s.items, depth + 1);
  for (const k of ["oneOf", "anyOf", "allOf"]) if (s[k]) out[k] = s[k].map((x) => norm(x, depth + 1));
  return out;
}
const same = (a, b) => isDeepStrictEqual(norm(a), norm(b));
const show = (s) => JSON.stringify(norm(s));

// The document's schema with its references pointed at $defs, as a tool's
// outputSchema holds it.
const asDefs = (s) => JSON.parse(JSON.stringify(s).replaceAll(`"$ref":"${SCHEMAS}`, '"$ref":"#/$defs/'));

const report = {};
let bad = 0;
const byName = {}; // argument -> [{tool, schema}]
for (const t of tools) {
  const diffs = (report[t.name] = []);
  const found = ops[t.name];
  if (!found) {
    diffs.push("no operation with this operationId");
    bad++;
    continue;
  }
  const want = {}; // name -> {schema, required}
  for (const p of [...(found.item.parameters || []), ...(found.op.parameters || [])].map(deref)) {
    if (p.in === "header" && !RENAME[p.name]) continue; // Authorization, Service-Agent: HTTP headers of the POST
    const name = RENAME[p.name] || (p.in === "path" && p.name === "id" ? "order_id" : p.name);
    const encoded = p.in === "query" && ENCODED[p.name];
    want[name] = { schema: encoded ? { $ref: encoded } : p.schema, required: !!p.required };
  }
  const body = deref(deref(found.op.requestBody)?.content?.["application/json"]?.schema);
  for (const [k, v] of Object.entries(body?.properties || {}))
    want[k] = { schema: v, required: (body.required || []).includes(k) };
  const have = t.inputSchema.properties || {};
  const own = new Set(MCP_ONLY[t.name] || []);
  const required = new Set(t.inputSchema.required || []);
  for (const k of Object.keys(want)) if (!(k in have)) diffs.push(`${k}: the operation takes it, the tool does not`);
  for (const k of Object.keys(have)) {
    (byName[k] ||= []).push({ tool: t.name, schema: have[k] });
    if (own.has(k)) continue;
    if (!(k in want)) {
      diffs.push(`${k}: the tool takes it, the operation does not`);
      continue;
    }
    if (!same(have[k], want[k].schema)) diffs.push(`${k}: tool ${show(have[k])} vs operation ${show(want[k].schema)}`);
    if (required.has(k) !== want[k].required) diffs.push(`${k}: required ${required.has(k)} in the tool, ${want[k].required} in the operation`);
  }
  if (t.inputSchema.type !== "object") diffs.push("inputSchema is not an object schema");

  // outputSchema: the operation's response bodies, then Error.
  const out = t.outputSchema;
  if (out?.type !== "object" || !Array.isArray(out.anyOf)) {
    diffs.push("outputSchema: not an object schema with anyOf");
  } else {
    const expect = [];
    for (const [status, r] of Object.entries(found.op.responses || {}))
      if (status.startsWith("2") && r.content?.["application/json"]?.schema) expect.push(asDefs(r.content["application/json"].schema));
    expect.push({ $ref: "#/$defs/Error" });
    const got = OWN_FORM.has(t.name) ? out.anyOf.slice(1) : out.anyOf;
    if (!isDeepStrictEqual(got, expect)) diffs.push(`outputSchema: anyOf ${JSON.stringify(got)} vs the operation's responses ${JSON.stringify(expect)}`);
    const refs = [...JSON.stringify(out).matchAll(/"\$ref":"([^"]*)"/g)].map((m) => m[1]);
    for (const r of refs)
      if (!r.startsWith("#/$defs/") || !out.$defs?.[r.slice(8)]) diffs.push(`outputSchema: ${r} does not resolve in its $defs`);
    for (const [name, s] of Object.entries(out.$defs || {}))
      if (!isDeepStrictEqual(s, asDefs(doc.components.schemas[name] ?? null)))
        diffs.push(`outputSchema: $defs/${name} is not the document's schema ${name}`);
  }
  bad += diffs.length;
}

// One name, one schema across the tools.
const across = (report["(across tools)"] = []);
for (const [name, uses] of Object.entries(byName)) {
  if (SAME_NAME[name]) continue;
  for (const u of uses.slice(1))
    if (!same(u.schema, uses[0].schema))
      across.push(`${name}: ${u.tool} ${show(u.schema)} vs ${uses[0].tool} ${show(uses[0].schema)}`);
}
bad += across.length;
console.log(JSON.stringify(report));
process.exit(bad ? 1 : 0);

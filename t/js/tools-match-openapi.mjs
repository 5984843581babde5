// Do the MCP tools take what their REST operations take? For each tool of a
// tools/list result, the operation of the OpenAPI document with the same
// operationId: the tool's arguments must be exactly the operation's query,
// path and body parameters (the Idempotency-Key header is the argument
// idempotency_key; a path `id` is `order_id`), with the same type, limits,
// enums and required-ness.
//   node tools-match-openapi.mjs <openapi.json> <tools-list.json>
// Prints one JSON object: {tool: [differences...]} (empty arrays when they
// match); exit 1 when any differs or a tool has no operation.
import { readFileSync } from "node:fs";

const [docPath, toolsPath] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const tools = JSON.parse(readFileSync(toolsPath, "utf8")).tools;

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
// tool takes the object itself.
const ENCODED = new Set(["weights"]);
const KEYS = ["type", "minLength", "maxLength", "minimum", "maximum", "enum", "format", "pattern"];
// JSON Schema keywords compared; a tool may say no more than the operation.
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
const norm = (s) => {
  s = flatten(deref(s) || {});
  const out = {};
  for (const k of KEYS) if (s[k] !== undefined) out[k] = s[k];
  if (Array.isArray(out.type)) out.type = [...out.type].sort();
  return JSON.stringify(out);
};

const report = {};
let bad = 0;
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
    want[name] = { schema: p.schema, required: !!p.required, encoded: p.in === "query" && ENCODED.has(p.name) };
  }
  const body = deref(deref(found.op.requestBody)?.content?.["application/json"]?.schema);
  for (const [k, v] of Object.entries(body?.properties || {}))
    want[k] = { schema: v, required: (body.required || []).includes(k) };
  const have = t.inputSchema.properties || {};
  const required = new Set(t.inputSchema.required || []);
  for (const k of Object.keys(want)) if (!(k in have)) diffs.push(`${k}: the operation takes it, the tool does not`);
  for (const k of Object.keys(have)) {
    if (!(k in want)) {
      diffs.push(`${k}: the tool takes it, the operation does not`);
      continue;
    }
    if (want[k].encoded) {
      if (deref(have[k]).type !== "object") diffs.push(`${k}: the tool should take the object the query string encodes`);
    } else if (norm(have[k]) !== norm(want[k].schema)) diffs.push(`${k}: tool ${norm(have[k])} vs operation ${norm(want[k].schema)}`);
    if (required.has(k) !== want[k].required) diffs.push(`${k}: required ${required.has(k)} in the tool, ${want[k].required} in the operation`);
  }
  if (t.inputSchema.type !== "object") diffs.push("inputSchema is not an object schema");
  bad += diffs.length;
}
console.log(JSON.stringify(report));
process.exit(bad ? 1 : 0);

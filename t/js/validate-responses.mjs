// Checks every response the Apache::Test suite received (t/var/responses.jsonl,
// written by AgentShop::Test::api) against the OpenAPI document:
//   - the response is matched to its operation by path template and method
//     (HEAD is the GET operation, without a body);
//   - its status is documented for the operation (or `default`), its content
//     type is documented for that status, and a JSON body validates against
//     the schema (JSON Schema 2020-12, refs resolved in the document);
//   - a path no template matches must be a 404 error object, and a known path
//     with an undocumented method a 405 error object with an Allow header;
//   - every operation has at least one logged response, except those listed
//     in UNCOVERED with the reason.
// Usage: node validate-responses.mjs <openapi.json> <responses.jsonl>
// Last line: `openapi: N passed, M failed`; exit 1 on any failure.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// Operations no api() call of the suite reaches, and why.
const UNCOVERED = {};

const [docPath, logPath] = process.argv.slice(2);
let passed = 0;
let failed = 0;

function finish() {
  console.log(`openapi: ${passed} passed, ${failed} failed`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

function fail(what, detail) {
  failed++;
  console.log(`FAIL ${what}`);
  if (detail) console.log("  " + detail.replace(/\n/g, "\n  "));
}

if (!docPath || !logPath) {
  console.error("usage: node validate-responses.mjs <openapi.json> <responses.jsonl>");
  failed++;
  finish();
}

let doc;
try {
  doc = JSON.parse(readFileSync(docPath, "utf8"));
} catch (e) {
  fail(`the OpenAPI document ${docPath} cannot be read`, String(e));
  finish();
}
let lines = [];
try {
  lines = readFileSync(logPath, "utf8").split("\n").filter((l) => l.trim() !== "");
} catch (e) {
  fail(`the response log ${logPath} cannot be read`, String(e));
  finish();
}
if (lines.length === 0) {
  fail(`the response log ${logPath} is empty: no response was recorded`);
  finish();
}

const DOC_ID = "urn:agentshop:openapi";
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, DOC_ID);

const pointerPart = (s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const validators = new Map();
function validatorAt(pointer) {
  if (!validators.has(pointer)) validators.set(pointer, ajv.compile({ $ref: `${DOC_ID}#${pointer}` }));
  return validators.get(pointer);
}

// Follows a local $ref ("#/components/responses/X"): [object, its pointer].
function deref(obj, pointer) {
  let seen = 0;
  while (obj && typeof obj.$ref === "string" && obj.$ref.startsWith("#/") && seen++ < 10) {
    pointer = obj.$ref.slice(1);
    obj = pointer
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((o, k) => (o == null ? o : o[k]), doc);
  }
  return [obj, pointer];
}

// Path templates, most literal segments first when several match.
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const templates = Object.keys(doc.paths || {}).map((t) => ({
  template: t,
  segs: t === "/" ? [] : t.slice(1).split("/"),
}));

function decodeSeg(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

function matchPath(path) {
  const segs = path === "/" ? [] : path.slice(1).split("/");
  let best = null;
  let bestLiterals = -1;
  for (const t of templates) {
    if (t.segs.length !== segs.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      if (/^\{[^}]+\}$/.test(t.segs[i])) ok = segs[i] !== "";
      else if (decodeSeg(segs[i]) === t.segs[i]) literals++;
      else ok = false;
    }
    if (ok && literals > bestLiterals) {
      best = t.template;
      bestLiterals = literals;
    }
  }
  return best;
}

const excerpt = (body) => {
  const s = String(body ?? "");
  return s.length > 400 ? s.slice(0, 400) + "…" : s;
};
const mediaType = (ct) => (ct || "").split(";")[0].trim().toLowerCase();

function describe(r) {
  const q = r.query != null ? `?${r.query}` : "";
  const where = r.base && r.base !== "/v1" ? ` (base ${r.base})` : "";
  return `${r.method} ${r.path}${q.length > 120 ? q.slice(0, 120) + "…" : q} -> ${r.status}${where} [${r.test || "?"}]`;
}

// The error object, for responses outside any operation (404, 405).
const errorPointer = "/components/schemas/Error";

function checkBody(r, pointer) {
  let body;
  try {
    body = JSON.parse(r.body);
  } catch (e) {
    return `body is not JSON: ${e.message}\nbody: ${excerpt(r.body)}`;
  }
  const validate = validatorAt(pointer);
  if (validate(body)) return null;
  const errs = validate.errors
    .slice(0, 8)
    .map((e) => `${e.instancePath || "(root)"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`)
    .join("\n");
  return `schema ${pointer}:\n${errs}\nbody: ${excerpt(r.body)}`;
}

const covered = new Set();
for (const [i, line] of lines.entries()) {
  let r;
  try {
    r = JSON.parse(line);
  } catch (e) {
    fail(`line ${i + 1} of the log is not JSON`, excerpt(line));
    continue;
  }
  if (r.internal) continue; // no response reached the client: nothing to check
  const head = r.method === "HEAD";
  const template = matchPath(r.path);
  if (!template) {
    // Outside every operation: only the error object, 404, may answer.
    if (r.status !== 404 || mediaType(r.content_type) !== "application/json") {
      fail(describe(r), `a path no template matches must be 404 application/json; got ${r.content_type}\nbody: ${excerpt(r.body)}`);
      continue;
    }
    const err = head ? null : checkBody(r, errorPointer);
    if (err) fail(describe(r), err);
    else passed++;
    continue;
  }
  const item = doc.paths[template];
  const method = head ? "get" : r.method.toLowerCase();
  const op = METHODS.includes(method) ? item[method] : undefined;
  if (!op) {
    const allow = (r.headers || {}).allow;
    if (r.status !== 405 || !allow) {
      fail(describe(r), `${r.method} is not documented for ${template}: expected 405 with Allow; got ${r.status}, Allow ${allow}\nbody: ${excerpt(r.body)}`);
      continue;
    }
    const documented = allow.split(/,\s*/).map((m) => m.toLowerCase()).filter((m) => m !== "head").sort();
    const inDoc = METHODS.filter((m) => item[m]).sort();
    const err = JSON.stringify(documented) !== JSON.stringify(inDoc)
      ? `Allow: ${allow} but the document has ${inDoc.join(", ")} for ${template}`
      : head ? null : checkBody(r, errorPointer);
    if (err) fail(describe(r), err);
    else passed++;
    continue;
  }
  const opName = op.operationId || `${method} ${template}`;
  covered.add(opName);
  const opPointer = `/paths/${pointerPart(template)}/${method}`;
  const responses = op.responses || {};
  const key = [String(r.status), `${String(r.status)[0]}XX`, "default"].find((k) => k in responses);
  if (!key) {
    fail(`${describe(r)} (${opName})`, `status ${r.status} is not documented (documented: ${Object.keys(responses).join(", ")})\nbody: ${excerpt(r.body)}`);
    continue;
  }
  const [resp, respPointer] = deref(responses[key], `${opPointer}/responses/${pointerPart(key)}`);
  const hdrs = r.headers || {};
  if (r.status === 429 && !hdrs["retry-after"]) {
    fail(`${describe(r)} (${opName})`, "429 without Retry-After");
    continue;
  }
  const content = resp.content || {};
  if (Object.keys(content).length === 0) {
    if (r.body !== "") fail(`${describe(r)} (${opName})`, `status ${r.status} is documented without a body, got: ${excerpt(r.body)}`);
    else passed++;
    continue;
  }
  const type = mediaType(r.content_type);
  if (!(type in content)) {
    fail(`${describe(r)} (${opName})`, `content type ${r.content_type} is not documented for ${r.status} (documented: ${Object.keys(content).join(", ")})\nbody: ${excerpt(r.body)}`);
    continue;
  }
  if (head) {
    if (r.body !== "") fail(`${describe(r)} (${opName})`, `HEAD with a body: ${excerpt(r.body)}`);
    else passed++;
    continue;
  }
  if (type === "application/json" || type.endsWith("+json")) {
    const err = checkBody(r, `${respPointer}/content/${pointerPart(type)}/schema`);
    if (err) {
      fail(`${describe(r)} (${opName})`, err);
      continue;
    }
  } else if (type === "text/event-stream") {
    // Server-sent events: each event's data must be JSON of the schema named
    // by the media type's x-event-data (the document's extension).
    const events = r.body.split(/\n\n/).filter((e) => e.trim() !== "");
    const dataPointer = `${respPointer}/content/${pointerPart(type)}/x-event-data`;
    let err = events.length ? null : "an event stream without events";
    for (const e of events) {
      const data = e.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      err = err || (content[type]["x-event-data"] ? checkBody({ body: data }, dataPointer) : null);
    }
    if (err) {
      fail(`${describe(r)} (${opName})`, err);
      continue;
    }
  } else if (type === "text/html" && !/^<!DOCTYPE html>/i.test(r.body)) {
    fail(`${describe(r)} (${opName})`, `not an HTML page: ${excerpt(r.body)}`);
    continue;
  }
  passed++;
}

// Coverage: every operation must have been seen at least once.
for (const [template, item] of Object.entries(doc.paths || {})) {
  for (const m of METHODS) {
    if (!item[m]) continue;
    const name = item[m].operationId || `${m} ${template}`;
    if (covered.has(name)) continue;
    if (UNCOVERED[name]) {
      console.log(`not covered by the log, by design: ${name} (${m.toUpperCase()} ${template}): ${UNCOVERED[name]}`);
      continue;
    }
    fail(`operation ${name} (${m.toUpperCase()} ${template}) has no logged response`);
  }
}
finish();

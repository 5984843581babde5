// Validates catalogue feed files (JSON Lines) against docs/catalogue.schema.json.
// Usage: node feed-schema.mjs <schema.json> [--invalid] <file.jsonl>...
//   every non-blank line of each file must validate; with --invalid, the
//   files after it hold lines each of which must NOT validate.
// Last line: `feed-schema: N valid, M invalid as expected, F failed`; exit 1
// on any failure or when no line was checked at all.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";

const [schemaPath, ...rest] = process.argv.slice(2);
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));
let valid = 0, invalid = 0, failed = 0, expectInvalid = false;
for (const arg of rest) {
  if (arg === "--invalid") { expectInvalid = true; continue; }
  const lines = readFileSync(arg, "utf8").split("\n");
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let rec;
    try { rec = JSON.parse(line); } catch (e) { rec = undefined; }
    const ok = rec !== undefined && validate(rec);
    if (ok === !expectInvalid) { ok ? valid++ : invalid++; return; }
    failed++;
    console.log(`FAIL ${arg}:${i + 1}: ${expectInvalid ? "validates, but should not" : ajv.errorsText(validate.errors)}`);
  });
}
console.log(`feed-schema: ${valid} valid, ${invalid} invalid as expected, ${failed} failed`);
process.exit(failed > 0 || valid + invalid === 0 ? 1 : 0);

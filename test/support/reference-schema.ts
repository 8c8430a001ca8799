/**
 * Validates response bodies against the reference service's published OpenAPI document
 * (`dflow-trade-openapi.json`, vendored byte-for-byte next to this module so CI needs nothing outside
 * the repo). Contract §6: a trade response must validate against the matching schema there.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

const DOCUMENT_ID = "https://oddsgate.test/reference/dflow-trade-openapi.json";

const documentPath = join(dirname(fileURLToPath(import.meta.url)), "dflow-trade-openapi.json");

interface OpenApiDocument {
  components: { schemas: Record<string, unknown> };
  [key: string]: unknown;
}

/** Inclusive ranges of the OpenAPI integer formats; checked for numbers, ignored for other types. */
const INTEGER_FORMATS: Record<string, readonly [number, number]> = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63],
  uint8: [0, 2 ** 8 - 1],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, 2 ** 64],
};

let cached: { ajv: Ajv2020; schemaNames: ReadonlySet<string> } | undefined;
const validators = new Map<string, ValidateFunction>();

function load(): { ajv: Ajv2020; schemaNames: ReadonlySet<string> } {
  if (cached) return cached;
  const document = JSON.parse(readFileSync(documentPath, "utf8")) as OpenApiDocument;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, [min, max]] of Object.entries(INTEGER_FORMATS)) {
    ajv.addFormat(name, {
      type: "number",
      validate: (n: number) => Number.isInteger(n) && n >= min && n <= max,
    });
  }
  // Any other format the document names (e.g. "double") is accepted as-is rather than rejected at compile.
  for (const format of collectFormats(document)) {
    if (!(format in INTEGER_FORMATS)) ajv.addFormat(format, true);
  }
  // The whole document is registered under one $id so "#/components/schemas/X" resolves inside it.
  ajv.addSchema({ ...document, $id: DOCUMENT_ID }, DOCUMENT_ID);
  cached = { ajv, schemaNames: new Set(Object.keys(document.components.schemas)) };
  return cached;
}

function collectFormats(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) collectFormats(item, into);
  } else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "format" && typeof value === "string") into.add(value);
      else collectFormats(value, into);
    }
  }
  return into;
}

function validatorFor(schemaName: string): ValidateFunction {
  const existing = validators.get(schemaName);
  if (existing) return existing;
  const { ajv, schemaNames } = load();
  if (!schemaNames.has(schemaName)) {
    throw new Error(
      `no schema ${JSON.stringify(schemaName)} in components.schemas of the reference document`,
    );
  }
  const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${schemaName}` });
  validators.set(schemaName, validate);
  return validate;
}

function formatError(error: ErrorObject): string {
  const path = `$${error.instancePath.replaceAll("/", ".")}`;
  const params = Object.keys(error.params).length > 0 ? ` ${JSON.stringify(error.params)}` : "";
  return `${path}: ${error.message ?? error.keyword}${params} (schema ${error.schemaPath})`;
}

/**
 * Errors of `body` against `components.schemas[schemaName]` of the reference document, one readable
 * line each with the JSON path (`$.routePlan.0.inAmount: must be string ...`). Empty when valid.
 * Throws when the document has no such schema.
 */
export function validateAgainstReference(schemaName: string, body: unknown): string[] {
  const validate = validatorFor(schemaName);
  if (validate(body)) return [];
  return (validate.errors ?? []).map(formatError);
}

/** Codes the contract gives every route, whatever its reference says (§4: a key in the query). */
const CONTRACT_CODES: ReadonlySet<string> = new Set(["api_key_in_query"]);

/** Per path, method and error status the reference declares: the codes its body may carry. */
let errorCodes: Map<string, ReadonlySet<string>> | undefined;

function referenceErrorCodes(): Map<string, ReadonlySet<string>> {
  if (errorCodes) return errorCodes;
  const document = JSON.parse(readFileSync(documentPath, "utf8")) as OpenApiDocument & {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  const schemas = document.components.schemas as Record<
    string,
    { properties?: { code?: unknown }; enum?: string[] }
  >;
  const named = (node: unknown) => {
    const ref = (node as { $ref?: string } | undefined)?.$ref;
    return ref ? schemas[ref.split("/").pop() as string] : undefined;
  };
  errorCodes = new Map();
  for (const [path, operations] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(operations))
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const content = (response as { content?: Record<string, { schema?: unknown }> }).content;
        const body = named(content?.["application/json"]?.schema);
        const codes = named(body?.properties?.code)?.enum;
        if (codes) errorCodes.set(`${method.toUpperCase()} ${path} ${status}`, new Set(codes));
      }
  return errorCodes;
}

/** Whether the reference declares the codes of `status` for the operation at `method` `path`. */
export function referenceDeclaresCodes(method: string, path: string, status: number): boolean {
  return referenceErrorCodes().has(`${method.toUpperCase()} ${path} ${status}`);
}

/**
 * Why an error response of a reference operation breaks its reference's enum of codes for that status
 * (undefined when it does not, or the reference declares no codes for the status: a 429 or a 413
 * keeps the venue's own).
 */
export function referenceCodeViolation(
  method: string,
  path: string,
  status: number,
  body: unknown,
): string | undefined {
  const codes = referenceErrorCodes().get(`${method.toUpperCase()} ${path} ${status}`);
  if (!codes) return undefined;
  const code = (body as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (codes.has(code) || CONTRACT_CODES.has(code))) return undefined;
  return `${method} ${path} answered ${status} ${JSON.stringify(code)}, not one of the reference's: ${[...codes].join(", ")}`;
}

/**
 * The published OpenAPI documents, one per API group, served at `/openapi.json` within the group's
 * prefix (`/api/v1/openapi.json` for the prediction-market data API, `/openapi.json` for the trade API).
 *
 * One @fastify/swagger instance at the root sees every route; a group's document holds the routes
 * registered in the group and the listener's own (health check, metrics, the sandbox faucet), with:
 * - the components its operations reference, generated from the zod schemas that carry an `id`;
 * - each query parameter typed as a client sends it: a schema that parses text into a number, a
 *   boolean or a list is published as that type (learnt by parsing sample texts with it), and the
 *   trade parameters their routes parse themselves as their declaration says the reference types them
 *   (the `published` annotation, trading/routes/query-params.ts);
 * - every error an operation can answer, by status, with its codes (`contract/operation-errors.ts`);
 * - the WebSocket routes as GET upgrades (101), whose messages are in the AsyncAPI document.
 */
import { STATUS_CODES } from "node:http";
import swagger from "@fastify/swagger";
import type { RouteOptions } from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Config } from "../config.js";
import { ERRORS, type ErrorCode } from "../contract/errors.js";
import {
  GENERIC_ERRORS,
  OPERATION_ERRORS,
  REQUEST_ERRORS,
  ROUTE_RENAMES,
  ROUTING_ERRORS,
  STREAM_ERRORS,
} from "../contract/operation-errors.js";
import { sendReusedBody } from "./reused-bodies.js";
import type { ZodApp } from "./types.js";

type JsonObject = Record<string, unknown>;
type SwaggerTransform = Parameters<typeof jsonSchemaTransform>[0];

/** Where the AsyncAPI document of the listener's streams is served. */
export const ASYNCAPI_PATH = "/asyncapi.json";

const DOCUMENTS = "apiDocuments";
const SCHEMA_PREFIX = "#/components/schemas/";
const ERROR_SCHEMA = "ErrorResponse";

/** The component responses of the routing errors, which answer no operation. */
const ROUTING_RESPONSES: Record<(typeof ROUTING_ERRORS)[number], { name: string; why: string }> = {
  not_found: { name: "NotFound", why: "No operation has this path" },
  method_not_allowed: { name: "MethodNotAllowed", why: "The path takes other methods (see Allow)" },
};

/** One API group: its document's title and description, the deployment's mode. */
interface ApiGroup {
  readonly info: { title: string; description: string };
  readonly mode: Config["MODE"];
  document?: JsonObject;
}

/** What the documents need to know of a route beyond its schema. */
interface RouteFacts {
  readonly websocket: boolean;
  readonly public: boolean;
  group?: ApiGroup;
}

/** Every documented route of one app, and its groups. */
class ApiDocuments {
  readonly routes = new Map<string, RouteFacts>();

  /** Records a route as it is registered anywhere in the app. */
  record(route: RouteOptions): void {
    for (const method of methodsOf(route)) {
      this.routes.set(operationKey(method, openApiPath(route.url)), {
        websocket: route.websocket === true,
        public: route.config?.public === true,
      });
    }
  }

  /** Marks a route as the group's own (registered in its context). */
  claim(route: RouteOptions, group: ApiGroup): void {
    for (const method of methodsOf(route)) {
      const facts = this.routes.get(operationKey(method, openApiPath(route.url)));
      if (facts) facts.group = group;
    }
  }

  /** The group's document, cut from `full` (the root's, with every route). */
  openApi(group: ApiGroup, full: JsonObject): JsonObject {
    group.document ??= this.build(group, full);
    return group.document;
  }

  private build(group: ApiGroup, full: JsonObject): JsonObject {
    const paths: Record<string, Record<string, JsonObject>> = {};
    for (const [path, item] of Object.entries(full.paths as Record<string, Record<string, JsonObject>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const facts = this.routes.get(operationKey(method, path));
        // A group's own routes, and the listener's (no group's), which every listener answers.
        if (!facts || (facts.group !== undefined && facts.group !== group)) continue;
        paths[path] ??= {};
        (paths[path] as Record<string, JsonObject>)[method] = documentOperation(operation, facts, path);
      }
    }
    // The router's answers, for a path or a method no operation has: no operation's own.
    const responses = Object.fromEntries(
      ROUTING_ERRORS.map((code) => {
        const { name, why } = ROUTING_RESPONSES[code];
        return [name, errorResponse(ERRORS[code].status, [code], [], why)];
      }),
    );
    const document: JsonObject = {
      openapi: "3.1.0",
      info: {
        title: group.info.title,
        version: "0.1.0",
        description: `${group.info.description}\n\nEvery error is \`{code, msg}\`; each operation lists the codes it can answer. A path no operation has answers 404 \`not_found\`, a method a path does not take 405 \`method_not_allowed\`. The WebSocket streams' messages are in the [AsyncAPI document](${ASYNCAPI_PATH}).`,
      },
      servers: [{ url: "/" }],
      // Development deployments also serve anonymous callers (rate limited per IP).
      security: group.mode === "production" ? [{ api_key: [] }] : [{ api_key: [] }, {}],
      paths,
      components: {
        securitySchemes: { api_key: { type: "apiKey", in: "header", name: "x-api-key" } },
        responses,
        schemas: {},
      },
    };
    (document.components as JsonObject).schemas = referencedSchemas(document);
    return document;
  }
}

/**
 * Installs the documents' generation on `app`: call it on the root instance before any route is
 * registered, then `registerOpenApi` in each API group.
 */
export async function installApiDocuments(app: ZodApp): Promise<void> {
  const documents = new ApiDocuments();
  app.decorate(DOCUMENTS, documents);
  await app.register(swagger, {
    openapi: { openapi: "3.1.0", info: { title: "oddsgate", version: "0.1.0" } },
    transform: documentRoute,
  });
  app.addHook("onRoute", (route) => documents.record(route));
}

/** Documents every route registered after it in `app`'s context as the group's, and serves the document. */
export async function registerOpenApi(
  app: ZodApp,
  info: { title: string; description: string },
  mode: Config["MODE"],
): Promise<void> {
  const documents = app.getDecorator<ApiDocuments>(DOCUMENTS);
  const group: ApiGroup = { info, mode };
  app.addHook("onRoute", (route) => documents.claim(route, group));
  // Built and serialized once, and compressed once per encoding (the /docs/ page loads it whole).
  let body: Buffer | undefined;
  app.get("/openapi.json", { schema: { hide: true } }, async (_request, reply) => {
    body ??= Buffer.from(JSON.stringify(documents.openApi(group, app.swagger() as unknown as JsonObject)));
    return sendReusedBody(reply, body, "application/json; charset=utf-8");
  });
}

/** @fastify/swagger's transform: zod schemas to JSON Schema, streams shown, query parameters typed. */
function documentRoute(input: SwaggerTransform): ReturnType<typeof jsonSchemaTransform> {
  const schema: SwaggerTransform["schema"] =
    input.route.websocket === true ? streamSchema(input.url) : input.schema;
  const transformed = jsonSchemaTransform({ ...input, schema });
  const query = schema?.querystring;
  const json = transformed.schema?.querystring as JsonObject | undefined;
  if (query instanceof z.ZodType && json) typeQuery(query, json);
  return transformed;
}

/** The streams the reference documents, under its operationId and tag. */
const REFERENCE_STREAMS: Readonly<Record<string, { operationId: string; tags: string[] }>> = {
  "/priority-fees/stream": { operationId: "priority_fee_stream_handler", tags: ["swap"] },
};

/** A WebSocket route, documented as the GET that upgrades it. */
function streamSchema(url: string) {
  return {
    operationId: url.replace(/^\//, "").replace(/[^A-Za-z0-9]+/g, "_"),
    tags: ["Streams"],
    ...(Object.hasOwn(REFERENCE_STREAMS, url) ? REFERENCE_STREAMS[url] : {}),
    summary: `WebSocket stream ${url}`,
    description: `Open with a WebSocket upgrade (GET with Upgrade: websocket; the API key, where one is needed, in x-api-key). Its messages are in the AsyncAPI document at ${ASYNCAPI_PATH}.`,
  };
}

/** Sample texts a query parameter's schema is run on to learn what it turns text into. */
const PROBES = ["0", "1", "2", "60", "100", "1440", "10000", "true", "false", "x", "x,y", "1,2"];
/** Keywords that describe a parameter whatever its type, kept when its type changes. */
const ANNOTATIONS = ["title", "description", "default", "examples", "example", "deprecated"];

/** Replaces, in place, each text parameter's JSON Schema with the type a client sends. */
function typeQuery(query: z.ZodType, json: JsonObject): void {
  const shape = (query as { shape?: Record<string, z.ZodType> }).shape;
  const properties = json.properties as Record<string, JsonObject> | undefined;
  if (!shape || !properties) return;
  for (const [name, property] of Object.entries(properties)) {
    const parameter = shape[name];
    if (property.type !== "string" || !parameter) continue;
    const wire = parsedType(parameter) ?? (parsesToText(parameter) ? publishedType(property) : undefined);
    if (!wire) continue;
    const kept = Object.fromEntries(Object.entries(property).filter(([key]) => ANNOTATIONS.includes(key)));
    // An example written as the text sent is shown as the value it stands for.
    if (typeof kept.example === "string") kept.example = parsedOr(parameter, kept.example);
    if (Array.isArray(kept.examples)) kept.examples = kept.examples.map((text) => parsedOr(parameter, text));
    properties[name] = { ...kept, ...wire };
  }
}

/** The JSON type of what `schema` makes of sample texts, when it makes one type other than a string. */
function parsedType(schema: z.ZodType): JsonObject | undefined {
  const accepts = (text: string) => schema.safeParse(text).success;
  const outputs = PROBES.flatMap((text) => {
    const parsed = schema.safeParse(text);
    return parsed.success && parsed.data !== undefined ? [parsed.data] : [];
  });
  const kinds = new Set(outputs.map(kindOf));
  const [kind] = kinds;
  if (kinds.size !== 1 || kind === "string") return undefined;
  if (kind === "boolean" || kind === "number") return { type: kind };
  if (kind === "integer") {
    const minimum = accepts("-1") ? undefined : accepts("0") ? 0 : accepts("1") ? 1 : undefined;
    return { type: "integer", ...(minimum === undefined ? {} : { minimum }) };
  }
  if (kind !== "array") return undefined;
  const items = new Set((outputs as unknown[][]).flat().map(kindOf));
  const [item] = items;
  if (items.size !== 1 || (item !== "string" && item !== "integer" && item !== "number")) return undefined;
  return { type: "array", items: { type: item } };
}

/** What `schema` makes of `example`, or `example` itself when that is not text it takes. */
function parsedOr(schema: z.ZodType, example: unknown): unknown {
  const parsed = typeof example === "string" ? schema.safeParse(example) : undefined;
  return parsed?.success ? parsed.data : example;
}

/** Whether `schema` passes text through as text: the route reads the value itself. */
/** The type a text parameter's declaration publishes it as (its `published` annotation). */
function publishedType(property: JsonObject): JsonObject | undefined {
  const published = property.published;
  return typeof published === "object" && published !== null ? (published as JsonObject) : undefined;
}

function parsesToText(schema: z.ZodType): boolean {
  const parsed = schema.safeParse("x");
  return parsed.success && parsed.data === "x";
}

function kindOf(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return Array.isArray(value) ? "array" : typeof value;
}

/** An operation of the full document as its group publishes it. */
function documentOperation(operation: JsonObject, facts: RouteFacts, path: string): JsonObject {
  const result: JsonObject = { ...operation };
  const parameters = operation.parameters as JsonObject[] | undefined;
  if (parameters) {
    // A list is sent as one comma-separated value (OpenAPI's default for a query is a repeated name).
    result.parameters = parameters.map((parameter) =>
      parameter.in === "query" && (parameter.schema as JsonObject | undefined)?.type === "array"
        ? { ...parameter, style: "form", explode: false }
        : parameter,
    );
  }
  if (facts.public) result.security = [{}, { api_key: [] }];
  const declared = (operation.responses ?? {}) as Record<string, JsonObject>;
  const responses: Record<string, JsonObject> = {};
  for (const [status, response] of Object.entries(declared)) {
    if (!facts.websocket && Number(status) < 400) responses[status] = response;
  }
  if (facts.websocket) {
    responses["101"] = {
      description: `Switching Protocols: the stream is open; its messages are in the AsyncAPI document at ${ASYNCAPI_PATH}`,
    };
  }
  const codes = operationCodes(String(operation.operationId ?? ""), facts, Object.keys(declared));
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { status } = ERRORS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const renames = Object.entries(Object.hasOwn(ROUTE_RENAMES, path) ? (ROUTE_RENAMES[path] ?? {}) : {});
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const codes = byStatus.get(status) ?? [];
    // The venue's own codes this status's reference codes stand for, as `reason`.
    const reasons = renames.filter(([, code]) => codes.includes(code)).map(([reason]) => reason as ErrorCode);
    responses[String(status)] = errorResponse(status, codes, reasons);
  }
  result.responses = responses;
  return result;
}

/** Every code an operation can answer: the request's, a stream's, its own (or its statuses' generic ones). */
function operationCodes(operationId: string, facts: RouteFacts, declared: readonly string[]): Set<ErrorCode> {
  const codes = new Set<ErrorCode>(REQUEST_ERRORS);
  if (facts.websocket) for (const code of STREAM_ERRORS) codes.add(code);
  const own = OPERATION_ERRORS[operationId];
  for (const code of own ?? []) codes.add(code);
  if (!own && !facts.websocket) codes.add("internal");
  const statuses = new Set<number>([...codes].map((code) => ERRORS[code].status));
  for (const status of declared.map(Number)) {
    if (status < 400 || statuses.has(status)) continue;
    const generic: ErrorCode | undefined =
      GENERIC_ERRORS[status] ??
      (Object.keys(ERRORS) as ErrorCode[]).find((code) => ERRORS[code].status === status);
    if (generic) codes.add(generic);
  }
  return codes;
}

/** A `{code, msg}` response whose code is one of `codes`, and whose `reason`, when there is one, one of `reasons`. */
function errorResponse(
  status: number,
  codes: readonly ErrorCode[],
  reasons: readonly ErrorCode[] = [],
  why?: string,
): JsonObject {
  const phrase = STATUS_CODES[status] ?? "Error";
  const retry = status === 429 || status === 503;
  return {
    description: `${why ?? phrase}: ${codes.map((code) => `\`${code}\``).join(", ")}`,
    ...(retry
      ? {
          headers: {
            "retry-after": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
          },
        }
      : {}),
    content: {
      "application/json": {
        schema: {
          allOf: [{ $ref: `${SCHEMA_PREFIX}${ERROR_SCHEMA}` }],
          type: "object",
          properties: {
            code: { type: "string", enum: codes },
            ...(reasons.length > 0 ? { reason: { type: "string", enum: reasons } } : {}),
          },
        },
      },
    },
  };
}

/**
 * The component schemas `document` references, transitively: every zod schema with an `id` (as the
 * input a client sends, `{id}Input`, and as the output it is sent, `{id}`), then only those in use.
 */
function referencedSchemas(document: JsonObject): Record<string, JsonObject> {
  const all: Record<string, JsonObject> = {};
  for (const io of ["input", "output"] as const) {
    const suffix = io === "input" ? "Input" : "";
    const { schemas } = z.toJSONSchema(z.globalRegistry, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      cycles: "ref",
      reused: "inline",
      uri: (id) => `${SCHEMA_PREFIX}${id}${suffix}`,
    });
    for (const [id, schema] of Object.entries(schemas)) {
      const { $schema: _, id: __, ...rest } = schema as JsonObject;
      all[`${id}${suffix}`] = rest;
    }
  }
  const used: Record<string, JsonObject> = {};
  const queue = references(document);
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const schema = all[name];
    if (used[name] || !schema) continue;
    used[name] = schema;
    queue.push(...references(schema));
  }
  return Object.fromEntries(
    Object.keys(used)
      .sort()
      .map((name) => [name, used[name] as JsonObject]),
  );
}

/** The component schema names `node` references. */
function references(node: unknown): string[] {
  const found: string[] = [];
  JSON.stringify(node, (key, value) => {
    if (key === "$ref" && typeof value === "string" && value.startsWith(SCHEMA_PREFIX))
      found.push(value.slice(SCHEMA_PREFIX.length));
    return value;
  });
  return found;
}

function methodsOf(route: RouteOptions): string[] {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.filter((method) => method !== "HEAD").map((method) => method.toLowerCase());
}

/** A Fastify URL as an OpenAPI path: `:name` becomes `{name}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function operationKey(method: string, path: string): string {
  return `${method.toLowerCase()} ${path}`;
}

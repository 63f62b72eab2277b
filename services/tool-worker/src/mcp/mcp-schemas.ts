import { Ajv } from 'ajv';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import { RE2JS } from 're2js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { mcpToolName, shortened, stripUuids, UUID_PATTERN, type McpToolEntry } from '@assistant/shared';

/** OpenAI-compatible function names: what `<server>__<tool>` must be for the model to call it. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** OpenAI refuses a function description longer than this (`string_above_max_length`), failing every turn. */
const DESCRIPTION_CAP = 1_024;
/** Every model request carries every tool's schema: one larger than this is a server's mistake, not offered. */
const SCHEMA_CAP = 32_768;

/** The `$id` a server's schema is compiled with when it has none: not registered, so one for all. */
const ROOT_ID = 'urn:assistant:mcp-tool-arguments';

export interface McpTool {
  entry: McpToolEntry;
  validate: ValidateFunction;
}

/**
 * The engine of a schema's `pattern` and `patternProperties`. A server's pattern runs on the model's
 * arguments in the tool worker: with JavaScript's backtracking RegExp one like `^(a+)+$` held it
 * for minutes, out of reach of any timeout. RE2 takes time linear in the text. A pattern RE2 does
 * not support (a lookahead, a backreference) matches anything here: the server checks its own arguments.
 */
function linearRegExp(pattern: string): { test(text: string): boolean; toString(): string } {
  let compiled: RE2JS | undefined;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    compiled = undefined;
  }
  // ajv keeps one compiled pattern per toString().
  return { test: (text) => compiled?.matcher(text).find() ?? true, toString: () => pattern };
}
linearRegExp.code = 'linearRegExp';

// strict: false, since servers write schemas with keywords and formats of every dialect.
// addUsedSchema: false, as a schema with an `$id` is compiled again on every listing (and two
// servers may use the same one): registered, its second compile would throw and drop the tool.
const options = { allErrors: true, strict: false, validateFormats: false, addUsedSchema: false, code: { regExp: linearRegExp } };
const ajv2020 = new Ajv2020(options);
/** For a schema whose `$schema` says draft-07 (or 06), as the MCP SDK writes them: its `items: [...]` is a tuple, which 2020-12 refuses. */
const ajv07 = new Ajv(options);
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/;

/** Validators by schema text: ajv keeps every schema object it compiles, and servers list the same ones again on every reconnect. */
const validators = new Map<string, ValidateFunction>();

function compiled(schema: Record<string, unknown>, dialect: unknown): ValidateFunction {
  const ajv = typeof dialect === 'string' && DRAFT_07.test(dialect) ? ajv07 : ajv2020;
  // ajv resolves a `$ref` to the root (`#`, a tree of nodes) only against a schema with an `$id`.
  const withId = schema.$id === undefined ? { ...schema, $id: ROOT_ID } : schema;
  const key = `${ajv === ajv07 ? '07' : '2020'} ${JSON.stringify(withId)}`;
  const known = validators.get(key);
  if (known) return known;
  const validate = ajv.compile(withId);
  validators.set(key, validate);
  return validate;
}

/**
 * A server's tool in our registry's terms, with its compiled argument validator; undefined (with
 * the reason) for a tool the model could not call: a name that does not fit a function name, or
 * a schema no validator can compile or too large to send with every request. A description
 * longer than OpenAI takes is shortened.
 */
export function toMcpTool(server: string, tool: Tool): { tool?: McpTool; problem?: string } {
  const name = mcpToolName(server, tool.name);
  if (!FUNCTION_NAME.test(name)) return { problem: `tool name ${name} is not a valid function name (1-64 of a-z, 0-9, _ and -)` };
  // The model calls a tool by its name, which cannot be shown as a ref: one holding a UUID is not offered.
  if (UUID_PATTERN.test(name)) return { problem: `tool name ${stripUuids(name)} holds a UUID, which the model must never see` };
  // 2020-12 unless the schema says draft-07 (or 06); the `$schema` itself is not compiled (ajv would look up a meta-schema it lacks) nor offered.
  const { $schema: dialect, ...schema } = tool.inputSchema as Record<string, unknown>;
  const parameters = stripUuids(JSON.stringify(schema));
  if (parameters.length > SCHEMA_CAP) return { problem: `tool ${name} has an input schema over ${SCHEMA_CAP} characters` };
  let validate: ValidateFunction;
  try {
    validate = compiled(schema, dialect);
  } catch (error) {
    return { problem: `tool ${name} has an invalid input schema: ${error instanceof Error ? error.message : String(error)}` };
  }
  const annotations = tool.annotations ?? {};
  return {
    tool: {
      validate,
      entry: {
        name,
        server,
        tool: tool.name,
        // What the model is offered never holds a UUID, not even in a server's own texts.
        description: shortened(stripUuids(tool.description ?? tool.title ?? tool.name), DESCRIPTION_CAP),
        parameters: JSON.parse(parameters) as Record<string, unknown>,
        readOnly: annotations.readOnlyHint === true,
        idempotent: annotations.idempotentHint === true,
      },
    },
  };
}

/**
 * The arguments as the tool's schema accepts them: as given, or else without their `null`s,
 * which models send for arguments they leave out (docs/tools.md); undefined when neither passes,
 * with `validate.errors` telling why.
 */
export function acceptedArguments(validate: ValidateFunction, args: Record<string, unknown>): Record<string, unknown> | undefined {
  if (validate(args)) return args;
  const given = Object.entries(args).filter(([, value]) => value !== null);
  if (given.length === Object.keys(args).length) return undefined;
  const withoutNulls = Object.fromEntries(given);
  return validate(withoutNulls) ? withoutNulls : undefined;
}

/** `a: must be number; (arguments): must have required property 'b'`: ajv's errors for the model. */
export function schemaProblems(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath.slice(1).replace(/\//g, '.') || 'arguments'}: ${error.message ?? 'invalid'}`)
    .join('; ');
}

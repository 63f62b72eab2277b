import { HIDDEN_ID, RefRegistry, ToolInputError, UUID_PATTERN } from '@assistant/shared';

const UUIDS = new RegExp(UUID_PATTERN.source, 'gi');

/**
 * The ID registry applied to a tool we did not write (docs/tools.md#mcp-tools): UUIDs in a server's results
 * become refs `<server>_<n>`, stable for the session, and those refs become UUIDs again in the
 * arguments of that server's tools.
 */
export class McpRefs {
  constructor(
    private readonly refs: RefRegistry,
    private readonly server: string,
  ) {}

  /** `text` with every UUID replaced by its ref (registered on first sight). */
  async hide(text: string): Promise<string> {
    const uuids = text.match(UUIDS) ?? [];
    if (uuids.length === 0) return text;
    const refs = await this.refs.refsIn(this.server, uuids);
    return text.replace(UUIDS, (uuid) => refs.get(uuid.toLowerCase()) ?? HIDDEN_ID);
  }

  /**
   * The arguments with this server's refs turned back into UUIDs. A UUID is refused, and so is an
   * argument that is nothing but a ref the conversation never showed (the model made it up); the
   * same text inside a longer one (a file named `notes_2024.md`) is left as it is.
   */
  async reveal(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const text = JSON.stringify(args);
    if (UUID_PATTERN.test(text) || text.includes(HIDDEN_ID)) {
      throw new ToolInputError(
        'The arguments hold a database UUID (or stand where one was hidden); UUIDs are not accepted.',
        `Use the ref exactly as shown in earlier results (like ${this.server}_1).`,
      );
    }
    // Not part of a longer name: `b_1` is not a ref of server `b` inside `a-b_1`.
    const pattern = new RegExp(`(?<![\\w-])${this.server.replace(/-/g, '\\-')}_(\\d+)(?![\\w-])`, 'g');
    const numbers = [...text.matchAll(pattern)].map((match) => Number(match[1]));
    if (numbers.length === 0) return args;
    const ids = await this.refs.idsIn(this.server, numbers);
    const values = new Set(stringValues(args));
    const unknown = [...new Set(numbers.filter((n) => !ids.has(n)))].map((n) => `${this.server}_${n}`).filter((ref) => values.has(ref));
    if (unknown.length > 0) {
      throw new ToolInputError(
        `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a ref of this conversation.`,
        `Use a ref exactly as an earlier result of a ${this.server} tool showed it.`,
      );
    }
    return JSON.parse(text.replace(pattern, (ref, n: string) => ids.get(Number(n)) ?? ref)) as Record<string, unknown>;
  }
}

/** Every string in a JSON value, however deep. */
function stringValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringValues);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringValues);
  return [];
}

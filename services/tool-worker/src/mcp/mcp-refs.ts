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
    const uuids = [...new Set((text.match(UUIDS) ?? []).map((uuid) => uuid.toLowerCase()))];
    if (uuids.length === 0) return text;
    const refs = await this.refs.refsIn(this.server, uuids);
    return text.replace(UUIDS, (uuid) => refs.get(uuid.toLowerCase()) ?? HIDDEN_ID);
  }

  /** The arguments with this server's refs turned back into UUIDs; a UUID or an unknown ref is refused. */
  async reveal(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const text = JSON.stringify(args);
    if (UUID_PATTERN.test(text) || text.includes(HIDDEN_ID)) {
      throw new ToolInputError(
        'The arguments hold a database UUID (or stand where one was hidden); UUIDs are not accepted.',
        `Use the ref exactly as shown in earlier results (like ${this.server}_1).`,
      );
    }
    const pattern = new RegExp(`\\b${this.server.replace(/-/g, '\\-')}_(\\d+)\\b`, 'g');
    const numbers = [...text.matchAll(pattern)].map((match) => Number(match[1]));
    if (numbers.length === 0) return args;
    const ids = await this.refs.idsIn(this.server, numbers);
    const unknown = [...new Set(numbers.filter((n) => !ids.has(n)))].map((n) => `${this.server}_${n}`);
    if (unknown.length > 0) {
      throw new ToolInputError(
        `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a ref of this conversation.`,
        `Use a ref exactly as an earlier result of a ${this.server} tool showed it.`,
      );
    }
    return JSON.parse(text.replace(pattern, (_ref, n: string) => ids.get(Number(n)) as string)) as Record<string, unknown>;
  }
}

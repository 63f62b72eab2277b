import { stripUuids } from '../text';
import { describeNow } from '../time/local-time';
import { SECTION_CAP, truncate } from './system-prompt';

export interface RelevantDocument {
  ref: string;
  title: string;
  snippet: string;
}

export interface TurnContextInput {
  now: Date;
  /** The user's IANA zone: the model turns "tomorrow at 9" into a time there. */
  timeZone: string;
  /** Gotchas for the tools in play, one line each. */
  pitfalls: string[];
  /** Null when retrieval is off for the user (or in a group session). */
  relevantDocuments: RelevantDocument[] | null;
}

/**
 * What changes with every message (docs/memory.md#request-layout, part 3): the user's local date, time, weekday and
 * zone, `## Known pitfalls` and `## Relevant documents`. It is sent as a system message right
 * before the newest user message and never stored, so everything before it repeats the session's
 * earlier requests (docs/architecture.md, "Context and memory", says why there).
 */
export function buildTurnContext(input: TurnContextInput): string {
  const sections: [heading: string, body: string][] = [
    [
      'Current time',
      `${describeNow(input.now, input.timeZone)}. The user lives in ${input.timeZone}: a time they give without a zone is a time there.`,
    ],
  ];
  if (input.pitfalls.length > 0) sections.push(['Known pitfalls', input.pitfalls.map((p) => `- ${p}`).join('\n')]);
  if (input.relevantDocuments && input.relevantDocuments.length > 0) {
    // One line per document, as the snippet is: a title may hold line breaks, and a line of its own
    // starting "## " would read as a heading of this context, not as the user's text.
    const line = (d: RelevantDocument) => `- "${d.title.replace(/\s+/g, ' ').trim()}" [ID: ${d.ref}]: ${d.snippet}`;
    sections.push(['Relevant documents', input.relevantDocuments.map(line).join('\n')]);
  }
  return stripUuids(sections.map(([heading, body]) => `## ${heading}\n${truncate(body, SECTION_CAP)}`).join('\n\n'));
}

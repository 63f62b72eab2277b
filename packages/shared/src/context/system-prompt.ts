import type { SessionKind } from '../session-keys';
import { sliceText, stripUuids } from '../text';
import type { Profile, ProfileSection } from './profile-defaults';

export const SECTION_CAP = 20_000;

/** Each profile section's heading in the system prompt (docs/memory.md#request-layout). */
export const SECTION_HEADINGS = {
  soul: 'Personality',
  identity: 'Identity',
  agents: 'Instructions',
  tools: 'Tools',
  user: 'User Profile',
  memory: 'Long-term Memory',
} as const satisfies Record<ProfileSection, string>;
export const PROMPT_CAP = 60_000;

export interface AssistantIdentity {
  name: string;
  emoji?: string | null;
  creature?: string | null;
  tone?: string | null;
  vibe?: string | null;
}

export interface PromptInput {
  assistant: AssistantIdentity;
  profile: Profile;
  sessionKind: SessionKind;
  /** The registry's one-line-per-tool summary. */
  toolSummary: string;
}

/**
 * Keeps `cap` characters of a section and says how many were left out. MEMORY grows at its end
 * (digests are appended), so it keeps its newest part; every other section keeps its start.
 */
export function truncate(text: string, cap: number, keep: 'start' | 'end' = 'start'): string {
  if (text.length <= cap) return text;
  // A cut through an emoji drops all of it (sliceText), so the count comes from what is shown.
  const shown = keep === 'start' ? sliceText(text, 0, cap) : sliceText(text, text.length - cap);
  const hidden = text.length - shown.length;
  return keep === 'start'
    ? `${shown}\n\n[truncated: ${hidden} more characters not shown]`
    : `[truncated: ${hidden} earlier characters not shown]\n\n${shown}`;
}

/** The whole prompt, note included, stays within `cap` characters (a last resort: sectionCap fits the sections). */
function capWhole(text: string, cap: number): string {
  if (text.length <= cap) return text;
  const note = (hidden: number) => `\n\n[truncated: the rest of this prompt (${hidden} characters) is not shown]`;
  const kept = sliceText(text, 0, cap - note(text.length).length);
  return `${kept}${note(text.length - kept.length)}`;
}

function identityLine({ name, emoji, creature, tone, vibe }: AssistantIdentity): string {
  const parts = [`You are ${name}${emoji ? ` ${emoji}` : ''}, a personal AI assistant${creature ? ` (${creature})` : ''}.`];
  if (tone) parts.push(`Your tone: ${tone}.`);
  if (vibe) parts.push(`Your vibe: ${vibe}.`);
  return parts.join(' ');
}

/**
 * The injection rules of docs/memory.md#profile: USER only in direct conversations (the main
 * session is the user's own direct line), MEMORY only in the main session, neither in groups.
 * Only what changes rarely goes here, so that a session's requests share this prefix byte for
 * byte and a provider can serve it from its cache; the clock, pitfalls and documents of each
 * message are the turn's context (turn-context.ts).
 */
export function buildSystemPrompt(input: PromptInput): string {
  const { profile, sessionKind } = input;
  const sections: [heading: string, text: string, keep: 'start' | 'end'][] = [
    [SECTION_HEADINGS.soul, profile.soul.trim(), 'start'],
    [SECTION_HEADINGS.identity, profile.identity.trim(), 'start'],
    [SECTION_HEADINGS.agents, profile.agents.trim(), 'start'],
    [SECTION_HEADINGS.tools, profile.tools.trim(), 'start'],
  ];
  if (sessionKind !== 'group') sections.push([SECTION_HEADINGS.user, profile.user.trim(), 'start']);
  if (sessionKind === 'main') sections.push([SECTION_HEADINGS.memory, profile.memory.trim(), 'end']);
  const identity = identityLine(input.assistant);
  const summary = input.toolSummary.trim();
  const fixed = identity.length + summary.length + sections.reduce((sum, [heading]) => sum + heading.length + SECTION_ROOM, 0);
  const cap = sectionCap(
    sections.map(([, text]) => text.length),
    PROMPT_CAP - fixed,
  );
  const body = sections.map(([heading, text, keep]) => {
    // The cap is on the user's TOOLS text alone, so a long one never pushes out the registry's summary.
    const shown = [truncate(text, cap, keep), heading === SECTION_HEADINGS.tools ? summary : ''].filter(Boolean).join('\n\n');
    // An empty section keeps its heading (docs/memory.md#request-layout): the layout is the same for
    // every user, and an empty USER or MEMORY tells the model it knows nothing of them yet.
    return shown ? `## ${heading}\n${shown}` : `## ${heading}`;
  });
  return capWhole(stripUuids([identity, ...body].join('\n\n')), PROMPT_CAP);
}

/** What a section takes besides its text, at most: its heading line, separators and a truncation note. */
const SECTION_ROOM = 80;

/**
 * The cap every section is cut to: SECTION_CAP, or less when the sections together would not
 * fit in `room`. Sections shorter than their share are shown whole and the longer ones share the
 * rest equally, so an oversized prompt keeps every heading, and MEMORY its newest part, instead
 * of losing its last sections.
 */
function sectionCap(lengths: number[], room: number): number {
  const ascending = [...lengths].sort((a, b) => a - b);
  let left = Math.max(0, room);
  for (const [i, length] of ascending.entries()) {
    const share = Math.floor(left / (ascending.length - i));
    if (length > share) return Math.min(SECTION_CAP, share);
    left -= length;
  }
  return SECTION_CAP;
}

import { z } from 'zod';
import { PROFILE_SECTIONS } from '../context/profile-defaults';
import { SECTION_CAP, SECTION_HEADINGS } from '../context/system-prompt';
import { defineTool, quote } from './tool-spec';

// The model reads the sections under their headings (## Personality, ## User Profile): a section
// named by its heading, or in capitals, is that section.
const SECTION_NAMES = new Map<string, string>(
  Object.entries(SECTION_HEADINGS).map(([section, heading]) => [heading.toLowerCase(), section]),
);
const section = z.preprocess(
  (value) => (typeof value === 'string' ? (SECTION_NAMES.get(value.trim().toLowerCase()) ?? value.trim().toLowerCase()) : value),
  z.enum(PROFILE_SECTIONS),
);

export const memoryTools = {
  remember: defineTool({
    description:
      'Store a lasting fact about the user or their wishes in long-term memory (MEMORY), to recall in later conversations. One fact per call, in a short sentence.',
    input: z.object({
      content: z
        .string()
        .trim()
        .min(1, 'must not be blank')
        .max(2_000, 'must be at most 2000 characters')
        .describe('The fact to remember.'),
    }),
    mutates: true,
    describe: (a) => `Remember ${quote(a.content)}`,
  }),
  update_profile: defineTool({
    description:
      "Replace one whole section of the assistant's profile: agents (instructions), soul (personality), identity, user (about the user), tools (notes on tools) or memory (long-term memory). The old text of that section is lost, so include what should stay.",
    input: z.object({
      section: section.describe('Which section to replace.'),
      content: z
        .string()
        .max(SECTION_CAP, `must be at most ${SECTION_CAP} characters`)
        .describe('The new text of the section; may be empty.'),
    }),
    mutates: true,
    describe: (a) => `Replace profile section ${a.section}`,
  }),
};

import { codePointLength, codePointOffset, sliceText } from '../text';

/**
 * The most a profile section holds: what `PUT /v1/profile/:section` accepts, and what MEMORY is
 * kept within as digests and `remember` add to it, so that whatever `GET /v1/profile` answers can
 * be PUT back. Five times the prompt's per-section cap (SECTION_CAP): room to keep notes that the
 * prompt shows in part. Counted in code points, as zod's `max` and PostgreSQL's `length` count a
 * string (an emoji is one; JavaScript's `length` says two).
 */
export const MAX_PROFILE_SECTION_CHARS = 100_000;

/** How much more than it must a trim may drop so that MEMORY starts at a whole section, paragraph or line. */
const TRIM_SLACK = MAX_PROFILE_SECTION_CHARS / 10;

/**
 * Where kept MEMORY may start, best first: a heading after a blank line (a digest's dated
 * `### Session digest …`, appended as a paragraph of its own), any paragraph, any line (a fact
 * `remember` added to a list).
 */
const STARTS = ['\n\n#', '\n\n', '\n'] as const;

/**
 * MEMORY within MAX_PROFILE_SECTION_CHARS, its oldest part dropped: it grows at its end, and its
 * end is what the model is shown (system-prompt.ts). The cut moves on to the first start of a
 * section, else of a paragraph, else of a line, that drops at most TRIM_SLACK more than it must;
 * without one it drops exactly what it must, never half an emoji (sliceText).
 */
export function dropOldestMemory(memory: string): string {
  const over = codePointLength(memory) - MAX_PROFILE_SECTION_CHARS;
  if (over <= 0) return memory;
  // A UTF-16 index, as the search below uses: where the last MAX_PROFILE_SECTION_CHARS characters begin.
  const least = codePointOffset(memory, over);
  for (const start of STARTS) {
    // The kept part begins after the marker's newlines: at `least` or later.
    const newlines = start.lastIndexOf('\n') + 1;
    const found = memory.indexOf(start, least - newlines);
    if (found >= 0 && found + newlines <= least + TRIM_SLACK) return memory.slice(found + newlines).trimStart();
  }
  return sliceText(memory, least);
}

/** Another section within MAX_PROFILE_SECTION_CHARS: its end cut off and marked with `...`. */
export function clipSection(content: string): string {
  if (codePointLength(content) <= MAX_PROFILE_SECTION_CHARS) return content;
  return `${content.slice(0, codePointOffset(content, MAX_PROFILE_SECTION_CHARS - 3))}...`;
}

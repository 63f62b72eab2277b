import { appendMemory, nameRefs, ok, quoted, saveProfileSection, SECTION_CAP, sessionRefNames } from '@assistant/shared';
import type { ToolHandlers } from './handler';

export const memoryHandlers: Pick<ToolHandlers, 'remember' | 'update_profile'> = {
  async remember(args, ctx) {
    // One fact per list item keeps MEMORY readable for the user and for the model.
    // MEMORY outlives this session's refs: it keeps names (ids/ref-names.ts in packages/shared).
    const content = nameRefs(args.content, await sessionRefNames(ctx.db, ctx.sessionId));
    const size = (await appendMemory(ctx.db, ctx.userId, `- ${content.replace(/\s*\n\s*/g, ' ')}`, '\n')).length;
    const full =
      size > SECTION_CAP
        ? `MEMORY now holds ${size} characters, more than the ${SECTION_CAP} shown to you: condense it with update_profile (section "memory").`
        : 'It will be part of your long-term memory in later conversations of the main session.';
    return ok(`Remembered: "${content}".`, { section: 'memory', characters: size }, full);
  },

  async update_profile(args, ctx) {
    // Every later session reads the profile, and numbers its refs afresh: it keeps names.
    const content = nameRefs(args.content, await sessionRefNames(ctx.db, ctx.sessionId));
    const saved = (await saveProfileSection(ctx.db, ctx.userId, args.section, content))[args.section];
    return ok(
      `Profile section ${quoted(args.section)} replaced (${saved.length} characters).`,
      { section: args.section, characters: saved.length },
      'The new text applies from your next step on.',
    );
  },
};

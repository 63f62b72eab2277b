import { ensureProfile, nameRefs, ok, SECTION_CAP, sessionRefNames } from '@assistant/shared';
import type { ToolHandlers } from './handler';

export const memoryHandlers: Pick<ToolHandlers, 'remember' | 'update_profile'> = {
  async remember(args, ctx) {
    await ensureProfile(ctx.db, ctx.userId);
    // One fact per list item keeps MEMORY readable for the user and for the model.
    // MEMORY outlives this session's refs: it keeps names (ids/ref-names.ts in packages/shared).
    const content = nameRefs(args.content, await sessionRefNames(ctx.db, ctx.sessionId));
    const entry = `- ${content.replace(/\s*\n\s*/g, ' ')}`;
    const updated = await ctx.db.query<{ size: number }>(
      `UPDATE agent_memory_profiles
       SET memory_content = CASE WHEN btrim(coalesce(memory_content, '')) = '' THEN $2 ELSE rtrim(memory_content, E'\\n') || E'\\n' || $2 END,
           updated_at = NOW()
       WHERE user_id = $1 RETURNING length(memory_content) AS size`,
      [ctx.userId, entry],
    );
    const size = updated.rows[0]?.size ?? entry.length;
    const full =
      size > SECTION_CAP
        ? `MEMORY now holds ${size} characters, more than the ${SECTION_CAP} shown to you: condense it with update_profile (section "memory").`
        : 'It will be part of your long-term memory in later conversations of the main session.';
    return ok(`Remembered: "${content}".`, { section: 'memory', characters: size }, full);
  },

  async update_profile(args, ctx) {
    await ensureProfile(ctx.db, ctx.userId);
    // Every later session reads the profile, and numbers its refs afresh: it keeps names.
    const content = nameRefs(args.content, await sessionRefNames(ctx.db, ctx.sessionId));
    // The column comes from the schema's closed list of sections, never from free text.
    await ctx.db.query(`UPDATE agent_memory_profiles SET ${args.section}_content = $2, updated_at = NOW() WHERE user_id = $1`, [
      ctx.userId,
      content,
    ]);
    return ok(
      `Profile section "${args.section}" replaced (${content.length} characters).`,
      { section: args.section, characters: content.length },
      'The new text applies from your next step on.',
    );
  },
};

/** The six profile sections (docs/memory.md#profile), as stored in agent_memory_profiles (`<section>_content`). */
export const PROFILE_SECTIONS = ['agents', 'soul', 'identity', 'user', 'tools', 'memory'] as const;
export type ProfileSection = (typeof PROFILE_SECTIONS)[number];
export type Profile = Record<ProfileSection, string>;

/** What a new user's assistant starts with; `POST /v1/profile/reset` restores these. */
export const DEFAULT_PROFILE: Profile = {
  soul: [
    'Warm, direct and practical. Answer in the language the user writes in.',
    'Keep answers short unless the user asks for detail. No filler, no flattery.',
  ].join('\n'),
  identity: "A personal assistant that keeps the user's documents, folders, habits, reminders and goals.",
  agents: [
    "Use the tools to read and change the user's data; never claim to have done something a tool did not confirm.",
    'Refer to things by the refs shown in tool results (like folder_1), exactly as shown.',
    'When a request is ambiguous, ask one short question instead of guessing.',
  ].join('\n'),
  user: '',
  tools: '',
  memory: '',
};

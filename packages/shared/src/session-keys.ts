import { z } from 'zod';

export const MAIN_SESSION_KEY = 'agent:main:main';
export const CHANNELS = ['api', 'web', 'telegram', 'whatsapp'] as const;
export type Channel = (typeof CHANNELS)[number];

/** A peer or group id of up to 256 characters: room for the longest the channels make (a WhatsApp BSUID, up to 135). */
const SESSION_KEY_PATTERN = /^agent:main:(?:main|(api|web|telegram|whatsapp):(direct|group):([A-Za-z0-9_.@+-]{1,256}))$/;

/** docs/channels.md#session-keys: `agent:main:main`, `agent:main:<channel>:direct:<peer>`, `agent:main:<channel>:group:<id>`. */
export const sessionKeySchema = z
  .string()
  .regex(SESSION_KEY_PATTERN, 'must be agent:main:main or agent:main:<api|web|telegram|whatsapp>:<direct|group>:<id>');

export type SessionKind = 'main' | 'direct' | 'group';

/**
 * What a session may be shown (docs/memory.md#profile). Only the main session's own key is
 * `main`: a key this pattern does not know (a stored one that predates it, a channel added later)
 * must not see the user's MEMORY, so it is a group when it says so, else a direct chat.
 */
export function sessionKind(key: string): SessionKind {
  if (key === MAIN_SESSION_KEY) return 'main';
  return key.includes(':group:') ? 'group' : 'direct';
}

export function directSessionKey(channel: Channel, peer: string): string {
  return `agent:main:${channel}:direct:${peer}`;
}

export function groupSessionKey(channel: Channel, id: string): string {
  return `agent:main:${channel}:group:${id}`;
}

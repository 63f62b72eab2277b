/** What the console keeps in the browser: the API key, the open session, recent turns per session. */
const KEY = 'assistant.apiKey';
const SESSION = 'assistant.sessionKey';
const TURNS = 'assistant.recentTurns';
const TURNS_KEPT = 5;

export const savedKey = {
  get: (): string | null => localStorage.getItem(KEY),
  set: (key: string): void => localStorage.setItem(KEY, key),
  clear: (): void => localStorage.removeItem(KEY),
};

export const savedSession = {
  get: (): string | null => localStorage.getItem(SESSION),
  set: (key: string): void => localStorage.setItem(SESSION, key),
};

function allRecentTurns(): Record<string, string[]> {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(TURNS) ?? '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string[]>) : {};
  } catch {
    return {};
  }
}

/** The last turns sent from this browser to a session, so a reload can pick up one still running. */
export function recentTurns(session: string): string[] {
  const turns = allRecentTurns()[session];
  return Array.isArray(turns) ? turns : [];
}

export function rememberTurn(session: string, turnId: string): void {
  const all = allRecentTurns();
  all[session] = [...recentTurns(session), turnId].slice(-TURNS_KEPT);
  localStorage.setItem(TURNS, JSON.stringify(all));
}

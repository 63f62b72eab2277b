import { AccountDialog } from './account.js';
import { Api, ApiError } from './api.js';
import { byId, el, errorText } from './dom.js';
import { Settings } from './settings.js';
import { isFinal } from './shared/turns/turn-status.js';
import { recentTurns, rememberTurn, savedKey, savedSession } from './storage.js';
import { TurnStream } from './turn-stream.js';
import { TurnView } from './turn-view.js';

const MAIN_SESSION = 'agent:main:main';

interface Me {
  display_name: string;
  assistant_name: string;
  assistant_emoji: string | null;
}
interface Session {
  session_key: string;
}
interface Message {
  role: 'user' | 'assistant';
  content: string;
}

/** A new session of this browser: `agent:main:web:direct:<random>` (docs/channels.md#session-keys). */
function newSessionKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `agent:main:web:direct:${Array.from(bytes, (byte) => byte.toString(36).padStart(2, '0')).join('')}`;
}

class ConsoleApp {
  private api: Api | undefined;
  private session = savedSession.get() ?? MAIN_SESSION;
  private readonly streams = new Set<TurnStream>();
  private readonly log = byId<HTMLOListElement>('log');
  private readonly sessions = byId<HTMLSelectElement>('session-select');
  private readonly input = byId<HTMLTextAreaElement>('message-input');
  private readonly chatError = byId('chat-error');
  private readonly settings = new Settings(() => this.signedIn());
  private readonly account = new AccountDialog(
    () => this.signedIn(),
    () => this.signOut('Your account is being deleted, with everything the assistant kept about you.'),
  );
  private stickToBottom = true;

  start(): void {
    byId<HTMLFormElement>('sign-in-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.signIn(byId<HTMLInputElement>('api-key').value.trim());
    });
    byId('sign-out').addEventListener('click', () => this.signOut());
    byId('open-settings').addEventListener('click', () => this.settings.open());
    byId('open-account').addEventListener('click', () => this.account.open());
    byId('new-session').addEventListener('click', () => this.newSession());
    this.sessions.addEventListener('change', () => void this.openSession(this.sessions.value));
    byId<HTMLFormElement>('composer').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send();
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.send();
      }
    });
    // Follow the conversation as it grows, unless the reader scrolled up to look at something.
    this.log.addEventListener('scroll', () => {
      this.stickToBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 60;
    });
    new MutationObserver(() => {
      if (this.stickToBottom) this.log.scrollTop = this.log.scrollHeight;
    }).observe(this.log, { childList: true, subtree: true, characterData: true });

    const saved = savedKey.get();
    if (saved) void this.signIn(saved);
    else this.showSignIn();
  }

  private signedIn(): Api {
    if (!this.api) throw new Error('not signed in');
    return this.api;
  }

  private showSignIn(message = ''): void {
    byId('sign-in').hidden = false;
    byId('chat').hidden = true;
    byId('account').hidden = true;
    byId('sign-in-error').textContent = message;
    byId('api-key').focus();
  }

  private async signIn(key: string): Promise<void> {
    if (!key) return this.showSignIn('Paste an API key first.');
    const api = new Api(key);
    let me: Me;
    try {
      me = await api.get<Me>('/v1/me');
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) savedKey.clear();
      return this.showSignIn(errorText(error));
    }
    this.api = api;
    savedKey.set(key);
    byId<HTMLInputElement>('api-key').value = '';
    byId('who').textContent = `${me.display_name} · ${me.assistant_emoji ?? ''} ${me.assistant_name}`.trim();
    await this.loadSessions();
    await this.openSession(this.session);
    byId('sign-in').hidden = true;
    byId('chat').hidden = false;
    byId('account').hidden = false;
    this.input.focus();
  }

  private signOut(message = ''): void {
    this.stopStreams();
    this.api = undefined;
    savedKey.clear();
    this.log.replaceChildren();
    this.showSignIn(message);
  }

  private async loadSessions(): Promise<void> {
    let keys = [MAIN_SESSION];
    try {
      keys = [...new Set([MAIN_SESSION, ...(await this.signedIn().get<Session[]>('/v1/sessions')).map((s) => s.session_key)])];
    } catch (error) {
      this.chatError.textContent = errorText(error);
    }
    if (!keys.includes(this.session)) keys.push(this.session);
    this.sessions.replaceChildren(...keys.map((key) => el('option', { value: key }, key === MAIN_SESSION ? `Main session (${key})` : key)));
    this.sessions.value = this.session;
  }

  private newSession(): void {
    const key = newSessionKey();
    this.sessions.append(el('option', { value: key }, `${key} (new)`));
    this.sessions.value = key;
    void this.openSession(key);
    this.input.focus();
  }

  /** Shows the session's conversation, then resumes its turns that are still going. */
  private async openSession(key: string): Promise<void> {
    this.session = key;
    savedSession.set(key);
    this.stopStreams();
    this.chatError.textContent = '';
    this.log.replaceChildren();
    const api = this.signedIn();
    try {
      const messages = await api.get<Message[]>(`/v1/sessions/${encodeURIComponent(key)}/messages`);
      for (const message of messages) this.log.append(el('li', { class: `msg ${message.role}` }, message.content));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) this.chatError.textContent = errorText(error);
    }
    const waiting = await api.get<{ turn_id: string; session_key: string }[]>('/v1/approvals?status=pending').catch(() => []);
    const candidates = new Set([...recentTurns(key), ...waiting.filter((a) => a.session_key === key).map((a) => a.turn_id)]);
    for (const turnId of candidates) {
      const turn = await api.get<{ status: string }>(`/v1/turns/${turnId}`).catch(() => undefined);
      if (turn && !isFinal(turn.status) && this.session === key) this.follow(turnId);
    }
  }

  private async send(): Promise<void> {
    const text = this.input.value;
    if (!text.trim()) return;
    this.chatError.textContent = '';
    try {
      const submitted = await this.signedIn().post<{ turn_id: string }>('/v1/messages', { text, session_key: this.session });
      this.input.value = '';
      this.log.append(el('li', { class: 'msg user' }, text));
      rememberTurn(this.session, submitted.turn_id);
      this.follow(submitted.turn_id);
      if (this.sessions.selectedOptions[0]?.text.endsWith('(new)')) void this.loadSessions();
    } catch (error) {
      this.chatError.textContent = errorText(error);
    }
  }

  private follow(turnId: string): void {
    const view = new TurnView(this.signedIn(), turnId);
    this.log.append(view.element);
    const stream = new TurnStream(this.signedIn(), turnId, view);
    this.streams.add(stream);
    void stream.run().finally(() => this.streams.delete(stream));
  }

  private stopStreams(): void {
    for (const stream of this.streams) stream.stop();
    this.streams.clear();
  }
}

new ConsoleApp().start();

import { ApiError, type Api } from './api.js';
import { button, byId, el, errorText } from './dom.js';

interface Preferences {
  autonomous_mode: boolean;
  max_iterations: number;
  timezone?: string;
}

/** The zone this browser runs in, the likeliest answer to "where are you?". */
function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

interface Gotcha {
  tool_name?: string | null;
  description?: string;
}

const PROFILE_SECTIONS = [
  ['agents', 'AGENTS', 'how the assistant works: its rules and habits'],
  ['soul', 'SOUL', 'its personality and values'],
  ['identity', 'IDENTITY', 'who it is: name, creature, vibe'],
  ['user', 'USER', 'what it knows about you'],
  ['tools', 'TOOLS', 'notes on using its tools'],
  ['memory', 'MEMORY', 'what it remembers for the long term'],
] as const;

/** A missing endpoint (an older gateway) reads as "not available", not as a failure. */
function unavailable(error: unknown, what: string): string {
  return error instanceof ApiError && error.status === 404 ? `${what} is not available on this server.` : errorText(error);
}

/** The settings dialog: preferences, the six profile sections and the gotchas list. */
export class Settings {
  private readonly dialog = byId<HTMLDialogElement>('settings');
  private readonly autonomous = byId<HTMLInputElement>('autonomous-mode');
  private readonly maxIterations = byId<HTMLInputElement>('max-iterations');
  private readonly timezone = byId<HTMLInputElement>('timezone');
  private readonly preferencesForm = byId<HTMLFormElement>('preferences-form');
  private readonly preferencesFields = byId<HTMLFieldSetElement>('preferences-fields');
  private readonly preferencesStatus = byId('preferences-status');
  private readonly profile = byId('profile');
  private readonly gotchas = byId('gotchas');

  constructor(private readonly api: () => Api) {
    byId('close-settings').addEventListener('click', () => this.dialog.close());
    const useBrowserZone = byId<HTMLButtonElement>('use-browser-timezone');
    useBrowserZone.textContent = `Use this browser's zone (${browserTimeZone()})`;
    useBrowserZone.addEventListener('click', () => {
      this.timezone.value = browserTimeZone();
    });
    byId('timezone-names').replaceChildren(...Intl.supportedValuesOf('timeZone').map((zone) => el('option', { value: zone })));
    this.preferencesForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.savePreferences();
    });
  }

  open(): void {
    this.dialog.showModal();
    void this.loadPreferences();
    void this.loadProfile();
    void this.loadGotchas();
  }

  private async loadPreferences(): Promise<void> {
    this.preferencesState('loading', 'Loading…');
    try {
      this.show(await this.api().get<Preferences>('/v1/preferences'));
      this.preferencesState('ready', '');
    } catch (error) {
      this.preferencesState('failed', errorText(error));
    }
  }

  /** The controls stay disabled until they show what the server has, and while a save runs. */
  private preferencesState(state: 'loading' | 'ready' | 'saving' | 'failed', message: string): void {
    this.preferencesForm.dataset.state = state;
    this.preferencesFields.disabled = state === 'loading' || state === 'saving';
    this.preferencesStatus.textContent = message;
  }

  private show(preferences: Preferences): void {
    this.autonomous.checked = preferences.autonomous_mode;
    this.maxIterations.value = String(preferences.max_iterations);
    this.timezone.value = preferences.timezone ?? '';
  }

  private async savePreferences(): Promise<void> {
    this.preferencesState('saving', 'Saving…');
    try {
      const saved = await this.api().patch<Preferences>('/v1/preferences', {
        autonomous_mode: this.autonomous.checked,
        max_iterations: Number(this.maxIterations.value),
        timezone: this.timezone.value.trim(),
      });
      this.show(saved);
      const effect = saved.autonomous_mode ? 'Tools now run without asking.' : 'Tools that change data will ask for approval.';
      this.preferencesState('ready', `Saved. ${effect}`);
    } catch (error) {
      this.preferencesState('ready', errorText(error));
    }
  }

  private async loadProfile(): Promise<void> {
    this.profile.replaceChildren(el('p', {}, 'Loading…'));
    let profile: Record<string, string>;
    try {
      profile = await this.api().get<Record<string, string>>('/v1/profile');
    } catch (error) {
      this.profile.replaceChildren(el('p', { class: 'error' }, unavailable(error, 'The profile')));
      return;
    }
    this.profile.replaceChildren(
      ...PROFILE_SECTIONS.map(([key, title, hint]) => this.profileSection(key, title, hint, profile[key] ?? '')),
    );
  }

  private profileSection(key: string, title: string, hint: string, content: string): HTMLElement {
    const id = `profile-${key}`;
    const text = el('textarea', { id, rows: '6', spellcheck: 'false' });
    text.value = content;
    const status = el('span', { class: 'status', role: 'status' });
    const store = async (): Promise<void> => {
      status.textContent = 'Saving…';
      try {
        await this.api().put(`/v1/profile/${key}`, { content: text.value });
        status.textContent = 'Saved.';
      } catch (error) {
        status.textContent = unavailable(error, 'Saving the profile');
      }
    };
    const save = button(`Save ${title}`, () => void store());
    return el(
      'details',
      { class: 'profile-section' },
      el('summary', {}, `${title} — ${hint}`),
      el('label', { for: id }, `${title} (plain text, read by the assistant)`),
      text,
      el('div', { class: 'actions' }, save, status),
    );
  }

  private async loadGotchas(): Promise<void> {
    this.gotchas.replaceChildren(el('p', {}, 'Loading…'));
    try {
      const found = await this.api().get<Gotcha[] | { gotchas?: Gotcha[] }>('/v1/gotchas');
      const list = Array.isArray(found) ? found : (found.gotchas ?? []);
      if (list.length === 0) {
        this.gotchas.replaceChildren(el('p', {}, 'No gotchas yet: lessons learned from failed tool calls appear here.'));
        return;
      }
      const items = list.map((gotcha) =>
        el('li', {}, gotcha.tool_name ? el('code', {}, gotcha.tool_name) : null, gotcha.tool_name ? ' ' : '', gotcha.description ?? ''),
      );
      this.gotchas.replaceChildren(el('ul', { class: 'gotchas' }, ...items));
    } catch (error) {
      this.gotchas.replaceChildren(el('p', { class: 'error' }, unavailable(error, 'The gotchas list')));
    }
  }
}

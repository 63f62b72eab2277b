import type { Budget, UsageDay } from '@assistant/shared';
import type { Api } from './api.js';
import { button, byId, el, errorText } from './dom.js';

interface Usage {
  days: UsageDay[];
  budget: Budget;
}

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

const number = (value: number) => value.toLocaleString('en');
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

/**
 * The account dialog: the user's usage and budget, their API keys (create, copy once, revoke),
 * the export of their data and the deletion of the account, behind a confirmation.
 */
export class AccountDialog {
  private readonly dialog = byId<HTMLDialogElement>('account-dialog');
  private readonly keys = byId('api-keys');
  private readonly keysStatus = byId('keys-status');
  private readonly newKey = byId('new-key');
  private readonly newKeyValue = byId<HTMLInputElement>('new-key-value');
  private readonly dataStatus = byId('data-status');
  private readonly confirm = byId('confirm-delete');

  constructor(
    private readonly api: () => Api,
    private readonly onErased: () => void,
  ) {
    byId('close-account').addEventListener('click', () => this.dialog.close());
    byId<HTMLFormElement>('new-key-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.createKey();
    });
    byId('copy-key').addEventListener('click', () => void this.copyKey());
    byId('export-data').addEventListener('click', () => void this.exportData());
    byId('delete-account').addEventListener('click', () => {
      this.confirm.hidden = false;
      byId('confirm-delete-no').focus();
    });
    byId('confirm-delete-no').addEventListener('click', () => (this.confirm.hidden = true));
    byId('confirm-delete-yes').addEventListener('click', () => void this.deleteAccount());
  }

  open(): void {
    this.newKey.hidden = true;
    this.newKeyValue.value = '';
    this.confirm.hidden = true;
    this.keysStatus.textContent = '';
    this.dataStatus.textContent = '';
    this.dialog.showModal();
    void this.loadUsage();
    void this.loadKeys();
  }

  private async loadUsage(): Promise<void> {
    const target = byId('usage');
    const budget = byId('budget');
    target.replaceChildren(el('p', {}, 'Loading…'));
    try {
      const usage = await this.api().get<Usage>('/v1/usage?days=7');
      const { daily_tokens: limit, used_today: used } = usage.budget;
      budget.textContent =
        limit > 0
          ? `Today: ${number(used)} of ${number(limit)} tokens used. The budget resets at 00:00 UTC.`
          : `Today: ${number(used)} tokens used. No daily limit.`;
      const head = el(
        'tr',
        {},
        ...['Day (UTC)', 'Turns', 'Model calls', 'Prompt tokens', 'Cached', 'Completion tokens'].map((h) => el('th', { scope: 'col' }, h)),
      );
      const rows = usage.days.map((day) =>
        el(
          'tr',
          { 'data-date': day.date },
          el('td', {}, day.date),
          ...[day.turns, day.model_calls, day.prompt_tokens, day.cached_prompt_tokens, day.completion_tokens].map((v) =>
            el('td', {}, number(v)),
          ),
        ),
      );
      target.replaceChildren(el('table', { class: 'usage-table' }, el('thead', {}, head), el('tbody', {}, ...rows)));
    } catch (error) {
      budget.textContent = '';
      target.replaceChildren(el('p', { class: 'error' }, errorText(error)));
    }
  }

  private async loadKeys(): Promise<void> {
    try {
      const keys = await this.api().get<ApiKey[]>('/v1/api-keys');
      const current = this.api().key;
      const items = keys.map((key) =>
        el(
          'li',
          { 'data-key-id': key.id },
          el(
            'span',
            {},
            el('strong', {}, key.name),
            ' ',
            el('code', {}, `${key.prefix}…`),
            key.prefix.length > 3 && current.startsWith(key.prefix) ? ' (this browser)' : '',
          ),
          el('span', { class: 'hint' }, `created ${when(key.created_at)}, last used ${when(key.last_used_at)}`),
          button(`Revoke ${key.name}`, () => void this.revoke(key)),
        ),
      );
      this.keys.replaceChildren(el('ul', { class: 'key-list' }, ...items));
    } catch (error) {
      this.keys.replaceChildren(el('p', { class: 'error' }, errorText(error)));
    }
  }

  private async createKey(): Promise<void> {
    const name = byId<HTMLInputElement>('new-key-name');
    this.keysStatus.textContent = 'Creating…';
    try {
      const created = await this.api().post<{ id: string; api_key: string }>(
        '/v1/api-keys',
        name.value.trim() ? { name: name.value.trim() } : {},
      );
      name.value = '';
      this.newKeyValue.value = created.api_key;
      this.newKey.hidden = false;
      this.newKeyValue.select();
      this.keysStatus.textContent = 'Key created.';
      await this.loadKeys();
    } catch (error) {
      this.keysStatus.textContent = errorText(error);
    }
  }

  private async copyKey(): Promise<void> {
    try {
      await navigator.clipboard.writeText(this.newKeyValue.value);
      this.keysStatus.textContent = 'Copied to the clipboard.';
    } catch {
      // Clipboard access can be refused (no permission, plain http): the key stays selected to copy by hand.
      this.newKeyValue.select();
      this.keysStatus.textContent = 'Copy the selected key with Ctrl+C.';
    }
  }

  private async revoke(key: ApiKey): Promise<void> {
    this.keysStatus.textContent = `Revoking ${key.name}…`;
    try {
      await this.api().delete(`/v1/api-keys/${encodeURIComponent(key.id)}`);
      this.keysStatus.textContent = `Revoked ${key.name}: it no longer works.`;
      await this.loadKeys();
    } catch (error) {
      this.keysStatus.textContent = errorText(error);
    }
  }

  private async exportData(): Promise<void> {
    this.dataStatus.textContent = 'Preparing your export…';
    try {
      const blob = await this.api().download('/v1/export');
      const link = el('a', { href: URL.createObjectURL(blob), download: `assistant-export-${new Date().toISOString().slice(0, 10)}.json` });
      link.click();
      URL.revokeObjectURL(link.href);
      this.dataStatus.textContent = 'Export downloaded.';
    } catch (error) {
      this.dataStatus.textContent = errorText(error);
    }
  }

  private async deleteAccount(): Promise<void> {
    this.dataStatus.textContent = 'Deleting…';
    try {
      await this.api().delete('/v1/me');
      this.dialog.close();
      this.onErased();
    } catch (error) {
      this.dataStatus.textContent = errorText(error);
    }
  }
}

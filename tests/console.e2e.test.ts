import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { Api } from '../scripts/lib/api';
import { testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/**
 * The web console at `/` (issue 8), in Debian's Chromium against the real processes and the
 * fake model: it is a client of the public API only, so this also exercises docs/api.md and docs/events.md
 * the way a browser does (fetch streaming with the Authorization header, Last-Event-ID).
 */
const ARTIFACTS = path.resolve(__dirname, 'artifacts');
/** Debian's Chromium, installed by scripts/ensure-chromium.sh. */
const CHROMIUM = '/usr/bin/chromium';
const ANSWER = 'Done: I made the folder and looked inside Inbox.';
const RESTART_ANSWER = 'This answer outlived the gateway that started the turn.';

const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let browser: Browser;
let page: Page;
let user: Api & { userId: string };
const requested: string[] = [];
const pageErrors: string[] = [];
let releaseSlowAnswer: () => void = () => undefined;
const slowAnswer = new Promise<void>((resolve) => (releaseSlowAnswer = resolve));
let releaseHanging: () => void = () => undefined;
const hanging = new Promise<void>((resolve) => (releaseHanging = resolve));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/ensure-chromium.sh (npm test runs it first)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  db = testDb();
  await model.start();
  model.script = byUserText({
    'two tools:': (body) =>
      afterTools(body)
        ? { content: ANSWER, chunkSize: 3 }
        : {
            toolCalls: [
              { name: 'create_folder', arguments: { name: userText(body).slice('two tools: '.length) } },
              { name: 'get_folder_contents', arguments: { folder_id: 'Inbox' } },
            ],
          },
    // Never answers while the test runs: a turn to cancel.
    'hang:': () => hanging.then(() => ({ content: 'too late' })),
    // Held until the test has restarted the gateway: the turn is mid-way for certain.
    'slow:': async () => {
      await slowAnswer;
      return { content: RESTART_ANSWER, chunkSize: 5 };
    },
  });
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  user = await new Api(system.url).createUser(system.adminToken, { name: 'Console Tester' });
  await db.query(`INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Inbox', 'inbox')`, [user.userId]);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // A browser in Sao Paulo, so the settings can offer a zone other than the server's default.
  page = await browser.newPage({ viewport: { width: 1100, height: 900 }, timezoneId: 'America/Sao_Paulo' });
  page.setDefaultTimeout(30_000);
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  // A failed fetch is logged too ("Failed to load resource"); those the page handles by design.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });
}, 15 * 60_000);

afterAll(async () => {
  releaseSlowAnswer();
  releaseHanging();
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await browser?.close();
  await system.stop();
  await model.stop();
  await db?.end();
});

const lastTurn = (): Locator => page.locator('.turn').last();
const task = (turn: Locator, id: string, status: string) => turn.locator(`.task[data-task-id="${id}"][data-status="${status}"]`);
const folders = async (name: string) =>
  (await db.query('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1 AND name = $2', [user.userId, name])).rows[0].n;

async function turnIdOf(turn: Locator): Promise<string> {
  return (await turn.getAttribute('data-turn-id')) ?? '';
}

async function send(text: string): Promise<Locator> {
  const before = await page.locator('.turn').count();
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.turn').nth(before).waitFor();
  return lastTurn();
}

it('signs in with the keyboard, plans two tools in manual mode, waits for approval and streams the answer', async () => {
  await page.goto(system.url);
  // Keyboard only: the key field has focus, Enter signs in, then the message box has focus.
  await page.getByLabel('API key').waitFor();
  await page.keyboard.type(user.apiKey as string);
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  expect(await page.evaluate("localStorage.getItem('assistant.apiKey')")).toBe(user.apiKey);
  await page.waitForFunction("document.activeElement?.id === 'message-input'");
  await page.keyboard.type('two tools: Projects');
  await page.keyboard.press('Enter');

  const turn = lastTurn();
  await turn.waitFor();
  await task(turn, 'task_1', 'awaiting_approval').waitFor();
  await task(turn, 'task_2', 'completed').waitFor();
  expect(await turn.locator('.task').count()).toBe(2);
  await expect(turn.getAttribute('data-status')).resolves.toBe('awaiting_approval');
  expect(await folders('Projects')).toBe(0);
  // A reload finds the waiting turn again (pending approvals) and replays it from its first event.
  await page.reload();
  await task(turn, 'task_1', 'awaiting_approval').waitFor();
  await task(turn, 'task_2', 'completed').waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'console-awaiting-approval.png') });

  const approve = turn.getByRole('button', { name: 'Approve' });
  await approve.focus();
  await page.keyboard.press('Enter');
  await task(turn, 'task_1', 'completed').waitFor();
  await page.locator(`.turn[data-turn-id="${await turnIdOf(turn)}"][data-status="completed"]`).waitFor();
  await expect(turn.locator('.answer.final').textContent()).resolves.toBe(ANSWER);
  expect(await turn.locator('.turn-status').textContent()).toBe('Finished');
  expect(await folders('Projects')).toBe(1);

  // The page showed what the stream said: the answer came as several token events.
  const events = await user.events(await turnIdOf(turn));
  expect(events.filter((event) => event.event === 'token').length).toBeGreaterThan(5);
  await page.screenshot({ path: path.join(ARTIFACTS, 'console-manual-approval.png') });
});

it('turns autonomous mode on in settings, and the next message runs without asking', async () => {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('#preferences-form[data-state="ready"]').waitFor();
  const autonomous = page.getByLabel(/Autonomous mode/);
  await expect(autonomous.isChecked()).resolves.toBe(false);
  await expect(page.getByLabel(/Max iterations/).inputValue()).resolves.toBe('15');
  await autonomous.check();
  await page.getByRole('button', { name: 'Save preferences' }).click();
  await page.getByText('Saved. Tools now run without asking.').waitFor();
  expect((await user.get('/v1/preferences')).body.autonomous_mode).toBe(true);
  await page.screenshot({ path: path.join(ARTIFACTS, 'console-settings.png') });
  await page.getByRole('button', { name: 'Close' }).click();

  const turn = await send('two tools: Autonomous');
  await page.locator(`.turn[data-turn-id="${await turnIdOf(turn)}"][data-status="completed"]`).waitFor();
  await task(turn, 'task_1', 'completed').waitFor();
  await task(turn, 'task_2', 'completed').waitFor();
  expect(await turn.locator('.answer.final').textContent()).toBe(ANSWER);
  const events = await user.events(await turnIdOf(turn));
  expect(events.map((event) => event.event)).not.toContain('tool_approval_request');
  expect(await folders('Autonomous')).toBe(1);
});

it("offers the browser's time zone in settings and saves it", async () => {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('#preferences-form[data-state="ready"]').waitFor();
  const zone = page.getByLabel(/Time zone/);
  await expect(zone.inputValue()).resolves.toBe('UTC');
  await page.getByRole('button', { name: "Use this browser's zone (America/Sao_Paulo)" }).click();
  await expect(zone.inputValue()).resolves.toBe('America/Sao_Paulo');
  await page.getByRole('button', { name: 'Save preferences' }).click();
  await page.getByText(/^Saved\./).waitFor();
  expect((await user.get('/v1/preferences')).body.timezone).toBe('America/Sao_Paulo');

  await zone.fill('Mars/Olympus_Mons');
  await page.getByRole('button', { name: 'Save preferences' }).click();
  await page.locator('#preferences-status', { hasText: /timezone/ }).waitFor();
  expect((await user.get('/v1/preferences')).body.timezone).toBe('America/Sao_Paulo');
  await page.getByRole('button', { name: 'Close' }).click();
});

it('keeps a turn going across a gateway restart: the stream resumes with Last-Event-ID', async () => {
  const turn = await send('slow: please');
  const turnId = await turnIdOf(turn);
  await page.locator(`.turn[data-turn-id="${turnId}"][data-status="running"][data-connection="live"]`).waitFor();

  expect(await system.signal('gateway', 'SIGTERM')).toBe(0);
  await page.locator(`.turn[data-turn-id="${turnId}"][data-connection="reconnecting"]`).waitFor();
  await expect(turn.locator('.turn-connection').textContent()).resolves.toMatch(/reconnecting/i);
  system.spawn('gateway');
  await system.waitReady();
  releaseSlowAnswer();

  await page.locator(`.turn[data-turn-id="${turnId}"][data-status="completed"]`).waitFor({ timeout: 45_000 });
  // Every event once: the streamed tokens add up to the answer, nothing repeated.
  expect(await turn.locator('.answer').allTextContents()).toEqual([RESTART_ANSWER]);
  expect(await turn.getAttribute('data-last-seq')).toBe(String((await user.events(turnId)).at(-1)?.data.seq));
}, 120_000);

it('cancels a running turn', async () => {
  const turn = await send('hang: forever');
  const turnId = await turnIdOf(turn);
  await page.locator(`.turn[data-turn-id="${turnId}"][data-status="running"]`).waitFor();
  await turn.getByRole('button', { name: 'Cancel' }).click();
  await page.locator(`.turn[data-turn-id="${turnId}"][data-status="cancelled"]`).waitFor();
  expect(await turn.locator('.turn-status').textContent()).toBe('Cancelled');
  expect(await turn.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
});

it('shows usage, creates a key to copy once, revokes it, keeps the last key, and exports the data', async () => {
  await page.getByRole('button', { name: 'Account' }).click();
  const today = new Date().toISOString().slice(0, 10);
  const row = page.locator(`.usage-table tr[data-date="${today}"] td`);
  await row.first().waitFor();
  const usage = (await user.get('/v1/usage?days=7')).body;
  const figures = usage.days[0];
  expect(await row.allTextContents()).toEqual([
    today,
    ...[figures.turns, figures.model_calls, figures.prompt_tokens, figures.cached_prompt_tokens, figures.completion_tokens].map(
      (n: number) => n.toLocaleString('en'),
    ),
  ]);
  expect(figures.model_calls).toBeGreaterThan(0);
  expect(await page.locator('.usage-table tbody tr').count()).toBe(7);
  await expect(page.locator('#budget').textContent()).resolves.toContain(`${usage.budget.used_today.toLocaleString('en')} tokens used`);

  await page.getByLabel('New key name').fill('phone');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = page.getByLabel(/Your new key/);
  await secret.waitFor();
  const key = await secret.inputValue();
  expect(key).toMatch(/^ak_/);
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.locator('#keys-status', { hasText: /Copied|Copy the selected key/ }).waitFor();
  const phone = page.locator('.key-list li', { hasText: 'phone' });
  await phone.waitFor();
  await expect(phone.locator('code').textContent()).resolves.toBe(`${key.slice(0, 9)}…`);
  expect(await page.locator('.key-list').textContent()).not.toContain(key);
  expect((await user.as(key).get('/v1/me')).status).toBe(200);
  await page.screenshot({ path: path.join(ARTIFACTS, 'console-account.png') });

  await phone.getByRole('button', { name: 'Revoke phone' }).click();
  await page.getByText('Revoked phone: it no longer works.').waitFor();
  expect((await user.as(key).get('/v1/me')).status).toBe(401);
  expect(await page.locator('.key-list li').count()).toBe(1);
  await page.locator('.key-list li').getByRole('button').click();
  await page.locator('#keys-status', { hasText: 'only key' }).waitFor();
  expect((await user.get('/v1/me')).status).toBe(200);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(exported.user.id).toBe(user.userId);
  expect(exported.sessions.length).toBeGreaterThan(0);
  await page.locator('#account-dialog').getByRole('button', { name: 'Close' }).click();
});

it('deletes an account only after a confirmation, and signs out', async () => {
  const leaving = await new Api(system.url).createUser(system.adminToken, { name: 'Leaving Tester' });
  const other = await browser.newPage();
  await other.goto(system.url);
  await other.getByLabel('API key').fill(leaving.apiKey as string);
  await other.getByRole('button', { name: 'Sign in' }).click();
  await other.getByRole('button', { name: 'Account' }).click();
  await other.getByRole('button', { name: 'Delete my account…' }).click();
  const confirmation = other.getByRole('button', { name: 'Yes, delete everything' });
  await confirmation.waitFor();
  expect((await leaving.get('/v1/me')).status).toBe(200);
  await other.getByRole('button', { name: 'Cancel' }).click();
  await confirmation.waitFor({ state: 'hidden' });
  expect((await leaving.get('/v1/me')).status).toBe(200);

  await other.getByRole('button', { name: 'Delete my account…' }).click();
  await confirmation.click();
  await other.getByText('Your account is being deleted').waitFor();
  await other.getByLabel('API key').waitFor();
  expect((await leaving.get('/v1/me')).status).toBe(401);
  expect(await other.evaluate("localStorage.getItem('assistant.apiKey')")).toBeNull();
  await other.close();
});

it('fits a phone-sized screen', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  await page.screenshot({ path: path.join(ARTIFACTS, 'console-phone.png') });
});

it('serves readable API docs from the local package, and the pages make no external request', async () => {
  const docs = await browser.newPage();
  docs.on('request', (request) => requested.push(request.url()));
  await docs.goto(`${system.url}/docs`);
  await docs.locator('[data-path="/v1/messages"]').first().waitFor();
  await docs.screenshot({ path: path.join(ARTIFACTS, 'api-docs.png') });
  await docs.close();
  const external = requested.filter((url) => !url.startsWith(`${system.url}/`) && !url.startsWith('data:'));
  expect(external).toEqual([]);
  expect(pageErrors).toEqual([]);
});

import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Queue, Worker } from 'bullmq';
import express from 'express';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import pg from 'pg';
import { httpFetch } from '@assistant/shared';

/**
 * One process of the turn skeleton (turn-skeleton.ts), named by its first argument. Each does
 * only what every turn of the contract must: store before it publishes (each INSERT is its own
 * flushed commit), hand on through a BullMQ job, write events to the turn's Redis stream, call
 * the model through the openai SDK.
 */
const { SKELETON_REDIS_URL: redisUrl = '', SKELETON_DATABASE_URL: databaseUrl = '' } = process.env;
const { SKELETON_PREFIX: prefix = 'skeleton', SKELETON_MODEL_URL: modelUrl = '' } = process.env;
/** A session's window after about 40 turns: 250 messages, 64 KB (docs/benchmark.md, "A turn alone"). */
const HISTORY = Array.from({ length: 250 }, (_, i) => ({
  role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
  content: `message ${i} `.padEnd(256, '.'),
}));
const TOOLS = [
  {
    type: 'function' as const,
    function: { name: 'create_folder', parameters: { type: 'object', properties: { name: { type: 'string' } } } },
  },
];

const connect = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
const redis = connect();
const store = (turnId: string, kind: string, data: unknown) =>
  db.query('INSERT INTO skeleton_rows (turn_id, kind, data) VALUES ($1, $2, $3)', [turnId, kind, JSON.stringify(data)]);
const emit = (turnId: string, event: Record<string, unknown>) =>
  redis.xadd(`${prefix}:events:${turnId}`, '*', 'event', JSON.stringify(event));
const worker = (queue: string, run: (data: { turnId: string; step?: number }) => Promise<unknown>) =>
  new Worker(queue, (job) => run(job.data as { turnId: string; step?: number }), { connection: connect(), prefix, concurrency: 16 });

/** A message stores its turn and queues the first step; a turn's event stream goes on to `done`. */
async function gateway(): Promise<number> {
  const steps = new Queue('steps', { connection: connect(), prefix });
  const readers: Redis[] = [];
  const app = express();
  app.use(express.json());
  app.post('/v1/messages', async (req, res) => {
    const turnId = randomUUID();
    await store(turnId, 'turn', req.body);
    await emit(turnId, { type: 'turn_started' });
    await steps.add('step', { turnId, step: 1 }, { removeOnComplete: true });
    res.status(202).json({ turn_id: turnId, session_key: 'agent:main:main', events_url: `/v1/turns/${turnId}/events` });
  });
  app.get('/v1/turns/:id/events', async (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const reader = readers.pop() ?? connect();
    let last = '0';
    let done = false;
    while (!done) {
      const read = await reader.xread('BLOCK', 10_000, 'STREAMS', `${prefix}:events:${req.params.id}`, last);
      if (!read) break;
      for (const [id, fields] of read[0]?.[1] ?? []) {
        const data = fields[1] as string;
        const { type } = JSON.parse(data) as { type: string };
        last = id;
        res.write(`id: ${id}\nevent: ${type}\ndata: ${data}\n\n`);
        done ||= type === 'done';
      }
    }
    readers.push(reader);
    res.end();
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return (server.address() as AddressInfo).port;
}

/** A step calls the model and stores what it said; the first sends the tools, the second answers. */
async function agent(): Promise<void> {
  // The model client the agent worker has: the SDK over node:http (http-fetch.ts).
  const model = new OpenAI({ apiKey: 'skeleton', baseURL: modelUrl, fetch: httpFetch });
  const tools = new Queue('tools', { connection: connect(), prefix });
  await worker('steps', async ({ turnId, step }) => {
    const stream = await model.chat.completions.create({
      model: 'skeleton',
      stream: true,
      tools: TOOLS,
      messages: [...HISTORY, { role: 'user', content: `${turnId} step ${step}` }],
    });
    let content = '';
    const tokens: Promise<unknown>[] = [];
    const calls: unknown[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        content += delta.content;
        tokens.push(emit(turnId, { type: 'token', delta: delta.content }));
      }
      calls.push(...(delta?.tool_calls ?? []));
    }
    await Promise.all(tokens);
    await store(turnId, `step ${step}`, { content, calls });
    if (step === 1) {
      await emit(turnId, { type: 'task_list' });
      await tools.add('tools', { turnId }, { removeOnComplete: true });
    } else {
      await emit(turnId, { type: 'message', content });
      await emit(turnId, { type: 'done', status: 'completed' });
    }
  }).waitUntilReady();
}

/** Two tools, each stored before its event; then the second step. */
async function tool(): Promise<void> {
  const steps = new Queue('steps', { connection: connect(), prefix });
  await worker('tools', async ({ turnId }) => {
    for (const name of ['create_folder', 'search_documents']) {
      await store(turnId, name, { success: true });
      await emit(turnId, { type: 'tool_complete', tool_name: name });
    }
    await steps.add('step', { turnId, step: 2 }, { removeOnComplete: true });
  }).waitUntilReady();
}

const roles: Record<string, () => Promise<number | void>> = { gateway, agent, tool };
const role = roles[process.argv[2] ?? ''];
if (!role) throw new Error(`unknown role ${process.argv[2]}`);
// The bench going away (however it ends) ends its skeleton too.
process.on('disconnect', () => process.exit(0));
void role().then((port) => process.send?.({ ready: true, port }));

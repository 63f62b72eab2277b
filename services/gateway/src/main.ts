// First, before the rest of the process loads: how far V8 lets the heap grow (see the module).
import '@assistant/shared/heap-growth';
import type { AddressInfo } from 'node:net';
import { closeRedis, closeWorker, createRuntime, createWorkerRedis, handleShutdown } from '@assistant/shared';
import { createApp } from './app';
import { createChannelClients, incompleteChannels } from './channels/channel-clients';
import { startDeliveriesWorker } from './channels/deliveries.worker';
import { startTypingTicker } from './channels/typing.ticker';
import { answerClientErrorsAsJson } from './http/client-errors';
import { EventHub } from './sse/event-hub';
import { openStreams } from './sse/sse.routes';
import { ApiKeyOwners } from './users/api-key-owners';

const runtime = createRuntime('gateway');
const { config, logger } = runtime;

// Blocking-free readers shared by every SSE client of this gateway: one for XRANGE, one subscriber.
const reader = createWorkerRedis(config.REDIS_URL);
const subscriber = createWorkerRedis(config.REDIS_URL);
for (const connection of [reader, subscriber]) {
  connection.on('error', (error) => logger.warn({ err: error }, 'event relay redis connection problem'));
}
const hub = new EventHub(config.QUEUE_PREFIX, reader, subscriber, logger);

// API keys' owners are kept while a subscriber of their own hears every change to them.
const keyOwnersSubscriber = createWorkerRedis(config.REDIS_URL);
keyOwnersSubscriber.on('error', (error) => logger.warn({ err: error }, 'API key owners redis connection problem'));
const keyOwners = ApiKeyOwners.of(runtime);
keyOwners.listen(keyOwnersSubscriber);

// Outbound channel delivery runs in the gateway (docs/architecture.md), on a blocking connection of its own.
const deliveriesConnection = createWorkerRedis(config.REDIS_URL);
deliveriesConnection.on('error', (error) => logger.warn({ err: error }, 'deliveries redis connection problem'));
const channelClients = createChannelClients(config);
const deliveries = startDeliveriesWorker(runtime, deliveriesConnection, channelClients);
const typingTicker = startTypingTicker(runtime, channelClients);

const app = createApp({ runtime, hub, heartbeatMs: config.SSE_HEARTBEAT_MS, keyOwners });
// Express 5 calls back with the error when listening fails too: that is told on 'error' below.
const server = app.listen(config.PORT, (error?: Error) => {
  if (error) return;
  // PORT=0 lets the system choose one: the log names the port it chose.
  logger.info(
    { port: (server.address() as AddressInfo).port, model: config.LLM_PROVIDER, adminToken: config.ADMIN_TOKEN ? 'set' : 'unset' },
    'gateway listening',
  );
  // Accepted as the operator chose it, but a short one can be guessed.
  if (config.ADMIN_TOKEN && config.ADMIN_TOKEN.length < 16) logger.warn('ADMIN_TOKEN is shorter than 16 characters: it can be guessed');
  // A channel with a setting forgotten stays off (404 on its webhook): say which setting.
  for (const problem of incompleteChannels(config)) logger.warn(problem);
});
answerClientErrorsAsJson(server);
server.on('error', (error) => {
  logger.fatal({ err: error }, 'gateway could not listen');
  process.exit(1);
});

handleShutdown(logger, config.SHUTDOWN_TIMEOUT_MS, async (step) => {
  // Stop intake, then end open event streams: their clients resume elsewhere with Last-Event-ID.
  step('closing HTTP connections');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections turn idle as their last response ends; close each as soon as it does.
  // A stream whose request was still being authorised when the stop began registers later, so
  // streams are ended on every sweep, not once.
  const sweep = () => {
    for (const res of openStreams) res.end();
    server.closeIdleConnections();
  };
  const sweeper = setInterval(sweep, 50);
  sweep();
  // Requests still running at half the deadline are cut, leaving time to close the rest cleanly.
  const cutoff = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS / 2);
  await closed;
  clearInterval(sweeper);
  clearTimeout(cutoff);
  typingTicker.stop();
  step('finishing deliveries in progress');
  await closeWorker(deliveries, deliveriesConnection);
  step('closing connections');
  await Promise.all([reader, subscriber, keyOwnersSubscriber, deliveriesConnection].map((connection) => closeRedis(connection)));
  await runtime.close();
});

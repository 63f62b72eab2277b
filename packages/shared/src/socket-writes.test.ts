import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { coalesceWrites } from './socket-writes';

let server: Server;
let received: string;
let socket: Socket;
/** Chunks per write the socket hands to the system, in order. */
let writes: number[];

beforeEach(async () => {
  received = '';
  server = createServer((peer) => peer.on('data', (data) => (received += data.toString())));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  socket = connect(address.port, '127.0.0.1');
  await once(socket, 'connect');
  writes = [];
  const writev = socket._writev?.bind(socket);
  const write = socket._write.bind(socket);
  socket._writev = (chunks, callback) => {
    writes.push(chunks.length);
    writev?.(chunks, callback);
  };
  socket._write = (chunk, encoding, callback) => {
    writes.push(1);
    write(chunk, encoding, callback);
  };
});

afterEach(async () => {
  socket.destroy();
  server.close();
  await once(server, 'close');
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('sends what one tick writes in one write, in order, and writes again in the next tick', async () => {
    coalesceWrites(socket);
    socket.write('BEGIN;');
    socket.write(Buffer.from('SELECT 1;'));
    socket.write('COMMIT;');
    await tick();
    expect(writes).toEqual([3]);

    socket.write('PING;');
    await tick();
    expect(writes).toEqual([3, 1]);
    while (received.length < 'BEGIN;SELECT 1;COMMIT;PING;'.length) await tick();
    expect(received).toBe('BEGIN;SELECT 1;COMMIT;PING;');
  });

  it('is what makes the difference: without it each write goes out on its own', async () => {
    socket.write('BEGIN;');
    socket.write('COMMIT;');
    await tick();
    expect(writes[0]).toBe(1);
    expect(writes.reduce((a, b) => a + b, 0)).toBe(2);
    expect(writes.length).toBeGreaterThan(1);
  });
});

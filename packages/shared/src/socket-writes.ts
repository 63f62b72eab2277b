import type { Writable } from 'node:stream';

/**
 * Makes a socket (or any stream over one, such as an HTTP response) send what is written to it
 * within one tick of the event loop in one system call. The PostgreSQL and Redis clients write
 * each request on its own: a pipelined BEGIN, statement and COMMIT were three writes, a
 * publish's jobs one write each. On this kind of machine a loopback write costs the sender tens
 * of microseconds and wakes the other end each time. The bytes and their order are the same, and
 * so are the answers: only the number of writes changes. Call it once the socket has connected:
 * net.Socket's connect() puts its own write back.
 */
export function coalesceWrites(socket: Writable): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  };
}

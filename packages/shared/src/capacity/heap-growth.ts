import v8 from 'node:v8';

/**
 * Imported first by each service's main (`import '@assistant/shared/heap-growth'`), before the
 * rest of the process loads: V8 then lets the old generation grow by 30 % of what its last full
 * collection left live before it collects again, instead of by its own factor of up to 4×.
 *
 * The services keep about 40 MB live even with 1,000 turns waiting for their model, but with V8's
 * factor the heap grew to two or three times that between collections, and when the collection
 * came decided the peak: in the bench's crowd the agent worker peaked anywhere from 160 to 225 MiB
 * of RSS. With 30 % the peaks were 157–159 MiB (gateway), 160–163 (agent worker) and 128–129
 * (tool worker) in three runs, at no CPU per turn the bench could tell from its run-to-run
 * noise. Unlike a `--max-old-space-size` cap it bounds nothing: a heap whose live part grows (more
 * calls in flight, more streams) grows with it instead of running out of memory.
 *
 * V8 reads the flag whenever a full collection sets the next limit, so it must be set before
 * loading the modules, which already takes one (a limit set then with V8's factor would hold
 * until the next). In code rather than on the command line, so `npm start`, the per-service
 * scripts, the containers and the bench all run with it.
 */
const HEAP_GROWING_PERCENT = 30;

v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);

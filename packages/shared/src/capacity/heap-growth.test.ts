import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * A process that keeps 400 MB live, in steps: how many full collections V8 made on the way.
 * A child process each, importing the module (or not) first, as a service's main does.
 */
function majorCollections(tuned: boolean): number {
  const script = `
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    if (${tuned}) require(${JSON.stringify(path.resolve(__dirname, '../../dist/capacity/heap-growth.js'))});
    let majors = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors += 1;
    }).observe({ entryTypes: ['gc'] });
    const kept = [];
    for (let i = 0; i < 400; i++) kept.push(Array.from({ length: 20000 }, (_, j) => ({ i, j })));
    // Performance entries are delivered after the allocating task.
    setTimeout(() => process.stdout.write(String(majors)), 200);
  `;
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}

it('makes V8 collect again once the old generation grew by a share of what was live, not by its own factor', () => {
  const byDefault = majorCollections(false);
  const tuned = majorCollections(true);
  expect(tuned).toBeGreaterThan(byDefault);
});

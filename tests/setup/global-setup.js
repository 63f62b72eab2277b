// One database and one Redis key prefix per test run, migrated once by the real migrate script.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

module.exports = async function globalSetup() {
  const run = `${process.pid}_${Date.now().toString(36)}`;
  const base = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432';
  process.env.DATABASE_URL = `${base}/assistant_test_${run}`;
  process.env.QUEUE_PREFIX = `test-${run}`;
  process.env.REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
  execFileSync(process.execPath, [path.join(__dirname, '../../scripts/dist/migrate.js')], {
    env: process.env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
};

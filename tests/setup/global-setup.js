// One database and one Redis key prefix per test run, migrated once by the real migrate script.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { ensureChromium } = require('./ensure-chromium');

module.exports = async function globalSetup() {
  const run = `${process.pid}_${Date.now().toString(36)}`;
  const base = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432';
  process.env.DATABASE_URL = `${base}/assistant_test_${run}`;
  process.env.QUEUE_PREFIX = `test-${run}`;
  process.env.REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
  // Here rather than in the browser test: installing Chromium on a fresh machine outlasts a test hook's timeout.
  // If it cannot be installed, only the browser test fails, saying why.
  try {
    ensureChromium();
  } catch (error) {
    process.stderr.write(`could not install Chromium for the browser test: ${error.message}\n`);
  }
  execFileSync(process.execPath, [path.join(__dirname, '../../scripts/dist/migrate.js')], {
    env: process.env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
};

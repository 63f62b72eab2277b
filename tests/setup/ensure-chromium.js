// The browser test drives Debian's Chromium; a fresh machine gets it from apt on first use.
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');

const CHROMIUM = '/usr/bin/chromium';

function ensureChromium() {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => execFileSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 15 * 60_000 });
  apt(['update']);
  // fonts-dejavu-core: a page with no font at all renders empty boxes in screenshots.
  apt(['install', '-y', '--no-install-recommends', 'chromium', 'fonts-dejavu-core']);
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} is missing`);
  return CHROMIUM;
}

module.exports = { CHROMIUM, ensureChromium };

if (require.main === module) ensureChromium();

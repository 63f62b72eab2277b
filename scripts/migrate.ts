import { loadConfigOrExit, migrate, redactUrl } from '@assistant/shared';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const applied = await migrate(config.DATABASE_URL);
  process.stdout.write(applied.length > 0 ? `migrated: ${applied.join(', ')}\n` : 'database is up to date\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`migration failed: ${redactUrl(error instanceof Error ? error.message : String(error))}\n`);
  process.exit(1);
});

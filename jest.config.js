/** Unit tests sit next to the code; end-to-end tests that start real processes live in tests/. */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
};
const moduleNameMapper = { '^@assistant/shared$': '<rootDir>/packages/shared/src/index.ts' };

module.exports = {
  globalSetup: '<rootDir>/tests/setup/global-setup.js',
  // End-to-end tests wait for real processes (a killed worker's job is taken over after JOB_LOCK_MS).
  testTimeout: 60_000,
  globalTeardown: '<rootDir>/tests/setup/global-teardown.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/packages/*/src/**/*.test.ts', '<rootDir>/services/*/src/**/*.test.ts'],
      transform,
      moduleNameMapper,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/tests/**/*.test.ts'],
      transform,
      moduleNameMapper,
      slowTestThreshold: 30,
    },
  ],
};

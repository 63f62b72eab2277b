// The fake model lives with the scripts so `npm run bench` uses the same one as the tests.
export * from '../../scripts/lib/fake-model';

// Shared with `npm run bench`.
export * from '../../scripts/lib/system';

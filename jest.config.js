/**
 * Jest in ESM mode. ts-jest only transpiles (tsconfig has isolatedModules);
 * type checking is `tsc --noEmit` in `npm test`. ts-jest rather than @swc/jest
 * because SWC's per-platform binaries cannot all be locked from this machine's
 * registry, and `npm ci` needs a complete lockfile.
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testTimeout: 30000,
};

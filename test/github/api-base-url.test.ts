import { apiBaseUrl } from '../../src/github/api-base-url.js';

test.each([
  [{}, undefined],
  [{ gheHost: 'github.com' }, undefined],
  [{ gheHost: 'github.example.com' }, 'https://github.example.com/api/v3'],
  // GHE.com data residency: the API is on its own host, not under /api/v3.
  [{ gheHost: 'octocorp.ghe.com' }, 'https://api.octocorp.ghe.com'],
  [{ gheHost: 'OctoCorp.GHE.com' }, 'https://api.octocorp.ghe.com'],
  [{ gheHost: 'octocorp.ghe.com', baseUrl: 'http://127.0.0.1:4000/' }, 'http://127.0.0.1:4000'],
])('%j → %s', (config, expected) => {
  expect(apiBaseUrl(config)).toBe(expected);
});

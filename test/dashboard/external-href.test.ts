/** Check links from CI are shown only when they are http(s): Preact renders a `javascript:` href as it is. */
import { externalHref } from '../../web/src/route.js';

test.each([
  ['https://ci.example.com/run/1', 'https://ci.example.com/run/1'],
  ['http://ci.internal/run/1', 'http://ci.internal/run/1'],
  ['javascript:alert(1)', undefined],
  ['JavaScript:alert(1)', undefined],
  ['data:text/html,<script>alert(1)</script>', undefined],
  ['not a url', undefined],
  [null, undefined],
])('%s → %s', (url, href) => {
  expect(externalHref(url)).toBe(href);
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isActiveType, mediaType, policyIsolatesScript } from '../../../src/http/attachment-policy.js';

describe('attachment policy (issue 32 item 1)', () => {
  test('active types are recognised whatever their case, parameters or spacing; inert ones are not', () => {
    for (const type of ['text/html', 'TEXT/HTML; charset=utf-8', ' image/svg+xml ', 'application/xhtml+xml', 'text/xml', 'application/vnd.thing+xml', 'text/htmlé', '', 'html']) {
      assert.equal(isActiveType(type), true, type);
    }
    for (const type of ['image/png', 'text/plain', 'application/json', 'application/octet-stream', 'text/css; charset=utf-8']) {
      assert.equal(isActiveType(type), false, type);
    }
    assert.equal(mediaType('Text/HTML ; q=1'), 'text/html');
  });

  test('a policy isolates script unless it is missing or lets scripts run on the same origin', () => {
    assert.equal(policyIsolatesScript('sandbox'), true);
    assert.equal(policyIsolatesScript("default-src 'none'; sandbox allow-forms"), true);
    assert.equal(policyIsolatesScript('sandbox allow-scripts'), true, 'scripts in an opaque origin cannot use the cookie');
    assert.equal(policyIsolatesScript('SANDBOX allow-scripts allow-same-origin'), false);
    assert.equal(policyIsolatesScript("default-src 'self'"), false);
    assert.equal(policyIsolatesScript(''), false);
  });
});

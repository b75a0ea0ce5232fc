import { describe, it, expect } from 'vitest';
import { webhookUrlIssues } from '../../../../schema/upstream/webhook-rules.ts';
import { WEBHOOK_NAME_PATTERN, isWebhookName, managedName } from '../../../../schema/desired-webhooks.ts';

describe('the webhook url rule: an http(s) URL whose host has a TLD, at most 2048 characters', () => {
  const base = 'https://hooks.example.com/';
  const cases: Array<[string, unknown, string[]]> = [
    ['https with a TLD', 'https://hooks.example.com/eudr', []],
    ['http with a port and a query', 'http://hooks.example.org:8080/x?y=1', []],
    ['a two-letter TLD', 'https://a.de', []],
    ['exactly 2048 characters', `${base}${'a'.repeat(2048 - base.length)}`, []],
    ['2049 characters', `${base}${'a'.repeat(2049 - base.length)}`, ['webhookUrl.length']],
    ['an IPv4 address', 'http://127.0.0.1:8080/hook', ['webhookUrl.tld']],
    ['an IPv6 address', 'http://[::1]:8080/hook', ['webhookUrl.tld']],
    ['localhost', 'http://localhost:8080/hook', ['webhookUrl.tld']],
    ['a one-letter TLD', 'https://hooks.example.c/', ['webhookUrl.tld']],
    ['a TLD with a digit', 'https://hooks.example.c0m/', ['webhookUrl.tld']],
    ['a 64-letter TLD', `https://hooks.${'a'.repeat(64)}/`, ['webhookUrl.tld']],
    ['a trailing dot', 'https://hooks.example.com./', ['webhookUrl.tld']],
    ['another scheme', 'ftp://hooks.example.com/', ['webhookUrl.protocol']],
    ['no scheme', 'hooks.example.com/eudr', ['webhookUrl.format']],
    ['empty', '', ['webhookUrl.format']],
    ['not a string', 42, ['webhookUrl.format']],
    ['absent', undefined, ['webhookUrl.format']],
  ];
  it.each(cases)('%s', (_name, value, rules) => {
    expect(webhookUrlIssues(value).map((i) => i.rule)).toEqual(rules);
  });

  it("reports at the caller's path, in words", () => {
    expect(webhookUrlIssues('http://127.0.0.1/x', '[0].url')).toEqual([
      {
        path: '[0].url',
        rule: 'webhookUrl.tld',
        message:
          'expected a valid http(s) URL whose host has a TLD (the service refuses e.g. http://127.0.0.1 and http://localhost)',
      },
    ]);
    expect(webhookUrlIssues(`${base}${'a'.repeat(3000)}`)[0]!.message).toBe(
      `at most 2048 characters, got ${base.length + 3000}`,
    );
  });
});

describe('the webhook name: lower-case letters, digits and dashes, at most 63, in DDSYNC_WEBHOOKS and in the marker', () => {
  const cases: Array<[unknown, boolean]> = [
    ['main', true],
    ['a', true],
    ['0', true],
    ['eu-2', true],
    ['a-', true],
    [`a${'b'.repeat(62)}`, true],
    [`a${'b'.repeat(63)}`, false],
    ['', false],
    ['-a', false],
    ['Main', false],
    ['a_b', false],
    ['a.b', false],
    ['a b', false],
    ['é', false],
    [7, false],
    [null, false],
  ];
  it.each(cases)('%j → %j', (name, ok) => {
    expect(isWebhookName(name)).toBe(ok);
    // A name is ddsync's in a description exactly when it is a valid name.
    if (typeof name === 'string') expect(managedName(`ours [ddsync:${name}]`)).toBe(ok ? name : null);
  });

  it('reads the marker only at the end of a description, and builds the receiver path on the same pattern', () => {
    expect(managedName('[ddsync:main]')).toBe('main');
    expect(managedName('text [ddsync:main]  ')).toBe('main');
    expect(managedName('[ddsync:main] then more')).toBeNull();
    expect(managedName('[ddsync:]')).toBeNull();
    expect(managedName({})).toBeNull();
    expect(new RegExp(`^/hooks/(${WEBHOOK_NAME_PATTERN})/?$`).exec('/hooks/eu-2/')?.[1]).toBe('eu-2');
  });
});

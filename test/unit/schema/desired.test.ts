import { describe, it, expect } from 'vitest';
import {
  DesiredWebhooksError,
  describedAs,
  managedName,
  parseDesiredWebhooks,
} from '../../../schema/desired-webhooks.ts';
import { planWebhooks } from '../../../activities/webhooks/reconcile-plan.ts';
import { ConfigError } from '../../../platform/config.ts';

const problems = (text: string): string[] => {
  try {
    parseDesiredWebhooks(text);
  } catch (e) {
    expect(e).toBeInstanceOf(DesiredWebhooksError);
    // A configuration error: the CLI exits with 2 and points at docs/configuration.md.
    expect(e).toBeInstanceOf(ConfigError);
    return (e as DesiredWebhooksError).problems;
  }
  throw new Error('expected problems');
};

describe('desired webhooks', () => {
  it('reads DDSYNC_WEBHOOKS with defaults', () => {
    expect(parseDesiredWebhooks('[{"name": "main", "url": "https://hooks.example.com/hooks/main"}]')).toEqual([
      {
        name: 'main',
        url: 'https://hooks.example.com/hooks/main',
        events: ['transaction.updated'],
        description: '',
        active: true,
      },
    ]);
    expect(parseDesiredWebhooks('[]')).toEqual([]);
  });

  it('names the entry, the field and the rule of every problem', () => {
    expect(problems('not json')[0]).toMatch(/^not valid JSON/);
    expect(problems('[{"name": "Main", "url": "http://127.0.0.1:8080/x", "events": [], "colour": 1}]')).toEqual([
      '[0].colour: unknown field',
      '[0].name: required, lower-case letters, digits and dashes (at most 63), got "Main"',
      '[0].url: required, expected a valid http(s) URL whose host has a TLD (the service refuses e.g. http://127.0.0.1 and http://localhost), got "http://127.0.0.1:8080/x"',
      '[0].events: a non-empty list of event kinds (e.g. ["transaction.updated"])',
    ]);
    expect(
      problems('[{"name": "a", "url": "https://x.example.com"}, {"name": "a", "url": "https://y.example.com"}]'),
    ).toEqual(['[1].name: "a" is used twice']);
    expect(problems(`[{"name": "a", "url": "https://x.example.com", "description": "${'d'.repeat(995)}"}]`)[0]).toMatch(
      /description: at most 989 characters/,
    );
    expect(problems(`[{"name": "a", "url": "https://x.example.com/${'u'.repeat(2027)}"}]`)).toEqual([
      '[0].url: at most 2048 characters, got 2049',
    ]);
  });

  it("marks ddsync's webhooks in their description and recognises only those", () => {
    const [w] = parseDesiredWebhooks(
      '[{"name": "main", "url": "https://x.example.com", "description": "our receiver"}]',
    );
    expect(describedAs(w!)).toBe('our receiver [ddsync:main]');
    expect(managedName('our receiver [ddsync:main]')).toBe('main');
    expect(managedName('someone else')).toBeNull();
    expect(managedName(null)).toBeNull();
  });
});

describe('reconciliation plan', () => {
  const [main] = parseDesiredWebhooks('[{"name": "main", "url": "https://x.example.com/a"}]');
  const hook = (id: string, over: Record<string, unknown> = {}) => ({
    id,
    url: 'https://x.example.com/a',
    description: '[ddsync:main]',
    events: ['transaction.updated'],
    isActive: true,
    createdAt: `2026-01-0${id.length}T00:00:00Z`,
    ...over,
  });

  it("creates, patches, re-activates, recreates and deletes only ddsync's webhooks", () => {
    const foreign = hook('f', { description: 'not ours', url: 'https://other.example.com' });
    expect(planWebhooks([main!], [foreign])).toEqual([{ kind: 'create', name: 'main', desired: main }]);
    expect(planWebhooks([main!], [foreign, hook('h1')])).toEqual([]);
    expect(planWebhooks([main!], [hook('h1', { url: 'https://x.example.com/b', isActive: false })])).toEqual([
      { kind: 'patch', name: 'main', id: 'h1', desired: main, changes: ['url', 'reactivate'] },
    ]);
    expect(planWebhooks([main!], [hook('h1', { events: ['other.event'] })])[0]).toMatchObject({
      kind: 'recreate',
      id: 'h1',
      changes: ['events'],
    });
    expect(planWebhooks([main!], [hook('h1'), hook('h22')])).toEqual([
      { kind: 'delete', name: 'main', id: 'h22', reason: 'a second webhook with the same name' },
    ]);
    expect(planWebhooks([], [hook('h1'), foreign])).toEqual([
      { kind: 'delete', name: 'main', id: 'h1', reason: 'no longer in DDSYNC_WEBHOOKS' },
    ]);
  });

  it('takes each event kind once, so a repeat in the configuration is no drift', () => {
    const [twice] = parseDesiredWebhooks(
      '[{"name": "main", "url": "https://x.example.com/a", "events": ["transaction.updated", "transaction.updated"]}]',
    );
    expect(twice!.events).toEqual(['transaction.updated']);
    expect(planWebhooks([twice!], [hook('h1')])).toEqual([]);
    expect(planWebhooks([main!], [hook('h1', { events: ['transaction.updated', 'transaction.updated'] })])).toEqual([]);
  });
});

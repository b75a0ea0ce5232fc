import { describe, it, expect } from 'vitest';
import { validateCustomData } from '../../simulator/custom-data.ts';
import { checkCustomData } from '../../schema/upstream/custom-data.ts';

const keys = (n: number): Record<string, number> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

describe("the simulator's customData: the client's rules (schema/upstream/custom-data.ts), the service's words", () => {
  const cases: Array<[string, unknown, string[] | null]> = [
    ['10 keys', keys(10), null],
    ['10 keys and server-owned ones (stripped, not counted)', { ...keys(10), _source: 'x', $y: 1 }, null],
    ['values at the limits, in code points', { ['k'.repeat(255)]: '🌱'.repeat(255), b: true, n: -1.5 }, null],
    ['11 keys', keys(11), ['customData must have at most 10 keys (rule 1)']],
    [
      'a 256-character key',
      { ['k'.repeat(256)]: 1 },
      ['customData key length must be at most 255 characters (rule 2)'],
    ],
    [
      'a 256-character value',
      { note: 'v'.repeat(256) },
      ['customData.note string value must be at most 255 characters (rule 3)'],
    ],
    [
      'a nested object',
      { a: { b: 1 } },
      ['customData.a must be a string, number or boolean; nested objects are not allowed (rule 4)'],
    ],
    [
      'an array',
      { list: [1] },
      ['customData.list must be a string, number or boolean; nested objects are not allowed (rule 4)'],
    ],
    [
      'null',
      { gone: null },
      ['customData.gone must be a string, number or boolean; nested objects are not allowed (rule 4)'],
    ],
    [
      'a long key with a bad value: cut at 40',
      { [`${'x'.repeat(50)}`]: {} },
      [`customData.${'x'.repeat(40)} must be a string, number or boolean; nested objects are not allowed (rule 4)`],
    ],
    [
      '__proto__ and constructor: one answer',
      { ...(JSON.parse('{"__proto__": 1}') as object), constructor: 2 },
      ['customData keys must not be __proto__, constructor or prototype (rule 5)'],
    ],
    ['not an object', [1, 2], ['customData must be an object']],
    ['a string', 'x', ['customData must be an object']],
  ];
  it.each(cases)('%s', (_name, input, answers) => {
    const result = validateCustomData(input);
    expect(result.ok ? null : result.messages).toEqual(answers);
    // Whatever the words, the verdict is the client's: the simulator accepts exactly what the client would send.
    const client = checkCustomData(input);
    expect(result.ok).toBe(client.issues.length === 0);
    if (result.ok) expect(result.value).toEqual(client.data);
  });

  it('names the field it was given', () => {
    expect(validateCustomData({ a: {} }, 'components.0.customData')).toEqual({
      ok: false,
      messages: [
        'components.0.customData.a must be a string, number or boolean; nested objects are not allowed (rule 4)',
      ],
    });
  });
});

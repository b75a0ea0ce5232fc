import { describe, expect, it } from 'vitest';
import { checkCustomData, parseCustomDataJson, prepareCustomData } from '../../../upstream/custom-data.ts';
import { RequestValidationError } from '../../../upstream/errors.ts';

const messages = (input: unknown) => checkCustomData(input).issues.map((i) => `${i.path}: ${i.message}`);

describe('customData rules (client-supplied data)', () => {
  it('accepts strings, numbers and booleans and returns them unchanged', () => {
    expect(prepareCustomData({ colour: 'red', count: 3, ok: false }, 'X')).toEqual({
      colour: 'red',
      count: 3,
      ok: false,
    });
  });

  it('rule 1: at most 10 keys', () => {
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, i]));
    expect(messages(eleven)).toEqual(['customData: rule 1: 11 keys, at most 10 allowed']);
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
    expect(messages(ten)).toEqual([]);
  });

  it('rule 2: key length at most 255 characters', () => {
    expect(messages({ ['k'.repeat(256)]: 1 })[0]).toMatch(/rule 2: key is 256 characters, at most 255 allowed/);
    expect(messages({ ['k'.repeat(255)]: 1 })).toEqual([]);
  });

  it('rule 3: string values at most 255 characters (code points)', () => {
    expect(messages({ note: 'x'.repeat(256) })).toEqual([
      'customData.note: rule 3: string value is 256 characters, at most 255 allowed',
    ]);
    expect(messages({ note: '😀'.repeat(255) })).toEqual([]); // 510 UTF-16 units, 255 characters
  });

  it('rule 4: values are string, number or boolean only', () => {
    expect(messages({ a: { b: 1 } })).toEqual([
      'customData.a: rule 4: value must be a string, number or boolean, got a nested object',
    ]);
    expect(messages({ a: [1] })).toEqual([
      'customData.a: rule 4: value must be a string, number or boolean, got an array',
    ]);
    expect(messages({ a: null })).toEqual([
      'customData.a: rule 4: value must be a string, number or boolean, got null',
    ]);
    expect(messages({ a: Number.POSITIVE_INFINITY })[0]).toMatch(/rule 4: number must be finite/);
  });

  it('rule 5: __proto__, constructor and prototype are refused, including an own __proto__ from JSON.parse', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as unknown;
    expect(messages(parsed)).toEqual([
      'customData.__proto__: rule 5: key "__proto__" is forbidden (__proto__, constructor and prototype are refused)',
    ]);
    expect(messages({ constructor: 'x' })[0]).toMatch(/rule 5: key "constructor"/);
    expect(messages({ prototype: 'x' })[0]).toMatch(/rule 5: key "prototype"/);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(() => parseCustomDataJson('{"__proto__": {"x": 1}}', 'PATCH /business-invitations/{id}')).toThrow(/rule 5/);
  });

  it('rule 6: reserved server-owned keys are stripped on input and do not count against rule 1', () => {
    const input = {
      _server: 'x',
      $internal: 1,
      mine: 'y',
      ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, i])),
    };
    const { data, issues } = checkCustomData(input);
    expect(issues).toEqual([]);
    expect(data).not.toHaveProperty('_server');
    expect(data).not.toHaveProperty('$internal');
    expect(Object.keys(data)).toHaveLength(10);
  });

  it('rules 7 and 8 are not client-side checks: prepareCustomData is only applied to input', () => {
    // Rule 7: responses are returned unchanged (see normalisation tests: server namespaces pass).
    // Rule 8: visibility is enforced by the service; nothing to check here.
    expect(checkCustomData({}).issues).toEqual([]);
  });

  it('refuses a non-object with a clear message and lists every broken rule at once', () => {
    expect(messages([1, 2])).toEqual(['customData: must be an object of key/value pairs, got an array']);
    expect(messages('x')).toEqual(['customData: must be an object of key/value pairs, got string']);
    try {
      prepareCustomData({ a: {}, b: 'x'.repeat(300) }, 'POST /business-invitations');
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(RequestValidationError);
      const err = e as RequestValidationError;
      expect(err.issues).toHaveLength(2);
      expect(err.message).toMatch(
        /^POST \/business-invitations: invalid request: customData\.a: rule 4.*; customData\.b: rule 3/,
      );
    }
  });

  it('parseCustomDataJson reports invalid JSON', () => {
    expect(() => parseCustomDataJson('{oops')).toThrow(/not valid JSON/);
  });
});

import { describe, it, expect } from 'vitest';
import {
  componentKindIssues,
  countryOfActivityIssues,
  hsCodeIssues,
  quantityIssues,
} from '../../../../schema/upstream/transaction-rules.ts';

const rulesOf = (issues: ReadonlyArray<{ rule: string }>): string[] => issues.map((i) => i.rule);

describe('the HS code rule: 4, 6, 8 or 10 digits in a chapter of a regulated commodity', () => {
  const cases: Array<[unknown, string[]]> = [
    ['1801', []], // cocoa, a heading
    ['090111', []], // coffee, a subheading
    ['18010000', []], // a CN code
    ['4403991000', []], // wood, a TARIC code
    ['0102', []], // cattle: the leading zero is part of the chapter
    ['9403', []], // furniture of wood, the last chapter
    ['180', ['hsCode.digits']],
    ['18010', ['hsCode.digits']],
    ['1801000', ['hsCode.digits']],
    ['180100000', ['hsCode.digits']],
    ['18010000000', ['hsCode.digits']],
    ['18a1', ['hsCode.digits']],
    [' 1801', ['hsCode.digits']],
    ['1801\n', ['hsCode.digits']],
    ['', ['hsCode.digits']],
    ['8471', ['hsCode.chapter']], // computers
    ['0301', ['hsCode.chapter']], // fish
    ['1901', ['hsCode.chapter']], // next to cocoa's chapter
    [1801, ['hsCode.type']],
    [null, ['hsCode.type']],
    [undefined, ['hsCode.required']],
  ];
  it.each(cases)('%j → %j', (value, rules) => {
    expect(rulesOf(hsCodeIssues(value))).toEqual(rules);
  });

  it("reports at the caller's path, naming the rule in words", () => {
    expect(hsCodeIssues('18010', 'components[0].hsn')).toEqual([
      { path: 'components[0].hsn', rule: 'hsCode.digits', message: 'an HS code of 4, 6, 8 or 10 digits, got "18010"' },
    ]);
    expect(hsCodeIssues('8471')[0]!.message).toBe(
      'HS chapter 84 is not a chapter of the regulated commodities (01, 02, 09, 12, 15, 18, 23, 40, 41, 44, 47, 48, 94)',
    );
    expect(hsCodeIssues(1801)[0]!.message).toBe('must be a string of digits (leading zeros matter), got 1801');
  });
});

describe('the countryOfActivity rule: the EU 27 and XI', () => {
  const cases: Array<[unknown, string[]]> = [
    ['DE', []],
    ['NL', []],
    ['AT', []],
    ['SK', []],
    ['XI', []],
    ['GB', ['countryOfActivity.eu']], // left the EU; only Northern Ireland (XI) is in scope
    ['US', ['countryOfActivity.eu']],
    ['CH', ['countryOfActivity.eu']],
    ['EL', ['countryOfActivity.eu']], // Greece is GR in ISO 3166
    ['de', ['countryOfActivity.eu']],
    ['DEU', ['countryOfActivity.eu']],
    ['', ['countryOfActivity.eu']],
    [49, ['countryOfActivity.eu']],
    [undefined, ['countryOfActivity.required']],
  ];
  it.each(cases)('%j → %j', (value, rules) => {
    expect(rulesOf(countryOfActivityIssues(value))).toEqual(rules);
  });

  it('words the rule with the value it refused', () => {
    expect(countryOfActivityIssues('US')).toEqual([
      {
        path: 'countryOfActivity',
        rule: 'countryOfActivity.eu',
        message: 'an EU country as an ISO 3166-1 alpha-2 code in upper case (e.g. DE, NL), got "US"',
      },
    ]);
  });
});

describe('the quantity rule: a number greater than 0', () => {
  const cases: Array<[unknown, string[]]> = [
    [1, []],
    [0.001, []],
    [1200.5, []],
    [Number.MAX_VALUE, []],
    [0, ['quantity.positive']],
    [-0, ['quantity.positive']],
    [-1, ['quantity.positive']],
    [Number.NaN, ['quantity.positive']],
    [Number.POSITIVE_INFINITY, ['quantity.positive']],
    ['5', ['quantity.positive']],
    [null, ['quantity.positive']],
    [undefined, ['quantity.required']],
  ];
  it.each(cases)('%j → %j', (value, rules) => {
    expect(rulesOf(quantityIssues(value))).toEqual(rules);
  });
});

describe("the component kind rule: an internal supplier's goods or goods already declared, never both", () => {
  const ref = [{ id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' }];
  const cases: Array<[string, Record<string, unknown>, boolean, string[]]> = [
    ['one supplier', { supplierBusinessId: 's' }, false, []],
    ['several suppliers, with plots', { supplierBusinessIds: ['s', 't'], plotIds: ['p'] }, false, []],
    ['DDS references', { ddsReferences: ref }, false, []],
    ['both kinds', { supplierBusinessId: 's', ddsReferences: ref }, false, ['component.kind']],
    ['neither kind', {}, false, ['component.kind']],
    ['plots with DDS references', { ddsReferences: ref, plotIds: ['p'] }, false, ['component.plotIds']],
    ['a partial update naming neither', { quantity: 3 }, true, []],
    ['a partial update naming both', { supplierBusinessIds: ['s'], ddsReferences: ref }, true, ['component.kind']],
    [
      'a partial update with plots and DDS references',
      { ddsReferences: ref, plotIds: ['p'] },
      true,
      ['component.plotIds'],
    ],
  ];
  it.each(cases)('%s', (_name, component, partial, rules) => {
    expect(rulesOf(componentKindIssues(component, 'components[0]', partial))).toEqual(rules);
  });

  it('reports at the component, or at plotIds under it (a body that is the component has no prefix)', () => {
    expect(componentKindIssues({}, 'components.1')[0]!.path).toBe('components.1');
    expect(componentKindIssues({ ddsReferences: ref, plotIds: [] }, '')[0]!.path).toBe('plotIds');
    expect(componentKindIssues({ ddsReferences: ref, plotIds: [] }, 'components[2]')[0]!.path).toBe(
      'components[2].plotIds',
    );
  });
});

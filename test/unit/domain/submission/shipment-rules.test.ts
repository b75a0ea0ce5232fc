import { describe, it, expect } from 'vitest';
import { checkShipmentRow } from '../../../../domain/submission/shipment-rules.ts';

const supplierComponent = {
  hsn: '18010000',
  quantity: 1200.5,
  unit: 'KGM',
  supplierBusinessId: 'b-1',
  plotIds: ['p-1'],
};
const ddsComponent = {
  hsn: '1801',
  quantity: 3,
  unit: 'TNE',
  ddsReferences: [{ id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' }],
};
const row = (overrides: Record<string, unknown> = {}) => ({
  key: 'SHIP-1',
  activityType: 'IMPORT',
  countryOfActivity: 'DE',
  components: [supplierComponent],
  ...overrides,
});
const errorsOf = (value: unknown) => {
  const r = checkShipmentRow(value);
  return r.ok ? [] : r.errors;
};

describe('shipment rows', () => {
  it('turns a valid row into the create body, with the key as customId', () => {
    const result = checkShipmentRow(
      row({
        legalEntityId: 'le-1',
        customData: { po: 'PO-9', urgent: true },
        components: [supplierComponent, ddsComponent],
      }),
    );
    expect(result).toEqual({
      ok: true,
      key: 'SHIP-1',
      body: {
        customId: 'SHIP-1',
        activityType: 'IMPORT',
        countryOfActivity: 'DE',
        legalEntityId: 'le-1',
        customData: { po: 'PO-9', urgent: true },
        components: [supplierComponent, ddsComponent],
      },
    });
  });

  it('names the field and the rule of every problem', () => {
    expect(errorsOf(row({ key: '', activityType: 'SELL', countryOfActivity: 'US', components: [] }))).toEqual([
      { field: 'key', rule: 'must be a non-empty string, got ""' },
      { field: 'activityType', rule: 'one of IMPORT, EXPORT, TRADE, DOMESTIC, got "SELL"' },
      {
        field: 'countryOfActivity',
        rule: 'an EU country as an ISO 3166-1 alpha-2 code in upper case (e.g. DE, NL), got "US"',
      },
      { field: 'components', rule: 'a list of at least one component, got an empty list' },
    ]);
    expect(errorsOf({ components: [supplierComponent] }).map((e) => e.field)).toEqual([
      'key',
      'activityType',
      'countryOfActivity',
    ]);
    expect(errorsOf('not an object')).toEqual([{ field: '(row)', rule: 'must be a JSON object, got "not an object"' }]);
    expect(errorsOf(row({ countryOfActivty: 'DE' }))[0]).toMatchObject({
      field: 'countryOfActivty',
      rule: expect.stringMatching(/^unknown field/),
    });
  });

  it('checks HS codes, quantities, units, dates and name pairs of components', () => {
    const bad = {
      hsn: 1801,
      quantity: 0,
      unit: 'KG',
      dateOfProduction: '2024-02-30',
      namePairs: [{ commonName: 'cocoa' }],
      supplierBusinessId: 'b-1',
    };
    expect(errorsOf(row({ components: [bad] }))).toEqual([
      { field: 'components[0].hsn', rule: 'must be a string of digits (leading zeros matter), got 1801' },
      { field: 'components[0].quantity', rule: 'a number greater than 0, got 0' },
      { field: 'components[0].unit', rule: 'one of LTR, MTR, MTRSQR, MTRCUBE, KGM, TNE, PCS, PR, SET, PKG, got "KG"' },
      { field: 'components[0].namePairs[0]', rule: 'must be {commonName, scientificName}, both non-empty strings' },
      { field: 'components[0].dateOfProduction', rule: 'a date as YYYY-MM-DD when given, got "2024-02-30"' },
    ]);
    expect(errorsOf(row({ components: [{ ...supplierComponent, hsn: '18010' }] }))[0]!.rule).toBe(
      'an HS code of 4, 6, 8 or 10 digits, got "18010"',
    );
    expect(errorsOf(row({ components: [{ ...supplierComponent, hsn: '8471' }] }))[0]!.rule).toMatch(
      /^HS chapter 84 is not a chapter of the regulated commodities/,
    );
    expect(
      errorsOf(
        row({
          components: [{ ...supplierComponent, dateOfProduction: '2024-05-01', endDateOfProduction: '2024-04-01' }],
        }),
      ),
    ).toEqual([
      { field: 'components[0].endDateOfProduction', rule: 'must not be before dateOfProduction (2024-05-01)' },
    ]);
  });

  it('wants exactly one kind of component, with well-formed DDS references', () => {
    expect(errorsOf(row({ components: [{ ...ddsComponent, supplierBusinessId: 'b-1' }] }))[0]!.rule).toMatch(
      /^give either ddsReferences .* not both, not neither$/,
    );
    expect(errorsOf(row({ components: [{ hsn: '1801', quantity: 1, unit: 'KGM' }] }))[0]!.field).toBe('components[0]');
    expect(
      errorsOf(
        row({ components: [{ ...ddsComponent, ddsReferences: [{ id: 'X', verificationNumber: 'short' }] }] }),
      ).map((e) => e.field),
    ).toEqual(['components[0].ddsReferences[0].id', 'components[0].ddsReferences[0].verificationNumber']);
    expect(errorsOf(row({ components: [{ ...supplierComponent, supplierBusinessIds: ['b-2'] }] }))[0]).toEqual({
      field: 'components[0].supplierBusinessIds',
      rule: 'give supplierBusinessId or supplierBusinessIds, not both',
    });
  });

  it('applies the customData rules of the contract', () => {
    const tooMany = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, i]));
    expect(errorsOf(row({ customData: tooMany }))[0]!.field).toBe('customData');
    expect(errorsOf(row({ customData: { nested: { a: 1 } } }))[0]).toMatchObject({ field: 'customData.nested' });
  });

  it('refuses unknown members of a name pair and of a DDS reference: nothing unchecked is sent', () => {
    expect(
      errorsOf(
        row({
          components: [
            {
              ...supplierComponent,
              namePairs: [{ commonName: 'cocoa', scientificName: 'Theobroma cacao', x: [[[]]] }],
            },
            { ...ddsComponent, ddsReferences: [{ ...ddsComponent.ddsReferences[0], note: 'hi' }] },
          ],
        }),
      ),
    ).toEqual([
      { field: 'components[0].namePairs[0].x', rule: 'unknown field (expected one of commonName, scientificName)' },
      { field: 'components[1].ddsReferences[0].note', rule: 'unknown field (expected one of id, verificationNumber)' },
    ]);
  });

  it('refuses a customData key the service keeps for itself, instead of dropping it', () => {
    expect(errorsOf(row({ customData: { po: 'PO-1', _internal: 'x', $ref: 1 } }))).toEqual([
      {
        field: 'customData._internal',
        rule: 'a key starting with _ or $ is one the service keeps for itself (customData rule 6): it would be dropped, not stored; rename it',
      },
      {
        field: 'customData.$ref',
        rule: 'a key starting with _ or $ is one the service keeps for itself (customData rule 6): it would be dropped, not stored; rename it',
      },
    ]);
    // Given empty, it is sent empty: what the row says.
    const empty = checkShipmentRow(row({ customData: {} }));
    expect(empty.ok && empty.body.customData).toEqual({});
  });

  it('refuses C1 control characters in a key, and shows unknown member names escaped', () => {
    expect(errorsOf(row({ key: 'A\u009b2J' }))).toEqual([
      { field: 'key', rule: 'must not contain control characters' },
    ]);
    expect(errorsOf(row({ 'evil\u001b[2J': 1 }))[0]!.field).toBe('evil\\u001b[2J');
  });
});

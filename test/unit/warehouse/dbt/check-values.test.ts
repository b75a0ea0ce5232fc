import { describe, expect, it } from 'vitest';
import { checkedValues } from '../../../../warehouse/dbt/check-values.ts';

describe('the values a CHECK allows, read from its definition as Postgres prints it', () => {
  it('reads an enumeration of one column: in (…), = ANY (ARRAY[…]), one value, varchar casts, quoted names', () => {
    expect(
      checkedValues("CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'partial'::text])))", 'status'),
    ).toEqual(['running', 'succeeded', 'partial']);
    expect(checkedValues("CHECK ((mode = 'postgis'::text))", 'mode')).toEqual(['postgis']);
    expect(
      checkedValues(
        "CHECK (((kind)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[])))",
        'kind',
      ),
    ).toEqual(['a', 'b']);
    expect(checkedValues(`CHECK (("position" = ANY (ARRAY['x'::text])))`, 'position')).toEqual(['x']);
    expect(
      checkedValues("CHECK ((note = ANY (ARRAY['it''s'::text, 'a, b'::text, '(x)'::text]))) NOT VALID", 'note'),
    ).toEqual(["it's", 'a, b', '(x)']);
  });

  it('reads nothing from a rule that is not a plain enumeration of that column', () => {
    expect(checkedValues("CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text))", 'sha256')).toBeNull();
    expect(checkedValues('CHECK (id)', 'id')).toBeNull();
    expect(checkedValues("CHECK ((status = ANY (ARRAY['a'::text])))", 'state')).toBeNull();
    expect(
      checkedValues(
        "CHECK (((state = ANY (ARRAY['archived'::text, 'gone'::text])) = (next_attempt_at IS NULL)))",
        'state',
      ),
    ).toBeNull();
    expect(checkedValues('CHECK (((srid > 0) AND (srid <= 998999)))', 'srid')).toBeNull();
    expect(checkedValues("CHECK ((a = ANY (ARRAY['x'::text]))) AND (b = 'y'::text)", 'a')).toBeNull();
    expect(checkedValues("CHECK ((path = ANY (ARRAY['C:\\dir'::text])))", 'path')).toBeNull();
    expect(checkedValues('UNIQUE (a)', 'a')).toBeNull();
  });
});

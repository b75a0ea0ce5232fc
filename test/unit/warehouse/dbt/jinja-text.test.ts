import { describe, expect, it } from 'vitest';
import { jinjaLiteral, jinjaString, sqlQuoted } from '../../../../warehouse/dbt/jinja-text.ts';

describe('text dbt renders as Jinja', () => {
  it('breaks every tag opener with an expression that renders a brace, and leaves other text alone', () => {
    expect(jinjaLiteral('{{ x }}')).toBe("{{ '{' }}{ x }}");
    expect(jinjaLiteral('{% if %}{# c #}')).toBe("{{ '{' }}% if %}{{ '{' }}# c #}");
    expect(jinjaLiteral('{{{')).toBe("{{ '{' }}{{ '{' }}{");
    expect(jinjaLiteral('a { b } }} %} #}')).toBe('a { b } }} %} #}');
  });

  it('quotes a Jinja string and a SQL literal the way each reads them', () => {
    expect(jinjaString("it's a \\ path")).toBe("'it\\'s a \\\\ path'");
    expect(sqlQuoted("it's")).toBe("it''s");
  });
});

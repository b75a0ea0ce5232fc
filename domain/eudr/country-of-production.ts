import { finding, type Finding } from './finding.ts';

/**
 * The country of production (Regulation (EU) 2023/1115, Art. 9(1)(c)); the EU system's GeoJSON file
 * description carries it as an ISO 3166-1 alpha-2 code. Missing blocks a statement; a value that is
 * not two letters is a warning (it may be a name the service sends as is; our tolerance).
 */
export function countryFindings(countryCode: string | null | undefined): Finding[] {
  const code = typeof countryCode === 'string' ? countryCode.trim() : '';
  if (code === '') return [finding('country_missing', 'The plot has no country of production.')];
  if (!/^[A-Za-z]{2}$/.test(code))
    return [
      finding('country_code_invalid', `The country of production "${code}" is not an ISO 3166-1 alpha-2 code.`, {
        countryCode: code,
      }),
    ];
  return [];
}

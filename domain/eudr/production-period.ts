import { calendarDay } from '../values.ts';
import { finding, type Finding } from './finding.ts';

/**
 * The date or time range of production (Regulation (EU) 2023/1115, Art. 9(1)(d)), against the
 * cut-off date of 31 December 2020 (Art. 2(13)): a product is deforestation-free when its land was
 * not deforested after that date (Art. 2(13)(a)). A period that starts on or before the cut-off is
 * not wrong in itself (a plantation older than 2021), but the statement must then rest on the land's
 * state at the cut-off, so it needs an explanation: a warning. One date is enough (a date or a range).
 */
export const CUTOFF_DATE = '2020-12-31';

export function productionPeriodFindings(start: string | null | undefined, end: string | null | undefined): Finding[] {
  const from = present(start);
  const to = present(end);
  if (from === null && to === null)
    return [
      finding('production_period_missing', 'The plot has no production date or period (start and end are empty).'),
    ];
  const found: Finding[] = [];
  const fromDay = from === null ? null : day(from);
  const toDay = to === null ? null : day(to);
  // One finding however many dates are bad: a finding is keyed by (plot, code) in eudr_findings.
  const invalid = (
    [
      ['productionDateStart', from, fromDay],
      ['productionDateEnd', to, toDay],
    ] as const
  ).filter(([, text, parsed]) => text !== null && parsed === null);
  if (invalid.length > 0)
    found.push(
      finding(
        'production_date_invalid',
        `${invalid.map(([field, text]) => `${field} "${text}"`).join(' and ')} ${invalid.length > 1 ? 'are not dates' : 'is not a date'} (YYYY-MM-DD).`,
        Object.fromEntries(invalid.map(([field, text]) => [field, text])),
      ),
    );
  if (fromDay !== null && toDay !== null && toDay < fromDay)
    found.push(
      finding('production_end_before_start', `Production ends (${toDay}) before it starts (${fromDay}).`, {
        start: fromDay,
        end: toDay,
      }),
    );
  const first = fromDay ?? toDay;
  if (first !== null && first <= CUTOFF_DATE)
    found.push(
      finding(
        'production_before_cutoff',
        `Production ${fromDay === null ? 'is dated' : 'starts on'} ${first}, on or before the cut-off date ${CUTOFF_DATE}: explain how the land's state at the cut-off is known.`,
        { start: first, cutoff: CUTOFF_DATE },
      ),
    );
  return found;
}

/** The text as sent when it holds anything but blanks (blank: no date given). */
function present(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/**
 * As the warehouse reads it (values.ts, calendarDay), so a finding never contradicts the stored
 * column: " 2021-01-01" is stored as null with a value issue, so it is not a date here either.
 */
function day(text: string): string | null {
  return calendarDay(text);
}

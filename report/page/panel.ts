import { type PageData, READINESS_STATES } from '../page-data.ts';

// The page's texts about a plot: the hover summary and the side panel. Texts from the data go into
// the page with textContent only, never as HTML (a plot named `</script><img onerror=…>` is text).

export function el(tag: string, cls?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export class PlotTexts {
  constructor(private readonly data: PageData) {}

  title(i: number): string {
    const P = this.data.plots;
    return P.names[i] ? P.names[i]! : P.ids[i]!;
  }

  countryRisk(i: number): string {
    const risk = this.data.plots.countryRisk[i]!;
    return risk < 0 ? '(no country)' : this.data.countryRiskLevels[risk]!;
  }

  private supplierNames(i: number): string {
    return this.data.plots.suppliers[i]!.map((s) => this.data.suppliers[s]![1]).join(', ');
  }

  /** One line: name, readiness, blocking count, country risk, finding codes. */
  summary(i: number): string {
    const P = this.data.plots;
    const f = P.findings[i]!.map((k) => this.data.findings[k]!);
    const blocking = f.filter((x) => x[1] === 'blocking').length;
    return (
      `${this.title(i)} — ${READINESS_STATES[P.state[i]!]}${blocking ? ` (${blocking} blocking)` : ''}` +
      (P.countryRisk[i]! < 0 ? '' : `, country risk ${this.countryRisk(i)}`) +
      (f.length ? `: ${f.map((x) => x[0]).join(', ')}` : '')
    );
  }

  /** The side panel: the plot's facts and every current finding. */
  showIn(details: HTMLElement, i: number): void {
    const P = this.data.plots;
    details.textContent = '';
    details.appendChild(el('h3', '', this.title(i)));
    const facts = el('dl');
    const rows: Array<[string, string]> = [
      ['Plot id', P.ids[i]!],
      ['Readiness', READINESS_STATES[P.state[i]!]!],
      ['Suppliers', this.supplierNames(i) || '(own plot)'],
      ['Country', P.country[i] || '(missing)'],
      ['Country risk', this.countryRisk(i)],
      ['Hectares', P.area[i] === null ? '(unknown)' : String(P.area[i])],
    ];
    for (const [term, value] of rows) {
      facts.appendChild(el('dt', '', term));
      facts.appendChild(el('dd', '', value));
    }
    details.appendChild(facts);
    const findings = P.findings[i]!;
    if (findings.length === 0)
      details.appendChild(el('p', 'none', 'No finding: nothing stops this plot going into a statement.'));
    else {
      const list = el('ul', 'findings');
      for (const k of findings) {
        const [code, severity, message] = this.data.findings[k]!;
        const item = el('li', `finding ${severity}`);
        item.setAttribute('data-code', code);
        item.appendChild(el('span', 'severity', severity));
        item.appendChild(el('code', '', code));
        item.appendChild(el('span', 'message', message));
        list.appendChild(item);
      }
      details.appendChild(list);
    }
  }
}

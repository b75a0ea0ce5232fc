// Seeded survey responses (ids deterministic per seed) and their PDF rendering.
import type { Layout } from './layout.ts';
import { renderPdf } from './pdf.ts';
import { uuidFor } from './rng.ts';
import { HttpError, notFound } from './http-errors.ts';

export interface SurveyResponse {
  id: string;
  status: string;
  surveyName: string;
  businessName: string;
  updatedAt: string;
}

const SEEDED_STATUSES = ['COMPLETED', 'COMPLETED', 'COMPLETED', 'IN_PROGRESS', 'IN_PROGRESS', 'NOT_STARTED'];

export class SurveyStore {
  private responses = new Map<string, SurveyResponse>();

  constructor(private seed: number, private layout: Layout) {
    this.reset();
  }

  reset(): void {
    this.responses.clear();
    SEEDED_STATUSES.forEach((status, i) => {
      const business = this.layout.businesses[this.layout.supplierIndices[i % Math.max(1, this.layout.supplierIndices.length)] ?? 0];
      const id = uuidFor(this.seed, 'survey-response', i);
      this.responses.set(id, { id, status, surveyName: i % 2 === 0 ? 'EUDR supplier questionnaire' : 'Deforestation-free sourcing survey', businessName: business?.name ?? 'Unknown', updatedAt: new Date(Date.UTC(2024, 2, 1 + i)).toISOString() });
    });
  }

  list(): SurveyResponse[] {
    return [...this.responses.values()];
  }

  setStatus(id: string, status: string): void {
    const r = this.responses.get(id);
    if (!r) throw notFound(`Survey response ${id}`);
    r.status = status;
    r.updatedAt = new Date().toISOString();
  }

  /** 404 unknown, 422 not COMPLETED, else the PDF. */
  pdf(id: string): Buffer {
    const r = this.responses.get(id);
    if (!r) throw notFound(`Survey response ${id}`);
    if (r.status !== 'COMPLETED') throw new HttpError(422, `Survey response ${id} is in status ${r.status}; a PDF can be produced only when it is COMPLETED`);
    return renderPdf('Survey response', [`Survey response ${r.id}`, `Survey: ${r.surveyName}`, `Respondent: ${r.businessName}`, `Status: ${r.status}`, `Last updated: ${r.updatedAt}`]);
  }
}

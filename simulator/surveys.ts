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
  /** Documents set by tests in place of the rendered one (identical PDFs for two responses, a body that is no PDF). */
  private documents = new Map<string, Buffer>();
  /** Scripted failures: the next `remaining` PDF requests of a response answer `status`. */
  private failures = new Map<string, { remaining: number; status: number }>();

  constructor(
    private seed: number,
    private layout: Layout,
  ) {
    this.reset();
  }

  reset(): void {
    this.responses.clear();
    this.documents.clear();
    this.failures.clear();
    SEEDED_STATUSES.forEach((status, i) => {
      const business =
        this.layout.businesses[this.layout.supplierIndices[i % Math.max(1, this.layout.supplierIndices.length)] ?? 0];
      const id = uuidFor(this.seed, 'survey-response', i);
      this.responses.set(id, {
        id,
        status,
        surveyName: i % 2 === 0 ? 'EUDR supplier questionnaire' : 'Deforestation-free sourcing survey',
        businessName: business?.name ?? 'Unknown',
        updatedAt: new Date(Date.UTC(2024, 2, 1 + i)).toISOString(),
      });
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

  /** Serves `document` instead of the rendered PDF while the response is COMPLETED (null: the rendered one again). */
  setDocument(id: string, document: Buffer | null): void {
    if (!this.responses.has(id)) throw notFound(`Survey response ${id}`);
    if (document) this.documents.set(id, document);
    else this.documents.delete(id);
  }

  /** The next `times` PDF requests of `id` answer `status` (a 5xx), then it behaves again. */
  failPdf(id: string, times: number, status: number): void {
    if (!this.responses.has(id)) throw notFound(`Survey response ${id}`);
    if (times > 0) this.failures.set(id, { remaining: times, status });
    else this.failures.delete(id);
  }

  /** 404 unknown, 422 not COMPLETED, else the PDF. */
  pdf(id: string): Buffer {
    const failure = this.failures.get(id);
    if (failure) {
      if (--failure.remaining <= 0) this.failures.delete(id);
      throw new HttpError(failure.status, `Survey response ${id}: PDF rendering failed (simulated)`);
    }
    const r = this.responses.get(id);
    if (!r) throw notFound(`Survey response ${id}`);
    if (r.status !== 'COMPLETED')
      throw new HttpError(
        422,
        `Survey response ${id} is in status ${r.status}; a PDF can be produced only when it is COMPLETED`,
      );
    const document = this.documents.get(id);
    if (document) return document;
    return renderPdf('Survey response', [
      `Survey response ${r.id}`,
      `Survey: ${r.surveyName}`,
      `Respondent: ${r.businessName}`,
      `Status: ${r.status}`,
      `Last updated: ${r.updatedAt}`,
    ]);
  }
}

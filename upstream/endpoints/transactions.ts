import { z } from 'zod';
import {
  ComponentSchema,
  TransactionSchema,
  type Component,
  type ComponentInput,
  type CreateTransactionInput,
  type Transaction,
  type UpdateTransactionInput,
} from '../../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from '../client-core.ts';
import { RequestValidationError } from '../errors.ts';
import {
  ComponentInputSchema,
  ComponentPatchSchema,
  CreateTransactionSchema,
  UpdateTransactionSchema,
  checkRequest,
} from '../request-checks.ts';
import { PATHS, TRANSACTION_INCLUDES } from '../../schema/upstream/service-facts.ts';
import { oldestFirst } from '../../schema/upstream/order.ts';
import { jsonBody, noBody } from '../transport.ts';
import { parseResponse } from '../validate.ts';

/**
 * Transactions and components. Available only to entitled businesses: a 403 is NotEntitledError.
 * POST /transactions is not repeated after a lost response unless the caller says so
 * (`repeatable: true`): there is no idempotency key, so the caller recovers by customId.
 */

export type TransactionInclude = (typeof TRANSACTION_INCLUDES)[number];

export function transactionEndpoints(http: UpstreamHttp) {
  const E = {
    create: endpointName('POST', PATHS.transactions),
    list: endpointName('GET', PATHS.transactions),
    get: endpointName('GET', PATHS.transaction),
    patch: endpointName('PATCH', PATHS.transaction),
    submit: endpointName('PUT', PATHS.transactionSubmit),
    delete: endpointName('DELETE', PATHS.transaction),
    addComponent: endpointName('POST', PATHS.transactionComponents),
    patchComponent: endpointName('PATCH', PATHS.component),
    deleteComponent: endpointName('DELETE', PATHS.component),
  };

  return {
    /** Creates a DRAFT transaction. Set `customId`: it is how a lost response is recovered. */
    async createTransaction(input: CreateTransactionInput, opts: CallOptions = {}): Promise<Transaction> {
      const body = checkRequest(CreateTransactionSchema, input, E.create);
      const res = await http.request({ method: 'POST', template: PATHS.transactions, body }, jsonBody, opts);
      return parseResponse(TransactionSchema, res, E.create);
    },

    /** All transactions of the business (a plain array), optionally with components. */
    async listTransactions(
      opts: CallOptions & { includes?: readonly TransactionInclude[] } = {},
    ): Promise<Transaction[]> {
      const query = new URLSearchParams();
      if (opts.includes?.length) {
        const unknown = opts.includes.filter((i) => !(TRANSACTION_INCLUDES as readonly string[]).includes(i));
        if (unknown.length)
          throw new RequestValidationError(E.list, [
            {
              path: 'includes',
              message: `unknown relation(s) ${unknown.join(', ')} (known: ${TRANSACTION_INCLUDES.join(', ')})`,
            },
          ]);
        query.set('includes', opts.includes.join(','));
      }
      const res = await http.request({ method: 'GET', template: PATHS.transactions, query }, jsonBody, opts);
      return parseResponse(z.array(TransactionSchema), res, E.list);
    },

    /** Finds our transaction again by customId (after a lost create response). */
    async findTransactionByCustomId(customId: string, opts: CallOptions = {}): Promise<Transaction | undefined> {
      const all = await this.listTransactions(opts);
      // Should two ever share the customId, always the same one (the oldest), whoever asks.
      return all.filter((t) => t.customId === customId).sort(oldestFirst)[0];
    },

    async getTransaction(id: string, opts: CallOptions = {}): Promise<Transaction> {
      const res = await http.request({ method: 'GET', template: PATHS.transaction, params: { id } }, jsonBody, opts);
      return parseResponse(TransactionSchema, res, E.get);
    },

    /** Partial update while DRAFT. */
    async updateTransaction(id: string, patch: UpdateTransactionInput, opts: CallOptions = {}): Promise<Transaction> {
      const body = checkRequest(UpdateTransactionSchema, patch, E.patch);
      const res = await http.request(
        { method: 'PATCH', template: PATHS.transaction, params: { id }, body },
        jsonBody,
        opts,
      );
      return parseResponse(TransactionSchema, res, E.patch);
    },

    /**
     * DRAFT → TO_SUBMIT (the service answers 202). Not repeated after a lost response by default:
     * a second submit is refused once the first went through; read the status instead.
     */
    async submitTransaction(id: string, opts: CallOptions = {}): Promise<void> {
      await http.request({ method: 'PUT', template: PATHS.transactionSubmit, params: { id } }, noBody, {
        repeatable: false,
        ...opts,
      });
    },

    async deleteTransaction(id: string, opts: CallOptions = {}): Promise<void> {
      await http.request({ method: 'DELETE', template: PATHS.transaction, params: { id } }, noBody, opts);
    },

    async addComponent(transactionId: string, component: ComponentInput, opts: CallOptions = {}): Promise<Component> {
      const body = checkRequest(ComponentInputSchema, component, E.addComponent);
      const res = await http.request(
        { method: 'POST', template: PATHS.transactionComponents, params: { id: transactionId }, body },
        jsonBody,
        opts,
      );
      return parseResponse(ComponentSchema, res, E.addComponent);
    },

    async updateComponent(
      componentId: string,
      patch: Partial<ComponentInput>,
      opts: CallOptions = {},
    ): Promise<Component> {
      const body = checkRequest(ComponentPatchSchema, patch, E.patchComponent);
      const res = await http.request(
        { method: 'PATCH', template: PATHS.component, params: { id: componentId }, body },
        jsonBody,
        opts,
      );
      return parseResponse(ComponentSchema, res, E.patchComponent);
    },

    async deleteComponent(componentId: string, opts: CallOptions = {}): Promise<void> {
      await http.request({ method: 'DELETE', template: PATHS.component, params: { id: componentId } }, noBody, opts);
    },
  };
}

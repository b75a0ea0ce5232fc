// Transactions and components (entitlement canManageTransactions, else 403).
import { HttpError, badRequest } from './http-errors.ts';
import { json, noContent, type Route } from './router.ts';
import { businessIndexOf, type SimState } from './state.ts';
import { validateComponent, validateTransaction, type ComponentInput } from './transaction-input.ts';
import { transactionToWire } from './transactions.ts';

const FULL = { components: true, ddsReferences: true };

export function transactionRoutes(state: SimState): Route[] {
  const entitled = (): void => {
    if (!state.settings.entitlements.canManageTransactions)
      throw new HttpError(403, 'The business is not entitled to manage transactions');
  };
  const isSupplier = (id: string): boolean => {
    const index = businessIndexOf(state, id);
    return index !== undefined && state.connections.supplierIndices().has(index);
  };
  const guarded = (route: Route): Route => ({
    ...route,
    handler: (ctx) => {
      entitled();
      return route.handler(ctx);
    },
  });
  const routes: Route[] = [
    {
      method: 'POST',
      path: '/transactions',
      handler: ({ body }) => {
        const { value, messages } = validateTransaction(body, isSupplier);
        if (messages.length > 0) throw badRequest(messages);
        return json(201, transactionToWire(state.transactions.create(value), FULL));
      },
    },
    {
      method: 'GET',
      path: '/transactions',
      handler: ({ query }) => {
        const includes = new Set(
          (query.get('includes') ?? '')
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        );
        const unknown = [...includes].filter((i) => i !== 'components' && i !== 'components.ddsReferences');
        if (unknown.length > 0)
          throw badRequest([
            `includes must be a comma-separated list of components, components.ddsReferences; unknown: ${unknown.join(', ')}`,
          ]);
        const opts = {
          components: includes.has('components') || includes.has('components.ddsReferences'),
          ddsReferences: includes.has('components.ddsReferences'),
        };
        return json(
          200,
          state.transactions.list().map((tx) => transactionToWire(tx, opts)),
        );
      },
    },
    {
      method: 'GET',
      path: '/transactions/:id',
      handler: ({ params }) => json(200, transactionToWire(state.transactions.get(params[0] ?? ''), FULL)),
    },
    {
      method: 'PATCH',
      path: '/transactions/:id',
      handler: ({ params, body }) => {
        const { value, messages } = validateTransaction(body, isSupplier, true);
        if (messages.length > 0) throw badRequest(messages);
        return json(200, transactionToWire(state.transactions.update(params[0] ?? '', value), FULL));
      },
    },
    {
      method: 'DELETE',
      path: '/transactions/:id',
      handler: ({ params }) => {
        state.transactions.remove(params[0] ?? '');
        return noContent();
      },
    },
    {
      method: 'PUT',
      path: '/transactions/:id/submit',
      handler: ({ params }) => json(202, transactionToWire(state.transactions.submit(params[0] ?? ''), FULL)),
    },
    {
      method: 'POST',
      path: '/transactions/:id/components',
      handler: ({ params, body }) => {
        state.transactions.get(params[0] ?? '');
        const { value, messages } = validateComponent(body, '', isSupplier);
        if (messages.length > 0) throw badRequest(messages);
        return json(201, state.transactions.addComponent(params[0] ?? '', value as ComponentInput));
      },
    },
    {
      method: 'PATCH',
      path: '/components/:id',
      handler: ({ params, body }) => {
        const { value, messages } = validateComponent(body, '', isSupplier, true);
        if (messages.length > 0) throw badRequest(messages);
        return json(200, state.transactions.patchComponent(params[0] ?? '', value));
      },
    },
    {
      method: 'DELETE',
      path: '/components/:id',
      handler: ({ params }) => {
        state.transactions.removeComponent(params[0] ?? '');
        return noContent();
      },
    },
  ];
  return routes.map(guarded);
}

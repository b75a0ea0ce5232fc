// Wire format of businesses and users, derived from the layout (nothing stored).
import { PRODUCING_COUNTRIES } from './catalog.ts';
import type { BusinessNode } from './layout.ts';
import { hash, uuidFor } from './rng.ts';

const EPOCH = Date.UTC(2023, 0, 1);

export function businessCreatedAt(seed: number, node: BusinessNode): string {
  return new Date(EPOCH + (hash(seed, 'business-created', node.index) % 180) * 86_400_000).toISOString();
}

function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'business'
  );
}

export function businessEmail(node: BusinessNode): string {
  return `contact+${node.index}@${slug(node.name)}.example.com`;
}

/** The compact business object nested in plots, connections and invitations. */
export function businessWire(seed: number, node: BusinessNode): Record<string, unknown> {
  const country =
    node.role === 'caller' || node.role === 'buyer' || node.role === 'prospect'
      ? { code: 'DE', name: 'Germany', city: 'Hamburg' }
      : (PRODUCING_COUNTRIES.find((c) => c.code === node.countryCode) ?? {
          code: node.countryCode,
          name: node.countryCode,
          city: '',
        });
  const createdAt = businessCreatedAt(seed, node);
  return {
    id: node.id,
    email: businessEmail(node),
    name: node.name,
    username: slug(node.name),
    addressStreet: `${(hash(seed, 'street', node.index) % 300) + 1} Rua Principal`,
    addressZip: String(10000 + (hash(seed, 'zip', node.index) % 89999)),
    addressPostcode: String(10000 + (hash(seed, 'zip', node.index) % 89999)),
    addressArea: '',
    addressCity: country.city,
    addressCountryCode: country.code,
    addressCountry: country.name,
    addressLine1: '',
    addressLine2: '',
    createdAt,
    updatedAt: createdAt,
    initialLocale: 'en',
    units: 'metric',
    newlyCreated: 'false',
    machineToMachineClientId: node.role === 'caller' ? 'ddsync-demo' : '',
    eori: node.role === 'caller' ? 'DE123456789012345' : '',
    vat: node.role === 'caller' ? 'DE123456789' : '',
    systemEnvironment: 'ACCEPTANCE',
    contactPerson: {},
  };
}

/** A member user of a business (used as the sender of invitations). */
export function userWire(
  seed: number,
  node: BusinessNode,
  entitlements: Record<string, boolean>,
): Record<string, unknown> {
  const createdAt = businessCreatedAt(seed, node);
  return {
    idpUserId: uuidFor(seed, 'idp-user', node.index),
    businessId: node.id,
    firstName: ['Ana', 'Kwame', 'Siti', 'Jonas', 'Lucía'][node.index % 5],
    lastName: ['Silva', 'Mensah', 'Rahman', 'Becker', 'Gómez'][node.index % 5],
    locale: 'en',
    createdAt,
    updatedAt: createdAt,
    completed: 'true',
    email: `user+${node.index}@example.com`,
    consentedAt: createdAt,
    entitlements,
  };
}

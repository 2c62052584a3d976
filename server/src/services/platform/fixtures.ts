import { readFile } from 'node:fs/promises';
import type { Db, Tx } from '../../db/pool.js';
import { sha256 } from '../../lib/hash.js';
import { type FixtureRecords, loadRecords, withoutRecordsOf } from './fixture-records.js';

/** A fixture file: organizations with their catalogue and records (fixture-records.ts), and clients. */
export type Fixture = {
  organizations?: (FixtureRecords & {
    id: string;
    name: string;
    brands?: { id: string; name: string }[];
    coupons?: {
      id: string;
      brand_id: string;
      title: string;
      external_reference?: string | null;
      thumbnail_url?: string | null;
      valid_days?: number | null;
      active?: boolean;
    }[];
    storecards?: { id: string; brand_id: string; title: string; thumbnail_url?: string | null; active?: boolean }[];
    locations?: { id: string; name: string }[];
    products?: {
      id: number;
      title: string;
      fulfillment: 'pickup' | 'delivery';
      variants?: { id: number; title: string }[];
      values?: { id: number; value: string }[];
    }[];
    promotions?: {
      id: string;
      title: string;
      active?: boolean;
      starts_at: string;
      ends_at: string;
      product_ids?: number[];
    }[];
    devices?: { id: string; name: string }[];
  })[];
  clients?: {
    client_id: string;
    client_secret: string;
    organization_ids?: string[];
    device_id?: string;
    abilities: string[];
  }[];
};

/** Which part of a fixture to load: only these organizations and their clients (a sandbox reset of them). */
export type FixturePart = { organizationIds?: string[] };

/** The ability of the operator's credential (services/sandbox/sandbox-operator.ts): no client may hold it. */
export const OPERATOR_ABILITY = 'sandbox.operator';

/**
 * Creates or updates (by id) every object the fixture names, at every start; an organization's
 * records (tags, members, passes, voucher jobs) are only created when missing (fixture-records.ts).
 * Nothing is ever deleted: objects made through the API, or dropped from the file since, stay. With
 * `organizationIds`, only those organizations and their clients (clients naming one of them,
 * device clients of their devices). A client may have no organization (`organization_ids: []`,
 * e.g. `sandbox-ci` with `sandbox.create`): its tokens reach no organization's data.
 */
export async function loadFixtureFile(sql: Db, file: string, part: FixturePart = {}): Promise<void> {
  if (file === 'none') return;
  let fixture: Fixture;
  try {
    fixture = JSON.parse(await readFile(file, 'utf8')) as Fixture;
  } catch (error) {
    throw new Error(`Cannot load fixture file ${file}: ${(error as Error).message}`);
  }
  await loadFixture(sql, part.organizationIds ? fixturePart(fixture, part.organizationIds) : fixture);
}

/** The organizations of `ids` the fixture names, and their clients. */
export function fixturePart(fixture: Fixture, ids: string[]): Fixture {
  const organizations = (fixture.organizations ?? []).filter((o) => ids.includes(o.id));
  const devices = new Set(organizations.flatMap((o) => (o.devices ?? []).map((d) => d.id)));
  const clients = (fixture.clients ?? []).filter(
    (c) => (c.organization_ids ?? []).some((id) => ids.includes(id)) || (c.device_id && devices.has(c.device_id)),
  );
  return { organizations, clients };
}

/**
 * The fixture without its organizations' records (tags, members, passes, voucher jobs): the
 * catalogue and clients only. The tests' databases hold the demo fixtures this way, so a test
 * counts only what it made.
 */
export function withoutRecords(fixture: Fixture): Fixture {
  return { ...fixture, organizations: (fixture.organizations ?? []).map(withoutRecordsOf) };
}

/** In a transaction of its own, or in a savepoint of the caller's (a sandbox reset, a new sandbox organization). */
const inTransaction = (db: Db, work: (tx: Tx) => Promise<void>) =>
  'savepoint' in db ? db.savepoint(work) : db.begin(work);

export async function loadFixture(sql: Db, fixture: Fixture): Promise<void> {
  const operatorLike = (fixture.clients ?? []).filter((c) => c.abilities.includes(OPERATOR_ABILITY));
  if (operatorLike.length)
    throw new Error(
      `Fixture client ${operatorLike[0]?.client_id} holds ${OPERATOR_ABILITY}, which only the operator's credential (LOYALTY_SANDBOX_OPERATOR_TOKEN) has.`,
    );
  await inTransaction(sql, async (tx) => {
    for (const org of fixture.organizations ?? []) {
      await tx`INSERT INTO organizations (id, name) VALUES (${org.id}, ${org.name})
               ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`;
      for (const b of org.brands ?? []) {
        await tx`INSERT INTO brands (id, organization_id, name) VALUES (${b.id}, ${org.id}, ${b.name})
                 ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, organization_id = EXCLUDED.organization_id`;
      }
      for (const c of org.coupons ?? []) {
        await tx`INSERT INTO coupons (id, organization_id, brand_id, title, external_reference, thumbnail_url, valid_days, active)
                 VALUES (${c.id}, ${org.id}, ${c.brand_id}, ${c.title}, ${c.external_reference ?? null}, ${c.thumbnail_url ?? null}, ${c.valid_days ?? null}, ${c.active ?? true})
                 ON CONFLICT (id) DO UPDATE SET brand_id = EXCLUDED.brand_id, title = EXCLUDED.title,
                   external_reference = EXCLUDED.external_reference, thumbnail_url = EXCLUDED.thumbnail_url,
                   valid_days = EXCLUDED.valid_days, active = EXCLUDED.active`;
      }
      for (const s of org.storecards ?? []) {
        await tx`INSERT INTO storecards (id, organization_id, brand_id, title, thumbnail_url, active)
                 VALUES (${s.id}, ${org.id}, ${s.brand_id}, ${s.title}, ${s.thumbnail_url ?? null}, ${s.active ?? true})
                 ON CONFLICT (id) DO UPDATE SET brand_id = EXCLUDED.brand_id, title = EXCLUDED.title,
                   thumbnail_url = EXCLUDED.thumbnail_url, active = EXCLUDED.active`;
      }
      for (const l of org.locations ?? []) {
        await tx`INSERT INTO locations (organization_id, id, name) VALUES (${org.id}, ${l.id}, ${l.name})
                 ON CONFLICT (organization_id, id) DO UPDATE SET name = EXCLUDED.name`;
      }
      for (const p of org.products ?? []) {
        await tx`INSERT INTO products (organization_id, id, title, fulfillment) VALUES (${org.id}, ${p.id}, ${p.title}, ${p.fulfillment})
                 ON CONFLICT (organization_id, id) DO UPDATE SET title = EXCLUDED.title, fulfillment = EXCLUDED.fulfillment`;
        for (const v of p.variants ?? []) {
          await tx`INSERT INTO product_variants (organization_id, product_id, id, title) VALUES (${org.id}, ${p.id}, ${v.id}, ${v.title})
                   ON CONFLICT (organization_id, product_id, id) DO UPDATE SET title = EXCLUDED.title`;
        }
        for (const v of p.values ?? []) {
          await tx`INSERT INTO product_values (organization_id, product_id, id, value) VALUES (${org.id}, ${p.id}, ${v.id}, ${v.value})
                   ON CONFLICT (organization_id, product_id, id) DO UPDATE SET value = EXCLUDED.value`;
        }
      }
      for (const p of org.promotions ?? []) {
        await tx`INSERT INTO promotions (id, organization_id, title, active, starts_at, ends_at)
                 VALUES (${p.id}, ${org.id}, ${p.title}, ${p.active ?? true}, ${p.starts_at}, ${p.ends_at})
                 ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, active = EXCLUDED.active,
                   starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at`;
        for (const productId of p.product_ids ?? []) {
          await tx`INSERT INTO promotion_products (promotion_id, organization_id, product_id) VALUES (${p.id}, ${org.id}, ${productId})
                   ON CONFLICT DO NOTHING`;
        }
      }
      for (const d of org.devices ?? []) {
        await tx`INSERT INTO devices (id, organization_id, name) VALUES (${d.id}, ${org.id}, ${d.name})
                 ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, organization_id = EXCLUDED.organization_id`;
      }
      await loadRecords(tx, org.id, org);
    }
    for (const c of fixture.clients ?? []) {
      await tx`INSERT INTO clients (client_id, secret_hash, device_id, organization_ids, abilities)
               VALUES (${c.client_id}, ${sha256(c.client_secret)}, ${c.device_id ?? null}, ${c.organization_ids ?? []}, ${c.abilities})
               ON CONFLICT (client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, device_id = EXCLUDED.device_id,
                 organization_ids = EXCLUDED.organization_ids, abilities = EXCLUDED.abilities`;
    }
  });
}

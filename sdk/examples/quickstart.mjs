// The SDK end to end: a member, a tag, a voucher job with progress, paging, bulk, errors as values.
// Against the reference server (`npm start`, demo fixtures):  node sdk/examples/quickstart.mjs
import { pathToFileURL } from 'node:url';
import {
  addMembersToTag,
  createLoyaltyClient,
  iterateMembers,
  toLoyaltyError,
  unwrap,
  waitForVoucherJob,
} from '@loyalty/sdk';

export async function quickstart({
  baseUrl = process.env.LOYALTY_API_URL ?? 'http://127.0.0.1:3000',
  log = console.log,
} = {}) {
  const client = createLoyaltyClient({
    baseUrl,
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
  });
  const brandId = 'brand-acme';

  // Errors are values ({ data } or { error }); unwrap() returns the data or throws the LoyaltyError.
  const member = unwrap(
    await client.POST('/members', {
      body: { brand_id: brandId, email: 'ada@example.com', first_name: 'Ada', unsubscribed: false },
    }),
  );
  log(`member ${member.identifier} (${member.created ? 'created' : 'already there'})`);

  // A 422 comes back as a value with the failing fields.
  const invalid = await client.POST('/members', {
    body: { brand_id: brandId, email: 'not-an-email', unsubscribed: false },
  });
  const problem = toLoyaltyError(invalid);
  log(`invalid e-mail: ${problem?.code} ${JSON.stringify(problem?.fields)}`);

  const ref = `quickstart-${Date.now()}`;
  const { data: tag } = unwrap(
    await client.POST('/tags', { body: { brand_id: brandId, external_reference: ref, tag: 'Quickstart' } }),
  );
  const reports = await addMembersToTag(client, { brandId, tagId: tag.uuid, memberIds: [member.identifier] });
  log(`added to tag: ${reports.every((r) => r.ok)}`);

  const job = unwrap(
    await client.POST('/tags/{id}/vouchers', {
      params: { path: { id: tag.uuid } },
      body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
    }),
  );
  let last;
  for await (const snapshot of waitForVoucherJob(client, {
    tagId: tag.uuid,
    jobId: job.job_id,
    brandId,
    intervalMs: 250,
  })) {
    log(`voucher job ${snapshot.status} ${snapshot.processed}/${snapshot.total}`);
    last = snapshot;
  }

  let count = 0;
  for await (const _ of iterateMembers(client, { brandId, perPage: 100 })) count++;
  log(`${count} members in ${brandId}`);
  return { memberId: member.identifier, tagId: tag.uuid, job: last, members: count };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await quickstart();

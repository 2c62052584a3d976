// The SDK end to end: a member, errors as values, a tag, a voucher job with progress, paging.
// Against the reference server with its demo fixtures (`npm start`): node sdk/examples/quickstart.mjs
// (another server: LOYALTY_API_URL=…). It can run again: the member is found, the tag is a new one.
import {
  addMembersToTag,
  createLoyaltyClient,
  iterateMembers,
  toLoyaltyError,
  unwrap,
  waitForVoucherJob,
} from '@loyalty/sdk';

const client = createLoyaltyClient({
  baseUrl: process.env.LOYALTY_API_URL ?? 'http://127.0.0.1:3000',
  clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
});
const brandId = 'brand-acme';

// Every call is typed by path, method, parameters and body. Errors are values: { data } or { error };
// unwrap() returns the data or throws the LoyaltyError. A known e-mail answers the member it is.
const member = unwrap(
  await client.POST('/members', {
    body: { brand_id: brandId, email: 'ada@example.com', first_name: 'Ada', unsubscribed: false },
  }),
);
console.log(`member ${member.identifier} (${member.created ? 'created' : 'already there'})`);

// A 422 comes back as a value with the failing fields.
const invalid = await client.POST('/members', {
  body: { brand_id: brandId, email: 'not-an-email', unsubscribed: false },
});
const problem = toLoyaltyError(invalid); // { status: 422, code: 'validation_failed', fields: { email: [...] } }
console.log(`invalid e-mail: ${problem?.code} ${JSON.stringify(problem?.fields)}`);

// An external_reference is unique in the organization: a new one per run (a fixed 'vip' would be a
// 422 the second time, or after the CLI walkthrough made that tag).
const { data: tag } = unwrap(
  await client.POST('/tags', {
    body: { brand_id: brandId, external_reference: `quickstart-${Date.now()}`, tag: 'Quickstart' },
  }),
);
const reports = await addMembersToTag(client, { brandId, tagId: tag.uuid, memberIds: [member.identifier] });
console.log(`added to tag: ${reports.every((r) => r.ok)}`);

const job = unwrap(
  await client.POST('/tags/{id}/vouchers', {
    params: { path: { id: tag.uuid } },
    body: { brand_id: brandId, coupon_id: 'coupon-welcome' },
  }),
);
for await (const s of waitForVoucherJob(client, { tagId: tag.uuid, jobId: job.job_id, brandId, intervalMs: 250 })) {
  console.log(`voucher job ${s.status} ${s.processed}/${s.total}`); // queued 0/0 … running 1/2 … done 2/2
}

let count = 0;
for await (const _ of iterateMembers(client, { brandId, perPage: 100 })) count++;
console.log(`${count} members in ${brandId}`);

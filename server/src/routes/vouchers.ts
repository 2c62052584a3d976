import { appOf } from '../context.js';
import { respondInTransaction } from '../lib/respond.js';
import { principalOf } from '../plugins/auth.js';
import { createVoucherJob, getVoucherJob } from '../services/vouchers/voucher-jobs.js';
import type { QueryOf, Schemas } from '../lib/schemas.js';
import { payloadOf, queryOf } from './route-options.js';
import type { RouteDef } from './types.js';

export const voucherRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/tags/{id}/vouchers',
    handler: (request, h) =>
      respondInTransaction(request, h, async (tx) => ({
        status: 202,
        body: (await createVoucherJob(
          tx,
          principalOf(request),
          request.params.id as string,
          payloadOf<Schemas['IssueVouchersRequest']>(request),
        )) satisfies Schemas['VoucherJobCreated'],
      })),
  },
  {
    method: 'GET',
    path: '/tags/{id}/vouchers/{job}',
    handler: async (request) => {
      const { id, job } = request.params as { id: string; job: string };
      return (await getVoucherJob(
        appOf(request).sql,
        principalOf(request),
        id,
        job,
        queryOf<QueryOf<'/tags/{id}/vouchers/{job}', 'get'>>(request).brand_id,
      )) satisfies Schemas['VoucherJobStatus'];
    },
  },
];

/**
 * The member endpoints of the mock API: POST /members, POST /members/list, GET /members (by
 * e-mail), GET /members/{uuid}, POST /members/uuid, POST /members/signups.
 */
import type { HttpHandler } from 'msw';
import { served } from './lifecycle.js';
import { addMember, emailError, emit, fullName, now, sql, type MockContext } from './context.js';
import type { MockMember, Schemas } from './types.js';

/** A member as POST /members/list shows it: what the mock does not keep is null. */
export const listItem = (m: MockMember): Schemas['MemberListItem'] => ({
  ...{
    email: m.email,
    full_name: fullName(m),
    identifier: m.id,
    unsubscribed: m.unsubscribed ? 1 : 0,
    last_name: m.last_name ?? null,
  },
  ...{
    phone_number: null,
    birth_date: null,
    street: null,
    house_number: null,
    postcode: null,
    city: null,
    country: null,
  },
  subscribed_at: m.subscribed_at ?? sql(now()),
});

const invalid = (errors: Record<string, string[]>): Schemas['ValidationError'] => ({
  message: Object.values(errors)[0]?.[0] ?? 'The given data was invalid.',
  error: 'validation_failed',
  errors,
});

const notFound: Schemas['Error'] = { message: 'Member not found', error: 'not_found' };

export function memberHandlers({ http, lifecycle, api, options, base }: MockContext): HttpHandler[] {
  const byId = (id: string) => [...api.members.values()].find((m) => m.id === id);
  const passes = (m: MockMember) => options.passes?.(m) ?? {};
  return [
    http.post(
      '/members',
      served(lifecycle, async ({ request, response }) => {
        const body = await request.json();
        const error = emailError(api, body.email);
        if (error) return response(422).json(invalid({ email: [error] }));
        const found = api.members.get(body.email.toLowerCase());
        const member =
          found ??
          addMember(api, {
            email: body.email,
            first_name: body.first_name ?? null,
            last_name: body.last_name ?? null,
            unsubscribed: body.unsubscribed ?? false,
          });
        if (!found) emit(api, { type: 'member.created', data: { member_id: member.id, brand_id: body.brand_id } });
        const answer = { success: true, created: !found, member_id: member.id, identifier: member.id } as const;
        return found ? response(200).json(answer) : response(201).json(answer);
      }),
    ),
    http.post(
      '/members/list',
      served(lifecycle, async ({ request, response }) => {
        const body = await request.json();
        const all = [...api.members.values()];
        const perPage = Number(body.per_page ?? all.length) || 1;
        const page = Number(body.page ?? 1);
        const lastPage = Math.max(1, Math.ceil(all.length / perPage));
        const pageUrl = (p: number) => `${base}/members/list?page=${p}`;
        return response(200).json({
          message: 'Request successful',
          data: {
            total: all.length,
            last_page: lastPage,
            per_page: perPage,
            next_page_url: page < lastPage ? pageUrl(page + 1) : null,
            last_page_url: pageUrl(lastPage),
            members: all.slice((page - 1) * perPage, page * perPage).map(listItem),
          },
        });
      }),
    ),
    http.get(
      '/members',
      served(lifecycle, ({ query, response }) => {
        const member = api.members.get((query.get('email') ?? '').toLowerCase());
        if (!member) return response(404).json(notFound);
        const { coupons = [], storecards = [] } = passes(member);
        return response(200).json({
          ...{
            success: true,
            email: member.email,
            member_id: member.id,
            identifier: member.id,
            member_full_name: fullName(member),
          },
          ...{ pass_codes: coupons.map((p) => p.pass_code), storecards: storecards.map((p) => p.pass_code) },
        });
      }),
    ),
    http.get(
      '/members/{uuid}',
      served(lifecycle, ({ params, response }) => {
        const member = byId(params.uuid);
        if (!member) return response(404).json(notFound);
        const { coupons = [], storecards = [] } = passes(member);
        return response(200).json({
          ...{ success: true, member_id: member.id, identifier: member.id, brand_id: options.brandId ?? 'brand-acme' },
          ...{
            unsubscribed: member.unsubscribed ?? false,
            subscribed_at: member.subscribed_at ?? sql(now()),
            coupons,
            storecards,
          },
          profile: {
            ...{
              email: member.email,
              first_name: member.first_name ?? null,
              last_name: member.last_name ?? null,
              full_name: fullName(member),
            },
            ...{
              phone_number: null,
              birth_day: null,
              street: null,
              house_number: null,
              postcode: null,
              city: null,
              country: null,
            },
          },
        });
      }),
    ),
    http.post(
      '/members/uuid',
      served(lifecycle, async ({ request, response }) => {
        const body = await request.json();
        const data: Record<string, string> = {};
        for (const email of body.emails) {
          const member = api.members.get(email.toLowerCase());
          if (member) data[email] = member.id;
        }
        return response(200).json({ message: 'Request successful', data });
      }),
    ),
    http.post(
      '/members/signups',
      served(lifecycle, async ({ request, response }) => {
        const body = await request.json();
        const errors: Record<string, string[]> = {};
        body.users.forEach((user, i) => {
          const error = emailError(api, user.email);
          if (error) errors[`users.${i}.email`] = [error];
        });
        if (Object.keys(errors).length)
          return response(422).json({ ...invalid(errors), message: 'The given data was invalid.' });
        const fresh: Record<string, string> = {};
        const found: Record<string, string> = {};
        for (const user of body.users) {
          const existing = api.members.get(user.email.toLowerCase());
          if (existing) found[user.email] = existing.id;
          else {
            const member = addMember(api, {
              email: user.email,
              first_name: user.first_name ?? null,
              last_name: user.last_name ?? null,
              unsubscribed: user.unsubscribed ?? false,
            });
            emit(api, { type: 'member.created', data: { member_id: member.id, brand_id: body.brand_id } });
            fresh[user.email] = member.id;
          }
        }
        return response(200).json({ message: 'Request successful', data: { new: fresh, found } });
      }),
    ),
  ];
}

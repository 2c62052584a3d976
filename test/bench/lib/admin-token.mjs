/** A bearer token of a demo fixture client (its secret is `<client id>-secret`), from a running server. */
export async function clientToken(baseUrl, clientId) {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: `${clientId}-secret`,
    }),
  });
  if (!res.ok) throw new Error(`token ${clientId}: ${res.status} ${await res.text()}`);
  return (await res.json()).access_token;
}

/** A bearer token of the demo fixtures' admin client, from a running server. */
export const adminToken = (baseUrl) => clientToken(baseUrl, 'acme-admin');

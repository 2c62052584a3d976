/** A bearer token of the demo fixtures' admin client, from a running server. */
export async function adminToken(baseUrl) {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: 'acme-admin',
      client_secret: 'acme-admin-secret',
    }),
  });
  if (!res.ok) throw new Error(`token: ${res.status} ${await res.text()}`);
  return (await res.json()).access_token;
}

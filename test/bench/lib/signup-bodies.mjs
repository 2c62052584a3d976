// The sign-up import bodies the members benches send (server-members.mjs, lib/profile-signups.mjs):
// `imports` JSON bodies of `perImport` new members of brand-acme each, built before any clock starts.

/** @param {number} imports @param {number} perImport @returns {string[]} */
export const signupBodies = (imports, perImport) =>
  Array.from({ length: imports }, (_, r) =>
    JSON.stringify({
      brand_id: 'brand-acme',
      users: Array.from({ length: perImport }, (_, i) => ({
        email: `bench-${r}-${i}@example.org`,
        first_name: `First${i}`,
        last_name: `Last${r}`,
        subscribed_at: '2026-01-02 03:04:05',
      })),
    }),
  );

-- Throwaway sandbox organizations (issue 25): POST /sandbox/organizations creates an organization
-- for one test run (services/sandbox-organizations.ts) that the scheduled retention removes, with
-- all its data (services/organization-data.ts), once expires_at has passed. expires_at is real
-- time (infrastructure, like leases): moving the organization's sandbox clock never removes it.
-- Organizations of the fixture file have none (NULL) and are never removed this way.
ALTER TABLE organizations
  ADD COLUMN expires_at timestamptz,
  -- The client whose sandbox.create token made it (NULL: the operator's credential): it may
  -- delete it, and it has at most 50 live ones.
  ADD COLUMN created_by_client text;

CREATE INDEX organizations_expiry_idx ON organizations (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX organizations_creator_idx ON organizations (created_by_client) WHERE created_by_client IS NOT NULL;

-- A client's organizations are found by them (reset revokes their tokens, deleting an organization
-- deletes its own clients): access_tokens and clients by the organizations array.
CREATE INDEX access_tokens_organizations_idx ON access_tokens USING gin (organization_ids);

-- The Apple pass-update web service (issue 28): devices registered for a pass's updates, and the
-- sandbox's record of the pushes sent to them (services/wallet/).
--
-- wallet_registrations: one row per device and pass (Apple's deviceLibraryIdentifier and the
-- pass's serialNumber, which is its id). The push token is what APNs needs to reach the device,
-- so it is kept as sent; it is never logged and never answered by any route. organization_id is
-- the pass's: pushes, events and removal of an organization's data go by it, never across
-- organizations. A pass's registrations go with the pass (a member's deletion removes both).
-- expiry_noted_at: when the server saw the pass expire on its organization's clock (a sandbox clock
-- move, or the periodic check): the expiry is then a version of the pass like a change of its row
-- (passesUpdatedSince tags, services/wallet/wallet-registrations.ts). A voucher job writes no row
-- here: a pass gets one only when a device registers it.
CREATE TABLE wallet_registrations (
  organization_id text NOT NULL,
  device_library_identifier text NOT NULL,
  pass_type_identifier text NOT NULL,
  pass_id uuid NOT NULL REFERENCES passes(id) ON DELETE CASCADE,
  push_token text NOT NULL,
  expiry_noted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (device_library_identifier, pass_id)
);
-- A change of a pass looks its devices up (and a scan asks whether it has any at all).
CREATE INDEX wallet_registrations_pass_idx ON wallet_registrations (pass_id);
CREATE INDEX wallet_registrations_organization_idx ON wallet_registrations (organization_id);
-- The expiry check reads only registrations whose pass's expiry is not noted yet.
CREATE INDEX wallet_registrations_expiry_unnoted_idx ON wallet_registrations (pass_id) WHERE expiry_noted_at IS NULL;

-- wallet_pushes: in the sandbox (no Apple credentials), every push that would go to APNs is
-- recorded here instead; GET /sandbox/wallet/pushes reads them by push token. The token itself is
-- not stored: its SHA-256 is the key (the reader presents the token). `id` is the reader's cursor;
-- pushes to one token are written one after the other (an advisory lock), so their ids commit
-- in order and a cursor never skips one. Retention purges them by sent_at.
CREATE TABLE wallet_pushes (
  id bigserial PRIMARY KEY,
  organization_id text NOT NULL,
  push_token_hash bytea NOT NULL,
  topic text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX wallet_pushes_token_idx ON wallet_pushes (push_token_hash, id);
CREATE INDEX wallet_pushes_organization_idx ON wallet_pushes (organization_id);
CREATE INDEX wallet_pushes_sent_idx ON wallet_pushes USING brin (sent_at);

-- The events of devices registering for and unregistering from a pass's updates (extension).
-- NOT VALID: every existing row satisfies the narrower check it replaces, so the events table (the
-- largest) is not scanned under lock for nothing.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
  CHECK (type IN ('member.created', 'points.changed', 'coupon.issued', 'coupon.redeemed',
                  'webhook_subscription.disabled', 'pass.installed', 'pass.uninstalled')) NOT VALID;

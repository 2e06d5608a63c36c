-- Every stored row has an owner tenant; rows written before tenants existed
-- belong to "default", the tenant of keys that name none. Items carry their
-- response's tenant (chains never cross tenants, so every reference to an
-- item comes from the same tenant), traces their response's.
ALTER TABLE responses ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE items ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';

-- `item_reference` looks an id up within one tenant, newest first.
DROP INDEX IF EXISTS items_by_public_id;
CREATE INDEX items_by_public_id_tenant ON items (public_id, tenant);

-- Retention deletes responses by age.
CREATE INDEX responses_by_created_at ON responses (created_at);

-- Registers send one idempotency key per sale (since register firmware 7.2).
ALTER TABLE orders ADD COLUMN idempotency_key uuid;
ALTER TABLE orders ADD CONSTRAINT orders_idempotency_key_key UNIQUE (idempotency_key);
CREATE INDEX orders_store_created_idx ON orders (store_id, created_at);

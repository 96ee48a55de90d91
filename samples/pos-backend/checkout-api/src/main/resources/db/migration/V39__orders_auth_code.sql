ALTER TABLE orders ADD COLUMN auth_code varchar(12);
ALTER TABLE orders ADD COLUMN paid_at timestamptz;

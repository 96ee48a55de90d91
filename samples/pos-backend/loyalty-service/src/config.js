'use strict';

// All settings come from the environment (see deploy/k8s/loyalty-service.yaml).
function int(name, def) {
  const raw = process.env[name];
  return raw ? parseInt(raw, 10) : def;
}

module.exports = {
  port: int('PORT', 8080),
  databaseUrl: process.env.DATABASE_URL || 'postgres://loyalty@loyalty-db.pos.svc.cluster.local:5432/loyalty',
  pgPoolMax: int('PG_POOL_MAX', 10),
  redisUrl: process.env.REDIS_URL || 'redis://redis-loyalty.pos.svc.cluster.local:6379/0',
  balanceCacheTtlSeconds: int('BALANCE_CACHE_TTL_SECONDS', 0),
  amqpUrl: process.env.AMQP_URL || 'amqp://loyalty@rabbitmq.pos.svc.cluster.local:5672/pos',
  awardedQueue: process.env.AWARDED_QUEUE || 'loyalty.points-awarded',
  partner: {
    // The loyalty programme is run by a partner; every accrual is pushed to their API.
    baseUrl: process.env.PARTNER_API_URL || 'https://api.loyaltypartner.example',
    apiKey: process.env.PARTNER_API_KEY,
    timeoutMs: int('PARTNER_TIMEOUT_MS', 3000),
    maxRetries: int('PARTNER_MAX_RETRIES', 0),
  },
};

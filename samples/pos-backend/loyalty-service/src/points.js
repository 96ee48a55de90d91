'use strict';

const axios = require('axios');
const { Pool } = require('pg');
const Redis = require('ioredis');
const config = require('./config');

const pool = new Pool({ connectionString: config.databaseUrl, max: config.pgPoolMax });
const redis = new Redis(config.redisUrl);
const partner = axios.create({
  baseURL: config.partner.baseUrl,
  timeout: config.partner.timeoutMs,
  headers: { 'X-Api-Key': config.partner.apiKey },
});

// Multipliers agreed with the loyalty partner (programme rules v4).
const TIER_MULTIPLIER = { BASIC: 1, SILVER: 1.25, GOLD: 1.5, PLATINUM: 2 };

async function findMember(cardNumber) {
  const { rows } = await pool.query(
    'SELECT id, card_number, profile FROM members WHERE card_number = $1',
    [cardNumber],
  );
  return rows[0];
}

// POST /v1/points/award — checkout-api calls this after every paid order that
// carries a loyalty card number. One point per euro, times the tier multiplier.
async function awardPoints({ cardNumber, orderId, storeId, amount }, publish) {
  const member = await findMember(cardNumber);
  const tier = member.profile.tier;
  const points = Math.round(Math.floor(Number(amount)) * (TIER_MULTIPLIER[tier] || 1));

  const { rows } = await pool.query(
    'INSERT INTO points_ledger (member_id, order_id, store_id, points) VALUES ($1, $2, $3, $4) RETURNING balance_after',
    [member.id, orderId, storeId, points],
  );
  const balance = rows[0].balance_after;
  await pushAccrual(member, orderId, points);
  await redis.set(`balance:${member.id}`, balance);
  await publish(config.awardedQueue, { memberId: member.id, orderId, points, balance });
  return { memberId: member.id, points, balance };
}

async function pushAccrual(member, orderId, points) {
  await partner.post(`/v2/members/${member.id}/accruals`, {
    externalId: `keele-${orderId}`,
    points,
  });
}

module.exports = { awardPoints, findMember };

'use strict';

const express = require('express');
const amqp = require('amqplib');
const pino = require('pino');
const config = require('./config');
const { awardPoints } = require('./points');

const logger = pino({ base: { service: 'loyalty-service' } });
const app = express();
app.use(express.json({ limit: '64kb' }));

let channel;

// Publishes on a confirm channel; the queue is declared with x-max-length and
// overflow=reject-publish, so a full queue nacks the message.
async function publish(queue, message) {
  const body = Buffer.from(JSON.stringify(message));
  try {
    await new Promise((resolve, reject) => {
      channel.sendToQueue(queue, body, { persistent: true }, (err) => (err ? reject(err) : resolve()));
    });
  } catch (err) {
    const { messageCount, consumerCount } = await channel.checkQueue(queue);
    throw new Error(`publish to ${queue} nacked: messages=${messageCount} consumers=${consumerCount}`);
  }
}

app.get('/healthz', (req, res) => res.json({ status: 'ok' }));

app.post('/v1/points/award', async (req, res, next) => {
  try {
    const result = await awardPoints(req.body, publish);
    res.status(201).json(result);
  } catch (err) {
    next(err);
  }
});

// eslint-disable-next-line no-unused-vars
app.use((err, req, res, next) => {
  const status = err.response ? 502 : 500;
  logger.error({ err, path: req.path, orderId: req.body && req.body.orderId }, err.message);
  res.status(status).json({ error: 'award_failed' });
});

process.on('unhandledRejection', (reason) => {
  logger.error({ reason }, `Unhandled promise rejection: ${reason}`);
});

async function main() {
  const conn = await amqp.connect(config.amqpUrl);
  channel = await conn.createConfirmChannel();
  await channel.assertQueue(config.awardedQueue, {
    durable: true,
    arguments: { 'x-max-length': 100000, 'x-overflow': 'reject-publish' },
  });
  app.listen(config.port, () => logger.info(`loyalty-service listening on ${config.port}`));
}

main().catch((err) => {
  logger.fatal({ err }, 'startup failed');
  process.exit(1);
});

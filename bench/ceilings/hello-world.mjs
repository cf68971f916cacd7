// Ceiling: a bare Fastify server (no logger, no hooks) answering GET / with a small JSON object.
// Started by bench/run.mjs in its own process; reports { port } over IPC once listening.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.send({ port: app.server.address().port });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.close().then(() => process.exit(0)));

import { expect } from 'chai';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { controlCliError } from '../../src/cli/control-errors.js';
import type { CliError } from '../../src/cli/errors.js';
import {
  ControlBadAnswerError,
  ControlClient,
  ControlConflictError,
  ControlInvalidRequestError,
  ControlNotFoundError,
  ControlRateLimitedError,
  ControlServerError,
  ControlUnauthorizedError,
  ControlUnreachableError,
} from '../../src/control-api/index.js';
import { createControlApi } from '../../src/edge/control/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { FakeClock } from '../support/postgres.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

/**
 * ControlClient against the real control API (createControlApi, SQLite in memory) on 127.0.0.1:
 * each failure arrives as the control API's own error class, and the CLI's table of exits turns it
 * into its TUNA_CLI_* code, exit status and line.
 */
describe('control API client', function () {
  this.timeout(20_000);
  let store: Store | undefined;
  let servers: Server[] = [];
  let token: string;

  async function serve(handler: RequestListener): Promise<URL> {
    const server = createServer(handler).listen(0, '127.0.0.1');
    servers.push(server);
    await once(server, 'listening');
    return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  async function startApi(): Promise<URL> {
    const clock = new FakeClock();
    store = await openSqliteStore(':memory:', clock);
    const account = await store.createAccount({ name: 'a' }, 'test');
    token = (await store.createApiKey({ accountId: account.id, name: 'ops', scopes: ['reservations'] }, 'test')).token;
    return serve(
      createControlApi({ store, clock, baseDomain: 'edge.test', portPool: { first: 30000, last: 30000 }, addressPool: '127.77.0.0/29', rateLimit: { capacity: 1, refillPerSecond: 0.001 } }),
    );
  }

  /** failure awaits a call that must fail; `cli` is what the CLI would end the command with. */
  async function failure(promise: Promise<unknown>): Promise<Error & { code: string; status?: number; cli: CliError }> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'the call should have failed').to.be.instanceOf(Error);
    expect((err as Error).message).not.to.contain(token ?? 'no token');
    const cli = controlCliError(err);
    expect(cli, 'every control API failure has a CLI exit').not.to.equal(undefined);
    expect(cli!.message).not.to.contain(token ?? 'no token');
    return Object.assign(err as Error & { code: string; status?: number }, { cli: cli! });
  }

  afterEach(async () => {
    for (const s of servers) s.close();
    servers = [];
    await store?.close();
    store = undefined;
  });

  it('reserves an address from the pool and a port, adopting a named pool port on the second call', async () => {
    const client = new ControlClient({ url: await startApi() }, token);
    const address = await client.reserve({ kind: 'address' });
    expect(address.reservation.value).to.match(/^127\.77\.0\.[1-6]$/);
    const first = await client.reserve({ kind: 'tcp-port', name: 'default/ssh' });
    const second = await client.reserve({ kind: 'tcp-port', name: 'default/ssh' });
    expect([first.created, second.created]).to.deep.equal([true, false]);
    expect(second.reservation.value).to.equal('30000');
  });

  it('turns a wrong key into ControlUnauthorizedError (77), then the rate limit into ControlRateLimitedError (75) with the wait', async () => {
    const url = await startApi();
    const wrong = new ControlClient({ url }, `${token.slice(0, -3)}xyz`);
    const first = await failure(wrong.listReservations());
    expect(first).to.be.instanceOf(ControlUnauthorizedError);
    expect(first).to.include({ status: 401, code: 'TUNA_CONTROL_UNAUTHORIZED' });
    expect(first.cli).to.include({ code: 'TUNA_CLI_CONTROL_UNAUTHORIZED', exitCode: 77 });
    const limited = await failure(new ControlClient({ url }, token).listReservations());
    expect(limited).to.be.instanceOf(ControlRateLimitedError);
    expect((limited as unknown as ControlRateLimitedError).retryAfterSeconds).to.be.a('number');
    expect(limited.cli.exitCode).to.equal(75);
    expect(limited.cli.message).to.match(/\(429\); try again in \d+ s$/);
  });

  it('maps 404, 400 with its field and 409 with the API code to their errors and exit statuses', async () => {
    const client = new ControlClient({ url: await startApi() }, token);
    const missing = await failure(client.revokeTunnelKey('0123456789abcdef'));
    expect(missing).to.be.instanceOf(ControlNotFoundError);
    expect(missing.cli).to.include({ code: 'TUNA_CLI_CONTROL_NOT_FOUND', exitCode: 66 });
    const bad = await failure(client.reserve({ kind: 'domain', hostname: 'a.b.edge.test' }));
    expect(bad).to.be.instanceOf(ControlInvalidRequestError);
    expect(bad).to.include({ status: 400, code: 'TUNA_CONTROL_INVALID', field: 'hostname' });
    expect(bad.cli).to.include({ code: 'TUNA_CLI_CONTROL_REJECTED', exitCode: 65 });
    expect(bad.cli.message).to.match(/^the edge refused the request \(400\): .*\(field hostname\)$/);
    await client.reserve({ kind: 'tcp-port', name: 'one' });
    const exhausted = await failure(client.reserve({ kind: 'tcp-port', name: 'two' }));
    expect(exhausted).to.be.instanceOf(ControlConflictError);
    expect(exhausted).to.include({ status: 409, code: 'TUNA_STORE_POOL_EXHAUSTED' });
    expect(exhausted.cli).to.include({ code: 'TUNA_CLI_CONTROL_CONFLICT', exitCode: 73 });
  });

  it('sends the key only as a Bearer header, never in the URL', async () => {
    const seen: { url: string; authorization: string | undefined }[] = [];
    const url = await serve((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"tunnelKeys":[]}');
    });
    token = 'tuna_ak_0123456789abcdef_secret';
    await new ControlClient({ url }, token).listTunnelKeys({ 'cluster': 'prod', 'a=b': 'c,d' });
    expect(seen).to.deep.equal([{ url: '/v1/tunnel-keys?label.cluster=prod&label.a%3Db=c%2Cd', authorization: `Bearer ${token}` }]);
  });

  it('reports a 500 as ControlServerError and a non-JSON answer or a closed port as ControlUnreachableError (69)', async () => {
    token = 'tuna_ak_0123456789abcdef_secret';
    const failing = await serve((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"TUNA_CONTROL_INTERNAL","message":"internal error"}}'));
    const err500 = await failure(new ControlClient({ url: failing }, token).listReservations());
    expect(err500).to.be.instanceOf(ControlServerError);
    expect(err500).to.include({ status: 500, code: 'TUNA_CONTROL_INTERNAL' });
    expect(err500.cli).to.include({ code: 'TUNA_CLI_CONTROL_SERVER', exitCode: 69 });
    expect(err500.cli.message).to.contain('answered 500 TUNA_CONTROL_INTERNAL');
    const html = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
    const notApi = await failure(new ControlClient({ url: html }, token).listReservations());
    expect(notApi).to.be.instanceOf(ControlUnreachableError);
    expect(notApi.cli).to.include({ code: 'TUNA_CLI_CONTROL_UNREACHABLE', exitCode: 69 });
    const closed = await serve(() => undefined);
    const last = servers.pop()!;
    last.close();
    await once(last, 'close');
    const refused = await failure(new ControlClient({ url: closed }, token).listReservations());
    expect(refused).to.be.instanceOf(ControlUnreachableError);
    expect(refused.message).to.contain('ECONNREFUSED');
  });

  it('reports an answer of the wrong shape as ControlBadAnswerError, which the CLI reports as a server failure', async () => {
    token = 'tuna_ak_0123456789abcdef_secret';
    const url = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"reservations":[{"id":1}]}'));
    const err = await failure(new ControlClient({ url }, token).listReservations());
    expect(err).to.be.instanceOf(ControlBadAnswerError);
    expect(err.message).to.contain('unexpected shape');
    expect(err.cli).to.include({ code: 'TUNA_CLI_CONTROL_SERVER', exitCode: 69 });
  });

  it('trusts an https edge with a self-signed certificate only when given its CA', async () => {
    token = 'tuna_ak_0123456789abcdef_secret';
    const { cert, key } = selfSignedCertificate(['localhost']);
    const server = createHttpsServer({ cert, key }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"reservations":[]}'));
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = new URL(`https://localhost:${(server.address() as AddressInfo).port}`);
    expect(await new ControlClient({ url, ca: cert }, token).listReservations()).to.deep.equal({ reservations: [] });
    const untrusted = await failure(new ControlClient({ url }, token).listReservations());
    expect(untrusted).to.be.instanceOf(ControlUnreachableError);
    expect(untrusted.message).to.match(/SELF_SIGNED/);
  });
});

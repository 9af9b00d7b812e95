// dns-stand-in.ts — the program the test kubelet runs for `registry.k8s.io/coredns/coredns` (it has
// no image runtime). It is NOT coredns: it reads coredns's flags and Corefile, says at start which
// zones it serves and which it refuses, answers the `whoami` plugin's zones as coredns does, and
// answers REFUSED where coredns would forward off this machine (see dns-corefile.ts).
import { readFileSync } from 'node:fs';
import { parseCorefile, parseStandInArgs, planCorefile } from './dns-corefile.js';
import { startDnsServers } from './dns-server.js';

const log = (line: string) => console.log(`coredns stand-in: ${line}`);

async function main(): Promise<void> {
  const options = parseStandInArgs(process.argv.slice(2));
  const plans = planCorefile(parseCorefile(readFileSync(options.conf, 'utf8'), options.port));
  log(`this is tuna's test stand-in for coredns, not coredns; Corefile ${options.conf}`);
  for (const plan of plans) {
    log(`${plan.action === 'whoami' ? 'serving' : 'REFUSING'} ${plan.zone}:${plan.port} — ${plan.reason}`);
  }
  const servers = await startDnsServers(plans, '0.0.0.0', log);
  log(`listening on UDP and TCP port${servers.ports.length > 1 ? 's' : ''} ${servers.ports.join(', ')}`);
  const stop = () => void servers.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  log(`cannot start: ${(error as Error).message}`);
  process.exit(1);
});

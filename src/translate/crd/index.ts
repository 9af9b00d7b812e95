/**
 * translateCrds: tuna.dev/v1alpha1 Domain, TCPPort and Tunnel → reservations, Tunnel fragments and
 * statuses. Domains and TCPPorts go first because Tunnels refer to them. Rules and every reason:
 * docs/translators/crd.md.
 */
import { decodeDomain, decodeTCPPort, decodeTunnel } from '../../crd/index.js';
import { emptyGraph } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { StatusBook } from '../common/meta.js';
import type { Fragment, TranslateOptions, TranslatorOutput } from '../types.js';
import { decodeAll } from './decode-all.js';
import { translateDomains } from './domains.js';
import { translateTcpPorts } from './tcp-ports.js';
import { translateTunnels } from './tunnels.js';

/** RESERVATIONS_GROUP is the fragment group holding every Domain and TCPPort reservation (they claim no hostname). */
export const RESERVATIONS_GROUP = 'tuna.dev/reservations';

/** translateCrds translates the snapshot's tuna.dev objects; it is pure and independent of input order. */
export function translateCrds(index: SnapshotIndex, options: TranslateOptions): TranslatorOutput {
  const book = new StatusBook();
  const snap = index.snapshot;
  const domains = translateDomains(decodeAll(snap.domains, 'Domain', decodeDomain, book), options, book);
  const tcpPorts = translateTcpPorts(decodeAll(snap.tcpPorts, 'TCPPort', decodeTCPPort, book), book);
  const tunnels = decodeAll(snap.tunnels, 'Tunnel', decodeTunnel, book);
  const fragments: Fragment[] = translateTunnels(tunnels, { index, options, domains: domains.outcomes, tcpPorts: tcpPorts.outcomes }, book);
  const reservations = [...domains.reservations, ...tcpPorts.reservations];
  if (reservations.length > 0) fragments.push({ group: RESERVATIONS_GROUP, graph: { ...emptyGraph(), reservations }, claims: [] });
  return { fragments, statuses: book.all() };
}

import { X509Certificate } from 'node:crypto';
import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { ClientValidation, ClientValidationMode, Condition } from '../../model/index.js';
import { condition } from '../common/status.js';
import { CA_BUNDLE_KEY } from '../kinds.js';
import type { GatewayContext, ListenerContext, Problem, TranslationContext } from './context.js';
import { GATEWAY_GROUP } from './kinds.js';
import { isGroupKind } from '../kinds.js';

/**
 * Client certificate validation of HTTPS listeners: Gateway `spec.tls.frontend` (Gateway API v1.6,
 * GEP-91). `default.validation` applies to every HTTPS listener, `perPort[].tls.validation` replaces
 * it for the listeners of that port ("Once set this configuration overrides the default
 * configuration for all Listeners handling HTTPS traffic that match this port").
 */

/** FrontendValidationSpec is one `FrontendTLSValidation` as the Gateway wrote it. */
interface FrontendValidationSpec {
  caCertificateRefs?: { group?: string; kind?: string; name: string; namespace?: string }[];
  mode?: string;
}

/** ValidationVerdict is a listener's resolved validation, or why it cannot be served. */
export type ValidationVerdict =
  | { kind: 'none' }
  | { kind: 'valid'; validation: ClientValidation }
  | { kind: 'invalid'; unresolved?: Problem; notAccepted?: Problem };

const MODES: readonly ClientValidationMode[] = ['AllowValidOnly', 'AllowInsecureFallback'];

/** frontendValidationOf returns the validation that applies to listeners on `port`: the port's own, else the default. */
export function frontendValidationOf(obj: IGateway, port: number): FrontendValidationSpec | undefined {
  const frontend = obj.spec?.tls?.frontend;
  if (!frontend) return undefined;
  const own = (frontend.perPort ?? []).find((p) => p.port === port);
  return own ? own.tls?.validation : frontend.default?.validation;
}

/**
 * resolveClientValidation checks the validation of one terminating HTTPS listener. Every
 * caCertificateRef must resolve (spec: a ref that does not is ResolvedRefs=False on the listener:
 * InvalidCACertificateRef, InvalidCACertificateKind or RefNotPermitted), and when none does the
 * listener is also Accepted=False with NoValidCACertificate. tuna serves a listener only when all
 * its refs resolve: serving with the rest would trust fewer CAs than the Gateway names, which the
 * spec leaves open, and one rule ("a listener with an unresolved ref is not served") is easier to
 * reason about.
 */
export function resolveClientValidation(ctx: TranslationContext, gw: GatewayContext, l: ListenerContext): ValidationVerdict {
  if (l.protocol !== 'HTTPS') return { kind: 'none' };
  const spec = frontendValidationOf(gw.obj, l.port);
  if (!spec) return { kind: 'none' };
  const mode = spec.mode ?? 'AllowValidOnly';
  if (!(MODES as readonly string[]).includes(mode))
    return { kind: 'invalid', notAccepted: { reason: 'UnsupportedValue', message: `frontend validation mode ${mode} is not supported (AllowValidOnly, AllowInsecureFallback)` } };
  const refs = spec.caCertificateRefs ?? [];
  if (refs.length === 0)
    return { kind: 'invalid', unresolved: { reason: 'InvalidCACertificateRef', message: 'frontend validation needs at least one caCertificateRef' }, notAccepted: noValid() };
  const bundles: string[] = [];
  const problems: Problem[] = [];
  for (const ref of refs) {
    const found = resolveCaRef(ctx, gw, ref);
    if (typeof found === 'string') bundles.push(found);
    else problems.push(found);
  }
  const first = problems[0];
  if (first === undefined) return { kind: 'valid', validation: { caPem: bundles.join(''), mode: mode as ClientValidationMode } };
  const unresolved = { reason: first.reason, message: problems.map((p) => p.message).join('; ') };
  return bundles.length === 0 ? { kind: 'invalid', unresolved, notAccepted: noValid() } : { kind: 'invalid', unresolved };
}

function noValid(): Problem {
  return { reason: 'NoValidCACertificate', message: 'no caCertificateRef of the frontend validation resolves to a CA certificate' };
}

/** resolveCaRef returns the PEM bundle one caCertificateRef names (a core ConfigMap's `ca.crt`), or why not. */
function resolveCaRef(ctx: TranslationContext, gw: GatewayContext, ref: { group?: string; kind?: string; name: string; namespace?: string }): string | Problem {
  const group = ref.group ?? '';
  const kind = ref.kind ?? '';
  const namespace = ref.namespace ?? gw.namespace;
  const what = `caCertificateRef ${namespace}/${ref.name}`;
  // Core support is one ConfigMap with `ca.crt`; a Secret would need its data, which never reaches a translator.
  if (!isGroupKind(ref, 'ConfigMap'))
    return { reason: 'InvalidCACertificateKind', message: `${what} is a ${group ? `${group}/` : ''}${kind || '(no kind)'}; only core ConfigMaps are supported` };
  const from = { group: GATEWAY_GROUP, kind: 'Gateway' as const, namespace: gw.namespace };
  if (!ctx.grants.isPermitted(from, { group: '', kind: 'ConfigMap', namespace, name: ref.name }))
    return { reason: 'RefNotPermitted', message: `${what} is in another namespace and no ReferenceGrant allows it` };
  const configMap = ctx.index.configMaps.get(`${namespace}/${ref.name}`);
  if (!configMap) return { reason: 'InvalidCACertificateRef', message: `${what} does not exist` };
  const pem = configMap.data?.[CA_BUNDLE_KEY];
  if (typeof pem !== 'string' || pem.trim() === '') return { reason: 'InvalidCACertificateRef', message: `${what} has no ${CA_BUNDLE_KEY} key` };
  const problem = caBundleProblem(pem);
  if (problem !== undefined) return { reason: 'InvalidCACertificateRef', message: `${what}: ${problem}` };
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * caBundleProblem says what is wrong with a PEM CA bundle, or undefined when every block in it is
 * a certificate that parses. The data plane would otherwise fail to build the listener's secure
 * context at the first handshake and serve nothing; the message never quotes the data.
 */
export function caBundleProblem(pem: string): string | undefined {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) return `${CA_BUNDLE_KEY} holds no PEM certificate (no BEGIN CERTIFICATE block)`;
  for (const [i, b] of blocks.entries()) {
    if (b[1] !== 'CERTIFICATE') return `${CA_BUNDLE_KEY} block ${i + 1} is a ${b[1]}, not a CERTIFICATE`;
    try {
      new X509Certificate(b[0]);
    } catch {
      return `${CA_BUNDLE_KEY} block ${i + 1} does not parse as an X.509 certificate`;
    }
  }
  return undefined;
}

/**
 * insecureFallbackCondition is the Gateway's `InsecureFrontendValidationMode` condition: True with
 * ConfigurationChanged while the default or any per-port validation is AllowInsecureFallback, and
 * absent otherwise ("removed as soon as FrontendValidationModeType is changed back").
 */
export function insecureFallbackCondition(obj: IGateway, generation: number | undefined): Condition | undefined {
  const frontend = obj.spec?.tls?.frontend;
  const modes = [frontend?.default?.validation?.mode, ...(frontend?.perPort ?? []).map((p) => p.tls?.validation?.mode)];
  if (!modes.includes('AllowInsecureFallback')) return undefined;
  return condition(
    'InsecureFrontendValidationMode',
    true,
    'ConfigurationChanged',
    'a frontend validation is AllowInsecureFallback: clients without a valid certificate are served, and the backend gets no identity for them',
    generation,
  );
}

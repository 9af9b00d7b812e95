import type { IGatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';
import { generationOf, refOf } from '../common/meta.js';
import { condition, warning } from '../common/status.js';
import type { StatusBook } from '../common/meta.js';
import { DEDICATED_CLASS_FEATURES, SUPPORTED_FEATURES } from './features.js';
import { GATEWAY_GROUP } from './kinds.js';
import { asKube } from './kube-object.js';
import { gatewayClassCodec, malformedField } from './codecs.js';
import type { GatewayParametersSpec } from '../../crd/index.js';
import { resolveParameters } from './parameters.js';
import type { ParametersIndex } from './parameters.js';

/** ClassVerdict is whether tuna accepted one of its GatewayClasses. */
export interface ClassVerdict {
  accepted: boolean;
  message: string;
  /** the GatewayParameters its parametersRef names: defaults for its Gateways */
  parameters?: GatewayParametersSpec;
}

/**
 * translateGatewayClasses accepts every GatewayClass whose controllerName is tuna's and reports
 * `Accepted` and `status.supportedFeatures` (GatewayClassStatus, Gateway API v1.6; GatewayInfrastructure
 * too where its parameters say `dataPlane: Dedicated`). A parametersRef
 * must name a tuna.dev GatewayParameters that exists and decodes (parameters.ts); any other is
 * refused with reason InvalidParameters. Classes of other controllers are not ours and get no
 * status. Returns the verdict per class name.
 */
export function translateGatewayClasses(
  classes: IGatewayClass[],
  controllerName: string,
  book: StatusBook,
  parameters: ParametersIndex,
): Map<string, ClassVerdict> {
  const verdicts = new Map<string, ClassVerdict>();
  for (const gc of classes) {
    if (gc.spec?.controllerName !== controllerName) continue;
    const name = gc.metadata?.name ?? '';
    const gen = generationOf(asKube(gc));
    const status = book.entry(asKube(gc), refOf(asKube(gc), 'GatewayClass', GATEWAY_GROUP));
    const params = gc.spec.parametersRef;
    const malformed = malformedField(gatewayClassCodec, gc);
    const resolved = params && !malformed ? resolveParameters(parameters, params, 'parametersRef') : undefined;
    const verdict: ClassVerdict = malformed
      ? { accepted: false, message: `malformed ${malformed}` }
      : resolved && !resolved.ok
      ? { accepted: false, message: resolved.message }
      : { accepted: true, message: `accepted by ${controllerName}`, ...(resolved?.ok ? { parameters: resolved.spec } : {}) };
    verdicts.set(name, verdict);
    const accepted = verdict.accepted
      ? condition('Accepted', true, 'Accepted', verdict.message, gen)
      : condition('Accepted', false, 'InvalidParameters', verdict.message, gen);
    if (!verdict.accepted) status.events.push(warning('InvalidParameters', verdict.message));
    status.status = {
      conditions: [accepted],
      // a class whose Gateways get pods of their own puts their infrastructure metadata on them
      supportedFeatures: (verdict.parameters?.dataPlane === 'Dedicated' ? DEDICATED_CLASS_FEATURES : SUPPORTED_FEATURES).map((f) => ({ name: f })),
    };
  }
  return verdicts;
}

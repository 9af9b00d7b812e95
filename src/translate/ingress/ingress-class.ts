import type { V1Ingress, V1IngressClass } from '@kubernetes/client-node';
import type { TranslateOptions } from '../types.js';

/** legacyClassAnnotation is the deprecated class annotation, still honoured (Ingress docs, "Deprecated annotation"). */
export const legacyClassAnnotation = 'kubernetes.io/ingress.class';
/** defaultClassAnnotation makes an IngressClass the default for Ingresses naming none. */
export const defaultClassAnnotation = 'ingressclass.kubernetes.io/is-default-class';

/** IngressClassMatcher decides which Ingresses tuna serves; built once per translation. */
export interface IngressClassMatcher {
  /** why tuna serves this Ingress (for the Accepted message), or undefined when it is not ours */
  claim(ingress: V1Ingress): string | undefined;
}

/**
 * ingressClassMatcher builds the matcher. An Ingress is tuna's when:
 * - `spec.ingressClassName` names an IngressClass whose `spec.controller` is tuna's controller, or
 *   names `options.ingressClassName` and no IngressClass of that name exists (so manifests work
 *   without one, e.g. with the file provider); an existing class of that name run by another
 *   controller is that controller's;
 * - else its `kubernetes.io/ingress.class` annotation is `options.ingressClassName` (the field wins
 *   over the annotation, as the API server refuses Ingresses where they disagree);
 * - else it names no class and an IngressClass of tuna's controller is annotated
 *   `ingressclass.kubernetes.io/is-default-class: "true"`.
 */
export function ingressClassMatcher(classes: V1IngressClass[], options: TranslateOptions): IngressClassMatcher {
  const controllerOf = new Map(classes.map((c) => [c.metadata?.name ?? '', c.spec?.controller ?? '']));
  const defaultClass = classes
    .filter((c) => c.spec?.controller === options.ingressControllerName && c.metadata?.annotations?.[defaultClassAnnotation] === 'true')
    .map((c) => c.metadata?.name ?? '')
    .sort()[0];
  return {
    claim(ingress) {
      const className = ingress.spec?.ingressClassName;
      if (className) {
        const controller = controllerOf.get(className);
        if (controller === undefined) return className === options.ingressClassName ? `ingressClassName ${className}` : undefined;
        return controller === options.ingressControllerName ? `IngressClass ${className} (controller ${controller})` : undefined;
      }
      const annotation = ingress.metadata?.annotations?.[legacyClassAnnotation];
      if (annotation !== undefined) return annotation === options.ingressClassName ? `annotation ${legacyClassAnnotation}: ${annotation}` : undefined;
      return defaultClass !== undefined ? `default IngressClass ${defaultClass}` : undefined;
    },
  };
}

/**
 * loopbackService is the YAML of a Service `name` (port 80, named http) in namespace default and
 * its EndpointSlice sending it to 127.0.0.1:`port`: a test backend on loopback, as `tuna run`
 * reads manifests. Each document starts with `---`, so it can follow any other.
 */
export function loopbackService(name: string, port: number): string {
  return `---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}-1, namespace: default, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
ports: [{name: http, port: ${port}}]
endpoints: [{addresses: ["127.0.0.1"]}]
`;
}

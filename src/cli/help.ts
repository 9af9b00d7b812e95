import { agentFlagsHelp } from './agent-options.js';
import { logFlagsHelp } from './log.js';
import { inspectFlagsHelp } from './inspect-options.js';
import { accessLogFlagsHelp } from './access-log-options.js';
import { traceFlagsHelp } from './trace-options.js';
import { policyFlagsHelp } from './policy-flags.js';
import { accountsHelp, edgeInitHelp, keysHelp, releaseHelp, reserveHelp, statusHelp } from './control-help.js';
import { edgeKeyHelp } from './commands/edge-key.js';

/** Help texts of every command (`tuna <command> --help`). */

/** mainHelp is `tuna --help`. */
export const mainHelp = `tuna — publish local services through an outbound HTTP/2 tunnel to a tuna edge

Usage: tuna <command> [options]

Commands:
  http <port|url>        publish a local HTTP server under a hostname
  tcp <port>             publish a local TCP port on a port of the edge
  udp <port>             publish a local UDP port on a port of the edge
  run --manifests DIR    publish what Ingress/HTTPRoute/Gateway/Service/EndpointSlice files describe
  operator --edge ADDR   run in a cluster: publish what its Ingress/Gateway/Service objects describe
  edge --config FILE     run an edge relay
  edge init --store URL  create an edge store's first account and admin API key
  demo                   run an edge, two sample backends and an Ingress on loopback

Control plane (the edge's control API, --edge URL and --api-key):
  accounts create|list|disable            the edge's accounts (admin key)
  keys create|list|revoke                 account API keys and tunnel keys (--tunnel)
  reserve domain|tcp|address|list         reserve a hostname, a TCP port or an IP address
  release <domain|tcp|address> <id|value> release a reservation (its tunnel keys are revoked)
  status [--kubeconfig FILE]              every binding: addresses, sources, tunnels, held-back reasons

Run tuna <command> --help for a command's options; tuna --version prints the version.`;

/** commandHelp holds each command's --help. */
export const commandHelp: Record<string, string> = {
  http: `Usage: tuna http <port|url> [--host NAME] [options]

Publish a local HTTP server. <port> means http://127.0.0.1:<port>; a URL may name another
host and the protocol: http:// (HTTP/1.1, WebSocket), h2c:// (HTTP/2 cleartext, gRPC) or
https:// (HTTP/2 over TLS).

Options:
  --host NAME        the public hostname (default: the edge binding's; app.localhost)
  --binding ID       the edge binding id (default binding/host/NAME)
  --no-check         do not check that something listens on the port first
  --processes N      run N agent processes for the binding, each with its own tunnel
                     connections, to use N cores (default: the core count within the
                     container's CPU limit, one when --rate-limit or an OIDC login without
                     --oidc-cookie-secret-file needs it; $TUNA_PROCESSES; the first runs
                     the inspector)
${logFlagsHelp}
${agentFlagsHelp}
${inspectFlagsHelp}
${accessLogFlagsHelp}

${traceFlagsHelp}
${policyFlagsHelp}

Example: tuna http 3000 --host app.example.com --edge edge.example.com:7443 --key-file key.txt`,
  tcp: `Usage: tuna tcp <port> [--remote-port N] [options]

Publish a local TCP port (127.0.0.1:<port>) on a TCP port of the edge.

Options:
  --remote-port N    the edge port to ask for (default 0: any port of the edge's pool)
  --binding ID       the edge binding id (default binding/tcp-port/local/tcp/<port>)
  --no-check         do not check that something listens on the port first
${logFlagsHelp}
${agentFlagsHelp}`,
  udp: `Usage: tuna udp <port> [--remote-port N] [options]

Publish a local UDP port (127.0.0.1:<port>) on a UDP port of the edge: each public client
address:port is one flow, relayed to the local port from a socket of its own.

Options:
  --remote-port N    the edge port to ask for (default 0: any port of the edge's pool)
  --binding ID       the edge binding id (default binding/tcp-port/local/udp/<port>; store mode:
                     binding/tcp-port/<port> of the reservation, with a udp tunnel key)
  --idle-timeout MS  end a flow after MS milliseconds without a datagram (default 60000)
${logFlagsHelp}
${agentFlagsHelp}`,
  run: `Usage: tuna run --manifests DIR [--manifests DIR …] [options]

The file provider: read Ingress, HTTPRoute, GRPCRoute, Gateway, Service, EndpointSlice and
kubernetes.io/tls Secret objects from YAML or JSON files (recursively), translate them as the
operator does in a cluster, and publish the result. Files are watched: a change is applied
without reconnecting tunnels whose bindings did not change. EndpointSlices say where each
Service's endpoints listen.

Options:
  --manifests DIR    a folder of manifests (repeatable)
  --base-domain D    the edge's base domain for generated hostnames (default tuna.example)
  --once             translate, print the route graph summary and statuses, and exit
  --keys FILE        a key per binding: YAML/JSON map of hostname or binding id to key
                     (a store-mode tunnel key opens one reservation); --key, if also given,
                     is used for the bindings the file does not name
  --processes N      run N agent processes, each serving every binding with its own tunnel
                     connections (default: the core count within the container's CPU
                     limit, one when the manifests have a rate limit; $TUNA_PROCESSES)
${logFlagsHelp}
${agentFlagsHelp}
${inspectFlagsHelp}
${accessLogFlagsHelp}

${traceFlagsHelp}`,
  operator: `Usage: tuna operator --edge ADDR --key API_KEY [options]

The in-cluster operator: watch Ingress, Service (LoadBalancer, class tuna), Gateway API and
tuna.dev objects, reserve their hostnames at the edge and mint a tunnel key per binding with an
account API key of scope reservations (which cannot start tunnels itself), hold the tunnels,
serve their traffic to the Services' endpoints, and write the objects' statuses. SIGTERM drains.
Reads KUBECONFIG (or --kubeconfig), else the pod's service account. See docs/operator.md.

Options:
  --kubeconfig FILE  the cluster to watch (default: $KUBECONFIG, then in-cluster)
  --cluster-id ID    the label value marking this cluster's reservations and keys at the edge
                     (default: the uid of the kube-system namespace)
  --base-domain D    override the base domain for generated hostnames (default: the one the
                     edge reports at GET /v1/edge, asked at start)
  --no-status        do not write statuses or events (a replica that is not the writer)
  --keys-namespace NS keep the minted tunnel keys in the Secrets tuna-tunnel-keys-00…1f of NS,
                     so a restart reuses them (default $POD_NAMESPACE; unset: kept in memory)
  --secret-refresh S read the Secrets that HTTPS listeners name again every S seconds, so a
                     rotated certificate is served (default 30; 0: only when objects change)
  --health-addr A    serve /healthz, /readyz (ready once synced with its tunnels up) and
                     /metrics (Prometheus) over HTTP on A: HOST:PORT or :PORT (default: off)
  --key-connections N the connection cap of each tunnel key it mints: every replica's
                     connections, plus a surge pod's in a rolling upgrade (default 4); a
                     Gateway whose GatewayParameters set tunnelConnections gets it scaled
  --data-plane-image IMAGE run a Deployment of IMAGE (this operator's own) for each Gateway whose
                     GatewayParameters say dataPlane: Dedicated (default: none is run, and
                     such a Gateway is Programmed=False Pending)
  --data-plane-edge ADDR the edge's tunnel endpoint as those pods reach it (default: --edge)
  --data-plane-cluster-role NAME the read-only ClusterRole their ServiceAccount is bound to
                     (default tuna-data-plane, as config/rbac names it)
  --data-plane-for NS/GATEWAY be the data plane of that Gateway alone (what its Deployment
                     runs): serve its routes with the tunnel key in $TUNA_KEY,
                     $TUNA_DATA_PLANE_KEY_ID and $TUNA_DATA_PLANE_BINDING; no leader election,
                     reservation or status; needs --cluster-id and --base-domain
${logFlagsHelp}
${accessLogFlagsHelp}

${traceFlagsHelp}
${agentFlagsHelp.replace('the tunnel key, or an account key with the tunnels scope', 'an account API key with the reservations scope').replace('(default 1)', '(default 2)')}`,
  edge: `Usage: tuna edge --config FILE
       tuna edge --tunnel HOST:PORT [--http HOST:PORT] --store FILE|URL [--base-domain D]
       tuna edge --tunnel HOST:PORT [--http HOST:PORT] --bind HOST=SHA256 [--bind …]

Run an edge relay: public HTTP/HTTPS/TCP listeners and the tunnel acceptor, configured by a
YAML or JSON file (see docs/cli.md and the edge documentation), or for a quick start by flags.

Options:
  --config FILE      the edge configuration file
  --tunnel HOST:PORT the tunnel listener (agents dial it; store mode serves the control API on it)
  --http HOST:PORT   the public HTTP listener
  --store FILE|URL   store mode: a SQLite file or a postgres:// URL (then tuna edge init)
  --base-domain D    store mode: the base domain of reserved names (default localhost)
  --bind HOST=SHA256 config mode: publish HOST for the key with that digest (repeatable;
                     tuna edge key --host HOST mints a key and prints this flag)
  --workers N        worker processes sharing the listeners (default: the core count within
                     the CPU limit of a container, or the config file's \`workers\`; 1 runs the
                     edge in this process)
  --http1-forwarding spliced|per-request
                     public HTTP/1.1: one tunnel stream per connection to agents that take it
                     (spliced, the default) or one per request; overrides the file's http1Forwarding
${logFlagsHelp}
${accessLogFlagsHelp}
                            (the edge: one line per public request and per TCP/TLS connection, with
                            its binding and tunnel; HTTP/1.1 is then forwarded per request)

tuna edge init --store URL creates the first account and admin key (tuna edge init --help).
tuna edge key [--host HOST] mints a config-mode key (tuna edge key --help).`,
  'edge init': edgeInitHelp,
  'edge key': edgeKeyHelp,
  accounts: accountsHelp,
  keys: keysHelp,
  reserve: reserveHelp,
  release: releaseHelp,
  status: statusHelp,
  demo: `Usage: tuna demo [--port N]

Start, on loopback only: an edge with a key generated now, two sample backends, and an agent
publishing examples/demo (an Ingress with /api and / going to different Services) through the
same code path as tuna run. Prints the URL and a curl line; Ctrl-C stops everything.

Options:
  --port N           the edge's public HTTP port (default 0: any free port)
${logFlagsHelp}`,
};

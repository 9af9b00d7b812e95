import { controlFlagsHelp } from './control-options.js';

/** Help texts of the control-plane commands (`tuna edge init`, `accounts`, `keys`, `reserve`, `release`). */

/** edgeInitHelp is `tuna edge init --help`. */
export const edgeInitHelp = `Usage: tuna edge init --store <sqlite path | postgres:// url> [options]

Create the first account of an edge's store and an admin API key for it, working on the store
directly (the edge need not run; the store is created and migrated if new). The key is printed
once and never again: the store keeps only its hash. A store that already has an account is
refused and left unchanged (exit 73); further keys are made with tuna keys create.

Options:
  --store URL        a SQLite file path (sqlite: prefix optional) or postgres://user@host/db
  --schema NAME      PostgreSQL only: the schema the edge's tables live in
  --account NAME     the account's name (default admin)
  --key-name NAME    the admin key's name (default admin)
  --json             print JSON ({account, apiKey, token}) instead of a table`;

/** accountsHelp is `tuna accounts --help`. */
export const accountsHelp = `Usage: tuna accounts create NAME
       tuna accounts list
       tuna accounts disable ID

The edge's accounts (tenants); every command needs an API key with the admin scope. create
makes an account (give it keys with tuna keys create --account ID); list shows every account,
disabled ones too; disable switches one off: its API keys and tunnel keys are revoked and never
authenticate again, its live tunnels close, and its reservations stay held so nobody else takes
its addresses. A key cannot disable its own account. There is no enable.

${controlFlagsHelp}`;

/** keysHelp is `tuna keys --help`. */
export const keysHelp = `Usage: tuna keys create --scope SCOPE [--scope SCOPE …] [--name NAME] [--account ID]
       tuna keys create --tunnel --reservation ID --protocol PROTO [--max-connections N]
                        [--expires DURATION] [--label KEY=VALUE …]
       tuna keys list [--account ID]
       tuna keys list --tunnel [--label KEY=VALUE …]
       tuna keys revoke [--tunnel] ID

Account API keys (scopes reservations, tunnels, admin; creating, listing and revoking them needs
admin) and tunnel keys (bound to one reservation and one protocol; need reservations). A new
key is printed once, on the last line (or as "token" with --json); the edge keeps only its hash.
Revoking a tunnel key closes its live connections.

Options:
  --tunnel            act on tunnel keys instead of API keys
  --scope SCOPE       reservations, tunnels or admin (repeatable)
  --name NAME         the API key's name (default: its scopes)
  --account ID        admin only: another account's keys
  --reservation ID    the reservation a tunnel key may serve (tuna reserve list)
  --protocol PROTO    http, https, tls, tcp or udp (udp: a tcp-port reservation's UDP socket)
  --max-connections N live tunnel connections the key may hold at once (default 2)
  --expires DURATION  lifetime such as 720h, 30d or 1h30m (default 30 days, at most 365)
  --label KEY=VALUE   a label (repeatable; with list: only keys carrying it)
${controlFlagsHelp}

Example: tuna keys create --tunnel --reservation 5f0c… --protocol http --expires 720h --label cluster=prod`;

/** reserveHelp is `tuna reserve --help`. */
export const reserveHelp = `Usage: tuna reserve domain HOSTNAME [--name NAME] [--label KEY=VALUE …]
       tuna reserve tcp [PORT] [--name NAME] [--label KEY=VALUE …]
       tuna reserve address [IP] [--name NAME] [--label KEY=VALUE …]
       tuna reserve list [--label KEY=VALUE …]
       tuna reserve verify HOSTNAME|ID

Reserve a public address on the edge for this account (needs the reservations scope): a
subdomain of the edge's base domain (<name>.<base>, ready at once) or a custom domain (proved by a
DNS TXT record _tuna-challenge.<host>; the value is printed; then tuna reserve verify), a TCP port (a given one, or any free
port of the edge's pool), or a dedicated IP address (given, or from the pool). Reserving what the
account already holds adopts it (RESULT adopted); --name makes pool allocations idempotent.

Options:
  --name NAME         a per-account name: the same name returns the same pool port or address
  --label KEY=VALUE   a label (repeatable; with list: only reservations carrying it)
${controlFlagsHelp}`;

/** releaseHelp is `tuna release --help`. */
export const releaseHelp = `Usage: tuna release <domain|tcp|address> <ID|VALUE>
       tuna release --cluster-id ID [--settle SECONDS]

Release a reservation of this account, by its id or its value (a hostname, a port, an IP
address). Every tunnel key bound to it is revoked with it and its tunnels are closed.

With --cluster-id, release every reservation and revoke every tunnel key the operator of that
cluster made (label tuna.dev/cluster=ID), in passes until none appears for --settle seconds
(default 10): what the chart's uninstall hook runs while the operator pods stop. The
reservation of a Domain or TCPPort with reclaimPolicy Retain is kept for the account: its keys
are revoked and it is relabelled tuna.dev/retained-from=ID.

${controlFlagsHelp}`;

/** statusHelp is `tuna status --help`. */
export const statusHelp = `Usage: tuna status [--edge URL --api-key KEY] [-o table|json]
       tuna status --kubeconfig FILE [--context NAME] --base-domain DOMAIN [-o table|json]

Print every binding: its public addresses, what it came from, its live tunnel connections and the
edge they go to, why it is held back, when its certificate and its tunnel key expire where that is
known, and its last error. Only what the source says is printed; TUNNELS is ? where it is unknown.

The edge's view (--edge, or $TUNA_EDGE): the reservations of the key's account with their
listeners and tunnel keys, from the control API; the live tunnels from the edge's /metrics,
which a store-mode edge serves to an admin API key only (else pass --metrics URL of its
listen.metrics listener, or the tunnels stay unknown).

The cluster's view (--kubeconfig or --context): the objects the operator watches, translated as
the operator translates them, with the conditions and Warning events the operator wrote on them
and the expiry of the in-cluster TLS certificates they name. Tunnels are not in the cluster.

Options:
  -o, --output FORMAT  table (default) or json (--json is the same as -o json)
  --metrics URL        the edge's metrics listener, e.g. http://10.0.0.5:9090 (edge view)
  --kubeconfig FILE    read the cluster of this kubeconfig (default: $KUBECONFIG)
  --context NAME       the kubeconfig context (default: its current one)
  --base-domain NAME   the edge's base domain: the hostnames tuna generates end in it (cluster view)

${controlFlagsHelp}`;

{{/* tuna-edge.name is the chart's name (nameOverride). */}}
{{- define "tuna-edge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* tuna-edge.fullname names the release's objects: <release>-edge, or <release> when it contains "edge". */}}
{{- define "tuna-edge.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "edge" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-edge" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* tuna-edge.selectorLabels select the edge's pods; they never change across upgrades. */}}
{{- define "tuna-edge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tuna-edge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: edge
{{- end -}}

{{/* tuna-edge.labels go on every object of the release. */}}
{{- define "tuna-edge.labels" -}}
{{ include "tuna-edge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* tuna-edge.isPostgres: the store is PostgreSQL (store.postgres.url), else SQLite on the volume. */}}
{{- define "tuna-edge.isPostgres" -}}
{{- if .Values.store.postgres.url -}}true{{- end -}}
{{- end -}}

{{/*
tuna-edge.claimName is the PersistentVolumeClaim of /var/lib/tuna, or empty (an emptyDir): the
chart's own claim only for SQLite (with PostgreSQL several pods would share a ReadWriteOnce claim;
there the volume holds only the ACME account key, so it is an emptyDir unless existingClaim names one).
*/}}
{{- define "tuna-edge.claimName" -}}
{{- if and .Values.persistence.enabled .Values.persistence.existingClaim -}}
{{- .Values.persistence.existingClaim -}}
{{- else if and .Values.persistence.enabled (not .Values.store.postgres.url) -}}
{{- printf "%s-data" (include "tuna-edge.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
tuna-edge.check fails `helm template` with a message naming the value, for the rules the schema
cannot say: replicas > 1 need PostgreSQL (a SQLite file has one writer), the tunnel listener needs
TLS unless plaintext is asked for, the password belongs in a Secret, ACME needs HTTPS.
*/}}
{{- define "tuna-edge.check" -}}
{{- if not .Values.baseDomain -}}
{{- fail "baseDomain is required: the domain whose subdomains are reservations (<name>.<baseDomain>), e.g. --set baseDomain=tuna.example.com" -}}
{{- end -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.store.postgres.url) -}}
{{- fail (printf "replicas: %d edge pods need a shared store: set store.postgres.url (SQLite is one file with one writer; keep replicas at 1 with it)" (int .Values.replicas)) -}}
{{- end -}}
{{- if and (not .Values.tls.tunnel.secretName) (not .Values.tls.tunnel.insecurePlaintext) -}}
{{- fail "tls.tunnel.secretName is required: a kubernetes.io/tls Secret for the tunnel listener (agents send their keys over it); tls.tunnel.insecurePlaintext=true serves it in plaintext, for loopback tests only" -}}
{{- end -}}
{{- if regexMatch "^postgres(ql)?://[^/@]*:[^/@]*@" .Values.store.postgres.url -}}
{{- fail "store.postgres.url holds a password: the URL goes into a ConfigMap; put the password in a Secret and name it in store.postgres.passwordSecret" -}}
{{- end -}}
{{- if not (or .Values.listen.http.enabled .Values.listen.https.enabled) -}}
{{- fail "listen: enable listen.http or listen.https (or both): the edge needs a public listener" -}}
{{- end -}}
{{- if and .Values.acme.enabled (not .Values.listen.https.enabled) -}}
{{- fail "acme.enabled needs listen.https.enabled: TLS-ALPN-01 is answered on the HTTPS listener" -}}
{{- end -}}
{{- if and .Values.service.public.portPoolPorts (not .Values.store.portPool.first) -}}
{{- fail "service.public.portPoolPorts needs store.portPool {first, last}" -}}
{{- end -}}
{{- if and .Values.service.public.portPoolPorts (gt (int (sub (int .Values.store.portPool.last) (int .Values.store.portPool.first))) 99) -}}
{{- fail "service.public.portPoolPorts: store.portPool holds more than 100 ports; a Service lists each port, so keep the pool to 100 or publish it another way" -}}
{{- end -}}
{{- end -}}

{{/* tuna-edge.config is the edge's config file (src/edge/config.ts), as YAML. */}}
{{- define "tuna-edge.config" -}}
{{- $tunnel := dict "host" "0.0.0.0" "port" (int .Values.listen.tunnel.port) -}}
{{- if .Values.tls.tunnel.secretName -}}
{{- $_ := set $tunnel "tls" (dict "certFile" "/etc/tuna/tls/tunnel/tls.crt" "keyFile" "/etc/tuna/tls/tunnel/tls.key") -}}
{{- end -}}
{{- $listen := dict "tunnel" $tunnel "metrics" (dict "host" "0.0.0.0" "port" (int .Values.listen.metrics.port)) -}}
{{- if .Values.listen.http.enabled -}}
{{- $_ := set $listen "http" (dict "host" "0.0.0.0" "port" (int .Values.listen.http.port)) -}}
{{- end -}}
{{- if .Values.listen.https.enabled -}}
{{- $_ := set $listen "https" (dict "host" "0.0.0.0" "port" (int .Values.listen.https.port)) -}}
{{- end -}}
{{- $store := dict "baseDomain" .Values.baseDomain "pollMs" (int .Values.store.pollMs) "unverifiedDomainDays" (int .Values.store.unverifiedDomainDays) -}}
{{- if .Values.store.postgres.url -}}
{{- $_ := set $store "url" .Values.store.postgres.url -}}
{{- with .Values.store.postgres.schema }}{{ $_ := set $store "schema" . }}{{ end -}}
{{- else -}}
{{- $_ := set $store "url" "/var/lib/tuna/edge.db" -}}
{{- end -}}
{{- with .Values.store.portPool -}}
{{- $_ := set $store "portPool" (dict "first" (int .first) "last" (int .last)) -}}
{{- end -}}
{{- with .Values.store.addressPool }}{{ $_ := set $store "addressPool" . }}{{ end -}}
{{- with .Values.store.addressPorts }}{{ $_ := set $store "addressPorts" . }}{{ end -}}
{{- with .Values.store.addressPortRange -}}
{{- $_ := set $store "addressPortRange" (dict "first" (int .first) "last" (int .last)) -}}
{{- end -}}
{{- with .Values.store.quotas }}{{ $_ := set $store "quotas" . }}{{ end -}}
{{- with .Values.store.dnsServers }}{{ $_ := set $store "dnsServers" . }}{{ end -}}
{{- $config := dict "listen" $listen "store" $store -}}
{{- with .Values.limits }}{{ $_ := set $config "limits" . }}{{ end -}}
{{- $certs := list -}}
{{- range .Values.tls.certificates -}}
{{- $certs = append $certs (dict "hostnames" .hostnames "certFile" (printf "/etc/tuna/tls/%s/tls.crt" .secretName) "keyFile" (printf "/etc/tuna/tls/%s/tls.key" .secretName)) -}}
{{- end -}}
{{- with $certs }}{{ $_ := set $config "certificates" . }}{{ end -}}
{{- if .Values.acme.enabled -}}
{{- $acme := dict "directoryUrl" .Values.acme.directoryUrl "accountKeyFile" "/var/lib/tuna/acme-account.pem" -}}
{{- with .Values.acme.contact }}{{ $_ := set $acme "contact" . }}{{ end -}}
{{- $_ := set $config "acme" $acme -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}


{{/* tuna-edge.metricsLabel marks the metrics Service: what the ServiceMonitor selects (the tunnel and public Services select the same pods). */}}
{{- define "tuna-edge.metricsLabel" -}}
tuna.dev/metrics: "true"
{{- end -}}

{{/* tuna-edge.alertSelector is the label matchers every alert's series carry: alerts.selector, or this release's namespace. */}}
{{- define "tuna-edge.alertSelector" -}}
{{- .Values.alerts.selector | default (printf "namespace=%q" .Release.Namespace) -}}
{{- end -}}

{{/* tuna-edge.runbook is the annotations pointing an alert at its runbook in docs/observability.md (argument: list of the root context and the alert name). */}}
{{- define "tuna-edge.runbook" -}}
{{- $root := index . 0 -}}
{{- $alert := index . 1 -}}
runbook: {{ printf "docs/observability.md#%s (the tuna repository): what %s means, how to find the cause, what to do" (lower $alert) $alert | quote }}
{{- with $root.Values.alerts.runbookBaseUrl }}
runbook_url: {{ printf "%s#%s" (trimSuffix "/" .) (lower $alert) | quote }}
{{- end }}
{{- end -}}

{{/* tuna.name is the chart's name (nameOverride). */}}
{{- define "tuna.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* tuna.fullname names the release's objects: <release>-operator (release "tuna": tuna-operator, as config/rbac). */}}
{{- define "tuna.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "operator" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* tuna.selectorLabels select the operator's pods; they never change across upgrades. */}}
{{- define "tuna.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tuna.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{/* tuna.labels go on every object of the release. */}}
{{- define "tuna.labels" -}}
{{ include "tuna.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* tuna.serviceAccountName is the operator's ServiceAccount. */}}
{{- define "tuna.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tuna.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* tuna.credentialsSecret is the Secret holding the API key: existingSecret, else the chart's own. */}}
{{- define "tuna.credentialsSecret" -}}
{{- if .Values.credentials.existingSecret -}}
{{- .Values.credentials.existingSecret -}}
{{- else if .Values.credentials.apiKey -}}
{{- printf "%s-credentials" (include "tuna.fullname" .) -}}
{{- else -}}
{{- fail "credentials: set credentials.apiKey (an account API key of scope reservations, tuna_ak_…) or credentials.existingSecret (a Secret holding one)" -}}
{{- end -}}
{{- end -}}

{{/* tuna.caConfigMap is the ConfigMap holding the edge's CA bundle, or empty. */}}
{{- define "tuna.caConfigMap" -}}
{{- if .Values.edge.caBundleConfigMap -}}
{{- .Values.edge.caBundleConfigMap -}}
{{- else if .Values.edge.caBundle -}}
{{- printf "%s-edge-ca" (include "tuna.fullname" .) -}}
{{- end -}}
{{- end -}}


{{/* tuna.metricsLabel marks the metrics Service: what the ServiceMonitor selects. */}}
{{- define "tuna.metricsLabel" -}}
tuna.dev/metrics: "true"
{{- end -}}

{{/*
tuna.alertSelector is the label matchers every alert's series carry: alerts.selector, or this
release's namespace (the ServiceMonitor and PodMonitor scrape with it).
*/}}
{{- define "tuna.alertSelector" -}}
{{- .Values.alerts.selector | default (printf "namespace=%q" .Release.Namespace) -}}
{{- end -}}

{{/* tuna.runbook is the annotations pointing an alert at its runbook in docs/observability.md (argument: list of the root context and the alert name). */}}
{{- define "tuna.runbook" -}}
{{- $root := index . 0 -}}
{{- $alert := index . 1 -}}
runbook: {{ printf "docs/observability.md#%s (the tuna repository): what %s means, how to find the cause, what to do" (lower $alert) $alert | quote }}
{{- with $root.Values.alerts.runbookBaseUrl }}
runbook_url: {{ printf "%s#%s" (trimSuffix "/" .) (lower $alert) | quote }}
{{- end }}
{{- end -}}

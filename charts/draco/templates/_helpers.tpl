{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "draco.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: fullnameOverride, else release name (plus chart name unless the
release name already contains it). */}}
{{- define "draco.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Namespace everything namespaced is installed into. */}}
{{- define "draco.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Namespace of draco's leader-election Lease. */}}
{{- define "draco.leaseNamespace" -}}
{{- default (include "draco.namespace" .) .Values.leaderElection.namespace }}
{{- end }}

{{/* The Lease draco takes for leader election (leaderElection.leaseName): both the
--leader-elect-lease-name flag and the Role's resourceNames, so the two never disagree. */}}
{{- define "draco.leaseName" -}}
{{- .Values.leaderElection.leaseName | default "draco" }}
{{- end }}

{{/* The scheduling gate draco removes once a pod's claims are allocated. Fixed in draco. */}}
{{- define "draco.schedulingGate" -}}
draco.dev/allocation
{{- end }}

{{- define "draco.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "draco.labels" -}}
helm.sh/chart: {{ include "draco.chart" . }}
{{ include "draco.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: draco
{{- end }}

{{/* Labels that select the controller pods; must never change between upgrades. */}}
{{- define "draco.selectorLabels" -}}
app.kubernetes.io/name: {{ include "draco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "draco.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "draco.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create=false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Container image reference; a digest wins over a tag. */}}
{{- define "draco.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* "true" when .Capabilities are helm's built-in defaults (helm template without a cluster), which
list every API client-go knows, including apps/v1beta1 that no Kubernetes >= 1.16 serves; "" when
they come from a live cluster's discovery. */}}
{{- define "draco.clientOnlyCapabilities" -}}
{{- if .Capabilities.APIVersions.Has "apps/v1beta1" }}true{{ end }}
{{- end }}

{{/* API version for MutatingAdmissionPolicy: the override, else the newest version the cluster
serves (discovery), else, for helm template without a cluster, v1 when the target Kubernetes
version is 1.36 or newer (GA and on by default there; the 1.34/1.35 beta is off by default), else
"" (no policy API: auto mode then uses the webhook). */}}
{{- define "draco.admissionApiVersion" -}}
{{- if .Values.admission.apiVersion }}
{{- .Values.admission.apiVersion }}
{{- else if include "draco.clientOnlyCapabilities" . }}
{{- if semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version }}
{{- "admissionregistration.k8s.io/v1" }}
{{- end }}
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy" }}
{{- "admissionregistration.k8s.io/v1" }}
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy" }}
{{- "admissionregistration.k8s.io/v1beta1" }}
{{- end }}
{{- end }}

{{/* How pods get draco's scheduling gate: "policy" (MutatingAdmissionPolicy) or "webhook" (a
MutatingWebhookConfiguration calling draco). admission.mode auto picks policy where a policy API
is served (draco.admissionApiVersion) and the webhook otherwise. */}}
{{- define "draco.admissionMode" -}}
{{- if eq .Values.admission.mode "auto" }}
{{- if include "draco.admissionApiVersion" . }}policy{{ else }}webhook{{ end }}
{{- else }}
{{- .Values.admission.mode }}
{{- end }}
{{- end }}

{{/* The gated namespaces as namespaceSelectors, one per way of selecting them (all, names,
selector), each also excluding excludeNames; a YAML list of {suffix, selector}. The policy's
bindings and the webhook configuration's webhooks are rendered from this one list, so both select
exactly the same namespaces. */}}
{{- define "draco.gateSelectors" -}}
{{- $g := .Values.admission.gatedNamespaces }}
{{- $bindings := list }}
{{- if $g.all }}
{{- $bindings = append $bindings (dict "suffix" "all" "selector" (dict)) }}
{{- end }}
{{- if $g.names }}
{{- $bindings = append $bindings (dict "suffix" "names" "selector" (dict "matchExpressions" (list (dict "key" "kubernetes.io/metadata.name" "operator" "In" "values" $g.names)))) }}
{{- end }}
{{- if $g.selector }}
{{- $bindings = append $bindings (dict "suffix" "selector" "selector" $g.selector) }}
{{- end }}
{{- $out := list }}
{{- range $bindings }}
{{- $sel := deepCopy .selector }}
{{- if $g.excludeNames }}
{{- $exprs := concat (default (list) $sel.matchExpressions) (list (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" $g.excludeNames)) }}
{{- $_ := set $sel "matchExpressions" $exprs }}
{{- end }}
{{- $out = append $out (dict "suffix" .suffix "selector" $sel) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* "true" when draco serves the admission webhook (admission enabled in webhook mode). */}}
{{- define "draco.webhookEnabled" -}}
{{- and .Values.admission.enabled (eq (include "draco.admissionMode" .) "webhook") }}
{{- end }}

{{/* "true" when cert-manager issues the webhook's certificate (admission.webhook.certManager in
webhook mode): draco then reads the mounted Secret and writes neither it nor the caBundle. */}}
{{- define "draco.webhookCertManager" -}}
{{- and (eq (include "draco.webhookEnabled" .) "true") .Values.admission.webhook.certManager.enabled }}
{{- end }}

{{/* "true" when the gate covers extended-resource pods: admission.extendedResources.enabled true,
or "auto" in policy mode (draco's webhook gates spec.resourceClaims only). */}}
{{- define "draco.extendedResourcesGated" -}}
{{- $e := .Values.admission.extendedResources.enabled }}
{{- if kindIs "string" $e }}
{{- and (eq $e "auto") (ne (include "draco.admissionMode" .) "webhook") }}
{{- else }}
{{- ternary "true" "false" (eq (toString $e) "true") }}
{{- end }}
{{- end }}

{{/* The per-pod gate conditions (CEL matchConditions) shared by the policy and the webhook. */}}
{{- define "draco.gateConditions" -}}
{{- $conds := .Files.Get "files/gate-conditions.yaml" }}
{{- $ext := .Values.admission.extendedResources }}
{{- if eq (include "draco.extendedResourcesGated" .) "true" }}
{{- if eq (include "draco.admissionMode" .) "webhook" }}
{{- fail "admission.extendedResources.enabled needs the MutatingAdmissionPolicy (admission.mode policy: Kubernetes 1.36+, or 1.34/1.35 with admissionregistration.k8s.io/v1beta1 enabled); draco's webhook gates pods with spec.resourceClaims only" }}
{{- end }}
{{- /* Pods whose containers ask for an extended resource a DeviceClass serves (KEP-5004). Requests:
       the API server has already defaulted them from limits. */}}
{{- $names := list }}
{{- range $ext.resourceNames }}{{ $names = append $names . }}{{ end }}
{{- range .Values.deviceClasses }}{{ with .extendedResourceName }}{{ $names = append $names . }}{{ end }}{{ end }}
{{- $asks := printf "has(c.resources) && has(c.resources.requests) && c.resources.requests.exists(r, r in %s || r.startsWith(\"deviceclass.resource.kubernetes.io/\"))" ($names | uniq | toJson) }}
{{- $expr := printf "expression: >-\n    (has(object.spec.resourceClaims) && size(object.spec.resourceClaims) > 0) ||\n    object.spec.containers.exists(c, %s) ||\n    (has(object.spec.initContainers) && object.spec.initContainers.exists(c, %s))" $asks $asks }}
{{- $conds = replace "expression: has(object.spec.resourceClaims) && size(object.spec.resourceClaims) > 0" $expr $conds }}
{{- end }}
{{- $conds }}
{{- end }}

{{/* The webhook's Service, Secret and the hosts its serving certificate covers. */}}
{{- define "draco.webhookServiceName" -}}
{{- printf "%s-webhook" (include "draco.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "draco.webhookSecretName" -}}
{{- printf "%s-webhook-tls" (include "draco.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "draco.webhookCertHosts" -}}
{{- $svc := include "draco.webhookServiceName" . }}
{{- $ns := include "draco.namespace" . }}
{{- $hosts := list (printf "%s.%s.svc" $svc $ns) $svc (printf "%s.%s" $svc $ns) }}
{{- join "," (concat $hosts .Values.admission.webhook.extraCertHosts) }}
{{- end }}

{{/* Name of the admission policy and its bindings (cluster-scoped, so release-qualified). */}}
{{- define "draco.admissionPolicyName" -}}
{{- printf "%s-scheduling-gate" (include "draco.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

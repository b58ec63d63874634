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

{{/* The Lease draco takes for leader election. draco's lease name is fixed ("draco"); the
Role grants get/update on exactly this name. */}}
{{- define "draco.leaseName" -}}
draco
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

{{/* API version for MutatingAdmissionPolicy: the override, else the newest version the cluster
serves (discovery), else v1 when the target Kubernetes version is 1.36 or newer (helm template
without a cluster), else "" (validation.yaml then fails with an explanation). */}}
{{- define "draco.admissionApiVersion" -}}
{{- if .Values.admission.apiVersion }}
{{- .Values.admission.apiVersion }}
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy" }}
{{- "admissionregistration.k8s.io/v1" }}
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy" }}
{{- "admissionregistration.k8s.io/v1beta1" }}
{{- else if semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version }}
{{- "admissionregistration.k8s.io/v1" }}
{{- end }}
{{- end }}

{{/* Name of the admission policy and its bindings (cluster-scoped, so release-qualified). */}}
{{- define "draco.admissionPolicyName" -}}
{{- printf "%s-scheduling-gate" (include "draco.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

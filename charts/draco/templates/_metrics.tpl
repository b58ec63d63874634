{{/*
The metrics Service's port name: "https-metrics" when draco serves /metrics over HTTPS with
authentication and authorization (metrics.secure), else "metrics" (plain HTTP).
*/}}
{{- define "draco.metricsPortName" -}}
{{- if .Values.metrics.secure }}https-metrics{{ else }}metrics{{ end }}
{{- end }}

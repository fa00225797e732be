{{/* The chart's name. */}}
{{- define "storagebench.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every object's name: the release name, or release-chart when
the release name does not contain the chart's name. Release "storagebench"
gives the names `make deploy` uses (storagebench-manager, ...).
*/}}
{{- define "storagebench.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "storagebench.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "storagebench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The manager pods' selector. */}}
{{- define "storagebench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "storagebench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/* The manager's ServiceAccount. */}}
{{- define "storagebench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-manager" (include "storagebench.fullname" .)) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository:tag of an image value; the tag defaults to appVersion. */}}
{{- define "storagebench.image" -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .chart.AppVersion | toString) -}}
{{- end -}}

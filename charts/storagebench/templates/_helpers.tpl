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

{{/*
Fails on policy values the manager would read differently from the
admission policy: its flags are comma-separated lists (spaces separate
too), and images are exact references ("*" allows any key only).
*/}}
{{- define "storagebench.checkPolicy" -}}
{{- range $value, $items := dict "policy.allowedRunnerImages" .Values.policy.allowedRunnerImages "policy.allowedTolerationKeys" .Values.policy.allowedTolerationKeys "policy.allowedNodeSelectorKeys" .Values.policy.allowedNodeSelectorKeys }}
{{- range $items }}
{{- if not (kindIs "string" .) }}
{{- fail (printf "%s: %v is not a string" $value .) }}
{{- end }}
{{- if or (eq . "") (regexMatch "[,\\s]" .) }}
{{- fail (printf "%s: %q: an item may not be empty or contain a comma or a space" $value .) }}
{{- end }}
{{- if and (eq $value "policy.allowedRunnerImages") (contains "*" .) }}
{{- fail (printf "%s: %q: list exact image references; wildcards are not supported" $value .) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The cluster-scoped resources (any API group) the manager's rules may name;
every other resource is namespaced. Kubernetes' own, as
`kubectl api-resources --namespaced=false` lists them.
*/}}
{{- define "storagebench.clusterScopedResources" -}}
- apiservices
- certificatesigningrequests
- clusterrolebindings
- clusterroles
- componentstatuses
- csidrivers
- csinodes
- customresourcedefinitions
- flowschemas
- ingressclasses
- mutatingwebhookconfigurations
- namespaces
- nodes
- persistentvolumes
- priorityclasses
- prioritylevelconfigurations
- runtimeclasses
- selfsubjectaccessreviews
- selfsubjectreviews
- selfsubjectrulesreviews
- storageclasses
- subjectaccessreviews
- tokenreviews
- validatingadmissionpolicies
- validatingadmissionpolicybindings
- validatingwebhookconfigurations
- volumeattachments
- volumesnapshotclasses
{{- end -}}

{{/*
The --backend-metrics-classes file, when there is a source and classes to
read through it; empty otherwise.
*/}}
{{- define "storagebench.backendClasses" -}}
{{- if and .Values.backendMetrics.prometheusURL .Values.backendMetrics.classes -}}
{{- dict "classes" .Values.backendMetrics.classes | toYaml -}}
{{- end -}}
{{- end -}}

{{- /*
Monitoring shipped with the module, written by the monitoring engineer as
plain files:
  monitoring/prometheus-rules/<name>.yaml      a list of rule groups (or a map with `groups`)
  monitoring/grafana-dashboards/<folder>/<name>.json   one Grafana dashboard

The two helpers carry the names and call shapes of Deckhouse's helm_lib
(deckhouse_lib_helm), which this module does not vendor: templates/monitoring.yaml
reads as in every Deckhouse module (dmt's prometheus-rules and
grafana-dashboards rules expect exactly these includes), and if helm_lib is
ever vendored, the parent chart's defines here still win over the library's.
*/}}

{{- /* Usage: include "helm_lib_prometheus_rules" (list . <namespace>) */}}
{{- define "helm_lib_prometheus_rules" }}
{{- $ctx := index . 0 }}
{{- $namespace := index . 1 }}
{{- /* As lib-helm: only when Deckhouse's operator-prometheus-crd module
provides the PrometheusRule CRD (deckhouse/lib-helm
charts/helm_lib/templates/_monitoring_prometheus_rules.tpl); without it the
release would fail on an unknown kind. */}}
{{- if has "operator-prometheus-crd" ($ctx.Values.global.enabledModules | default list) }}
{{- /* With Deckhouse's observability module on and its API served, lib-helm
emits each rule group as a ClusterObservabilityMetricsRulesGroup instead of
a PrometheusRule (_monitoring_prometheus_rules.tpl at deckhouse/lib-helm
29c379e): the observability module then owns the rules, as every other
module's. */}}
{{- $observability := and (has "observability" ($ctx.Values.global.enabledModules | default list))
      (has "observability.deckhouse.io/v1alpha1/ClusterObservabilityMetricsRulesGroup" (dig "discovery" "apiVersions" list ($ctx.Values.global | default dict))) }}
{{- range $path, $_ := $ctx.Files.Glob "monitoring/prometheus-rules/*.yaml" }}
{{- $content := $ctx.Files.Get $path }}
{{- $doc := fromYaml $content }}
{{- $groups := list }}
{{- if hasKey $doc "groups" }}
{{- $groups = $doc.groups }}
{{- else }}
{{- $groups = fromYamlArray $content }}
{{- end }}
{{- /* As lib-helm: a rule annotated d8_ignore_on_update: "true" stays
silent while Deckhouse updates itself (d8_is_updating). */}}
{{- range $group := $groups }}
{{- range $rule := ($group.rules | default list) }}
{{- if eq (toString (dig "annotations" "d8_ignore_on_update" "" $rule)) "true" }}
{{- $_ := set $rule "expr" (printf "(%s) and ON() ((max(d8_is_updating) != 1) or ON() absent(d8_is_updating))" $rule.expr) }}
{{- end }}
{{- end }}
{{- end }}
{{- $name := printf "managed-starrocks-%s" (base $path | trimSuffix ".yaml") }}
{{- if $observability }}
{{- range $idx, $group := $groups }}
{{- if $group.rules }}
---
apiVersion: observability.deckhouse.io/v1alpha1
kind: ClusterObservabilityMetricsRulesGroup
metadata:
  name: {{ printf "%s-%d" $name $idx | quote }}
  labels:
    {{- include "ms.moduleLabels" $ctx | nindent 4 }}
    app: prometheus
    prometheus: main
    component: rules
spec:
  {{- toYaml (omit $group "name") | nindent 2 }}
{{- end }}
{{- end }}
{{- else }}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ $name | quote }}
  namespace: {{ $namespace | quote }}
  labels:
    {{- include "ms.moduleLabels" $ctx | nindent 4 }}
    prometheus: main
    component: rules
spec:
  groups:
    {{- toYaml $groups | nindent 4 }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Usage: include "helm_lib_grafana_dashboard_definitions" . */}}
{{- define "helm_lib_grafana_dashboard_definitions" }}
{{- $ctx := . }}
{{- /* As lib-helm: only when the prometheus-crd module provides the
GrafanaDashboardDefinition CRD (_monitoring_grafana_dashboards.tpl). */}}
{{- if has "prometheus-crd" ($ctx.Values.global.enabledModules | default list) }}
{{- range $path, $_ := $ctx.Files.Glob "monitoring/grafana-dashboards/**.json" }}
{{- $rel := trimPrefix "monitoring/grafana-dashboards/" $path }}
{{- $dir := dir $rel }}
{{- $folder := ternary "Managed services" ($dir | replace "-" " " | title) (eq $dir ".") }}
{{- $slug := $rel | trimSuffix ".json" | replace "/" "-" | replace "_" "-" | lower }}
---
apiVersion: deckhouse.io/v1
kind: GrafanaDashboardDefinition
metadata:
  name: {{ printf "d8-managed-starrocks-%s" $slug | quote }}
  labels:
    {{- include "ms.moduleLabels" $ctx | nindent 4 }}
    prometheus.deckhouse.io/grafana-dashboard: ""
    {{- /* lib-helm's label: the observability module does not convert this
    definition, it gets the ClusterObservabilityDashboard below instead. */}}
    observability.deckhouse.io/skip-dashboard-conversion: ""
spec:
  folder: {{ $folder | quote }}
  definition: {{ $ctx.Files.Get $path | quote }}
{{- /* With the observability module on, lib-helm's helm_lib_single_dashboard
also emits the dashboard for its UI (_monitoring_grafana_dashboards.tpl at
deckhouse/lib-helm 29c379e). */}}
{{- if has "observability" ($ctx.Values.global.enabledModules | default list) }}
---
apiVersion: observability.deckhouse.io/v1alpha1
kind: ClusterObservabilityDashboard
metadata:
  name: {{ printf "d8-managed-starrocks-%s" $slug | quote }}
  annotations:
    metadata.deckhouse.io/category: {{ $folder | quote }}
  labels:
    {{- include "ms.moduleLabels" $ctx | nindent 4 }}
    observability.deckhouse.io/dashboard-origin: module
spec:
  definition: {{ $ctx.Files.Get $path | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

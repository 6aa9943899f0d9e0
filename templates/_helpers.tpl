{{- /*
Helper library of the module. No chart dependency: everything the templates
share is defined here so rendering never fetches anything.

Every value is emitted quoted (`| quote`) or JSON/YAML-encoded (`toJson`,
`toYaml` of a structure), never raw: instance values carry strings a tenant
wrote, and a raw one could end a YAML scalar and start an object of its own.
openapi/values.yaml constrains those strings as well; the quoting holds even
for an entry that slipped past it.
*/ -}}

{{- /* Labels every object of the module carries (Deckhouse convention). */ -}}
{{- define "ms.moduleLabels" -}}
heritage: deckhouse
module: managed-starrocks
{{- end }}

{{- /* Labels of the module's own components. Argument: component name. */ -}}
{{- define "ms.componentLabels" -}}
heritage: deckhouse
{{ include "ms.componentPodLabels" . }}
{{- end }}

{{- /* Labels of a component's pod template: ms.componentLabels without
heritage: deckhouse. Deckhouse's admission policy label-objects.deckhouse.io
lets only Deckhouse's own service accounts create or update objects with that
label, and the pods are created by the ReplicaSet controller. Argument:
component name. */ -}}
{{- define "ms.componentPodLabels" -}}
module: managed-starrocks
app: {{ . | quote }}
app.kubernetes.io/name: {{ . | quote }}
app.kubernetes.io/part-of: managed-starrocks
{{- end }}

{{- /*
Repository of the module's images, as lib-helm's helm_lib_module_image
computes it (deckhouse/lib-helm charts/helm_lib/templates/_module_image.tpl,
"handle external modules registry"): Deckhouse gives an external module its
ModuleSource's registry as .Values.managedStarrocks.registry (base,
dockercfg, scheme, ca), and the images are <base>/managed-starrocks;
without it, the platform's global.modulesImages.registry.base. The hooks
compute the same for the instance pods (pkg/instanceobjects
ImageRepository); dev/chartrender TestImagesComeFromTheModulesRegistry holds
the two equal. The module vendors no lib-helm (no chart dependencies, see
above); checked against lib-helm deckhouse_lib_helm-1.71.11, whose helper
first tries a newer source, .Module.Package (Registry.repository/Name),
which the Deckhouse versions this module requires do not provide to charts
as far as the sources read here show: not followed.
It returns a bare string (the platform's value, not a tenant's) that only
ms.image puts together with a digest; every caller of ms.image emits the
result with `| quote`.
*/ -}}
{{- define "ms.imageRepository" -}}
{{- $base := dig "registry" "base" "" (.Values.managedStarrocks | default dict) | trimAll "/" -}}
{{- if $base -}}
{{- printf "%s/%s" $base "managed-starrocks" -}}
{{- else -}}
{{- .Values.global.modulesImages.registry.base -}}
{{- end -}}
{{- end }}

{{- /*
Image reference by digest. Argument: list <root context> <image name>, the
name as werf names it (camelCase: agent, webhook, starrocksFe, starrocksBe).
*/ -}}
{{- define "ms.image" -}}
{{- $ctx := index . 0 -}}
{{- $name := index . 1 -}}
{{- $digest := index ($ctx.Values.global.modulesImages.digests.managedStarrocks | default dict) $name -}}
{{- if not $digest }}{{ fail (printf "no image digest for %q in global.modulesImages.digests.managedStarrocks" $name) }}{{ end -}}
{{- printf "%s@%s" (include "ms.imageRepository" $ctx) $digest -}}
{{- end }}

{{- /* Pull credentials for the module's images, base64 of a docker config:
those of the registry ms.imageRepository pulls from (the ModuleSource's,
.Values.managedStarrocks.registry.dockercfg, for an external module; the
platform's otherwise). */ -}}
{{- define "ms.dockercfg" -}}
{{- if dig "registry" "base" "" (.Values.managedStarrocks | default dict) -}}
{{- dig "registry" "dockercfg" "" (.Values.managedStarrocks | default dict) -}}
{{- else -}}
{{- dig "modulesImages" "registry" "dockercfg" "" .Values.global -}}
{{- end -}}
{{- end }}

{{- /* Container security context. Argument: readOnlyRootFilesystem (bool). */ -}}
{{- define "ms.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ toJson . }}
privileged: false
capabilities:
  drop: ["ALL"]
{{- end }}

{{- /* Module setting highAvailability, falling back to the cluster-wide default. */ -}}
{{- define "ms.highAvailability" -}}
{{- $s := .Values.managedStarrocks | default dict -}}
{{- if hasKey $s "highAvailability" -}}
{{- ternary "true" "" (eq (toString $s.highAvailability) "true") -}}
{{- else -}}
{{- ternary "true" "" (eq (toString (dig "highAvailability" false .Values.global)) "true") -}}
{{- end -}}
{{- end }}

{{- /* Deckhouse log level (Debug|Info|Warn|Error) lowercased for the programs. */ -}}
{{- define "ms.logLevel" -}}
{{- dig "logLevel" "Info" (.Values.managedStarrocks | default dict) | lower -}}
{{- end }}

{{- /* Client part of a webhook entry. Argument: dict "ca" <base64 CA> "path" <URL path>. */ -}}
{{- define "ms.webhookClient" -}}
clientConfig:
  caBundle: {{ .ca | quote }}
  service:
    name: managed-starrocks-webhook
    namespace: d8-managed-starrocks
    path: {{ .path | quote }}
    port: 443
admissionReviewVersions: ["v1"]
sideEffects: None
timeoutSeconds: 5
matchPolicy: Equivalent
{{- end }}

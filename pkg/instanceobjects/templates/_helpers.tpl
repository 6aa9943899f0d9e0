{{- /*
Helper library of the instance templates, rendered per instance by the hooks
(pkg/instanceobjects), not by Helm: the module's own helpers are in the
chart's templates/_helpers.tpl. ms.containerSecurityContext and ms.logLevel
are copies of the chart's (this package cannot include its files);
dev/chartrender TestHelpersSharedWithTheInstanceTemplatesAreTheSame keeps
them equal.

Every value is emitted quoted (`| quote`) or JSON/YAML-encoded (`toJson`,
`toYaml` of a structure), never raw: instance values carry strings a tenant
wrote, and a raw one could end a YAML scalar and start an object of its own.
openapi/values.yaml constrains those strings as well; the quoting holds even
for an entry that slipped past it.
*/ -}}

{{- /* Image reference by digest, name as werf names it (starrocksFe,
starrocksBe, agent). pkg/instanceobjects checks the digests exist, and
hands the images' repository as registry.base of this render tree: computed
there as lib-helm computes it for an external module (ImageRepository). */ -}}
{{- define "ms.image" -}}
{{- $images := (index . 0).Values.global.modulesImages -}}
{{- printf "%s@%s" $images.registry.base (index $images.digests.managedStarrocks (index . 1)) -}}
{{- end }}

{{- /*
Labels that select the pods of one component of one instance. They are the
StatefulSet selectors, so they must never change for an existing instance.
Argument: dict "i" <instance> "component" <frontend|backend>.
*/ -}}
{{- define "ms.selectorLabels" -}}
managed-services.deckhouse.io/managed-service-name: {{ .i.name | quote }}
app.kubernetes.io/name: starrocks
app.kubernetes.io/instance: {{ .i.name | quote }}
{{- with .component }}
app.kubernetes.io/component: {{ . | quote }}
{{- end }}
{{- end }}

{{- /* Labels of every object of an instance. Argument as ms.selectorLabels
(component optional). */ -}}
{{- define "ms.instanceLabels" -}}
heritage: deckhouse
{{ include "ms.podLabels" . }}
{{- end }}

{{- /* Labels of the pods the StatefulSets make: those of ms.instanceLabels
without heritage: deckhouse. Deckhouse's admission policy
label-objects.deckhouse.io lets only Deckhouse's own service accounts create
or update an object carrying that label, and the agent patches its own pod
(its status annotation). The volume claim templates keep ms.instanceLabels:
the API server refuses any change of a StatefulSet's volumeClaimTemplates,
so every running instance would stop being updated. */ -}}
{{- define "ms.podLabels" -}}
module: managed-starrocks
{{ include "ms.selectorLabels" . }}
app.kubernetes.io/managed-by: deckhouse
app.kubernetes.io/part-of: managed-starrocks
managed-services.deckhouse.io/managed-service-type: starrocks
{{- end }}

{{- /* Pod security context: StarRocks images run as the starrocks user 1000,
owner of /opt/starrocks (why not 65534 or 64535 as Deckhouse asks: pkg/instanceobjects/README.md);
fsGroup lets the non-root processes write the volumes. */ -}}
{{- define "ms.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- /* Container security context. Argument: readOnlyRootFilesystem (bool). */ -}}
{{- define "ms.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ toJson . }}
privileged: false
capabilities:
  drop: ["ALL"]
{{- end }}

{{- /* Resources of a StarRocks container in the values shape {requests {cpu,
memory}, limits {cpu, memory}}. The ephemeral-storage request reserves room
for what StarRocks writes outside its volume (logs, temporary files) so the
scheduler places the pod on a node that has it. */ -}}
{{- /* The ephemeral storage of a StarRocks container bounds what it
writes outside its volumes (pid files, the fe.conf copy, FE temp_dir and
JDBC drivers, BE UDF runtime) plus its console logs, and covers its log
volume (ms.logVolume), which the kubelet counts against the pod's limits
too: the limit is the log volume plus 2Gi. Beyond it the kubelet evicts the
pod instead of filling the node's disk. */ -}}
{{- define "ms.resources" -}}
requests:
  cpu: {{ .requests.cpu | quote }}
  memory: {{ .requests.memory | quote }}
  ephemeral-storage: 1Gi
limits:
  cpu: {{ .limits.cpu | quote }}
  memory: {{ .limits.memory | quote }}
  ephemeral-storage: 3Gi
{{- end }}

{{- /* LOG_DIR of a StarRocks container. Logs go to the console
(sys_log_to_console, --logconsole); what still lands here (JVM crash files,
FE log files should console logging ever be off) must not grow without
bound on the node's disk. */ -}}
{{- define "ms.logVolume" -}}
- name: log
  emptyDir:
    sizeLimit: 1Gi
{{- end }}

{{- /* Priority of the StarRocks pods: the class's spec.priorityClassName
(a DNS-1123 subdomain, never system-*: classrules and the instance schema),
so a tenant's pods preempt other workloads only as far as the admin who
published the class allows. Without one, no priorityClassName: the cluster's
default priority. Argument: the instance. */ -}}
{{- define "ms.priorityClassName" -}}
{{- with (.scheduling | default dict).priorityClassName -}}
priorityClassName: {{ . | quote }}
{{- end -}}
{{- end }}

{{- /* Deckhouse log level (Debug|Info|Warn|Error) lowercased for the programs. */ -}}
{{- define "ms.logLevel" -}}
{{- dig "logLevel" "Info" (.Values.managedStarrocks | default dict) | lower -}}
{{- end }}

{{- /* The admin's ClusterIssuer for the instance certificates (module setting
certificates.clusterIssuerName); empty means each instance's own CA Issuer. */ -}}
{{- define "ms.clusterIssuerName" -}}
{{- dig "certificates" "clusterIssuerName" "" (.Values.managedStarrocks | default dict) -}}
{{- end }}

{{- /* Name of an instance's own CA: its CA Certificate, the Secret holding
the CA key and the namespaced Issuer. Argument: instance. */ -}}
{{- define "ms.caName" -}}
{{- printf "%s-ca" .names.frontendStatefulSet -}}
{{- end }}

{{- /*
Metadata of every object of an instance. Argument: dict "i" <instance>
"name" <object name>, optional "component" <frontend|backend> and "labels"
<extra labels>.

The hooks create and update these objects and never delete them: the
ownerReference to the Starrocks object lets Kubernetes garbage collection
remove them with it, and only then. The per-instance object set is fixed
(nothing appears or disappears with a setting), so nothing is left behind.
helm.sh/resource-policy keep: module versions before hooks/instanceobjects
rendered these objects into the Helm release; on the upgrade Helm reads the
live object of every resource that leaves its manifest and deletes it unless
it carries keep (Helm's kube.Client.Update), so the annotation stays.
blockOwnerDeletion is left out: setting it needs delete rights on the
owner's finalizers, and nothing here must block the Starrocks deletion.
*/ -}}
{{- define "ms.instanceMetadata" -}}
name: {{ .name | quote }}
namespace: {{ .i.namespace | quote }}
labels:
  {{- include "ms.instanceLabels" . | nindent 2 }}
  {{- with .labels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  helm.sh/resource-policy: keep
ownerReferences:
  - apiVersion: managed-services.deckhouse.io/v1alpha1
    kind: Starrocks
    name: {{ .i.name | quote }}
    uid: {{ .i.uid | quote }}
    controller: true
{{- end }}

{{- define "ms.clusterDomain" -}}
{{- required "global.discovery.clusterDomain is not set" .Values.global.discovery.clusterDomain -}}
{{- end }}

{{- /*
Scheduling of an instance's pods: nodeSelector and tolerations from the class,
node affinity from the class with the instance's zones ANDed into every node
selector term (terms are ORed by Kubernetes, so the zone must be in each).
Argument: dict "i" <instance> "component" <frontend|backend>.
*/ -}}
{{- define "ms.scheduling" -}}
{{- $i := .i -}}
{{- $s := $i.scheduling | default dict -}}
{{- with $s.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $s.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $na := deepCopy ($s.nodeAffinity | default dict) -}}
{{- if $i.zones -}}
{{- $zone := dict "key" "topology.kubernetes.io/zone" "operator" "In" "values" $i.zones -}}
{{- $req := $na.requiredDuringSchedulingIgnoredDuringExecution | default dict -}}
{{- $terms := list -}}
{{- range ($req.nodeSelectorTerms | default (list dict)) -}}
{{- $t := deepCopy . -}}
{{- $_ := set $t "matchExpressions" (append ($t.matchExpressions | default list) $zone) -}}
{{- $terms = append $terms $t -}}
{{- end -}}
{{- $_ := set $req "nodeSelectorTerms" $terms -}}
{{- $_ := set $na "requiredDuringSchedulingIgnoredDuringExecution" $req -}}
{{- end }}
affinity:
  {{- with $na }}
  nodeAffinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if eq $i.topology "Zonal" }}
  {{- /* Zonal: every pod of the instance in the zone of the first one, so
  FE-BE traffic never crosses zones. The first pod matches its own selector,
  which lets it schedule anywhere. */}}
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: topology.kubernetes.io/zone
        labelSelector:
          matchLabels:
            {{- include "ms.selectorLabels" (dict "i" $i) | nindent 12 }}
  {{- end }}
  {{- /* Spread replicas of a component over nodes when the cluster allows it:
  a lost node must not take the FE quorum or several BE replicas with it. */}}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "ms.selectorLabels" . | nindent 14 }}
{{- if eq $i.topology "TransZonal" }}
{{- /* TransZonal: replicas must be spread evenly over zones, hard constraint. */}}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels:
        {{- include "ms.selectorLabels" . | nindent 8 }}
{{- end }}
{{- end }}


{{- /* The trusted-cas volume of a component's CA Secrets (desired
TrustedCA: the object storage's, backup's and restore's endpoints), which
its start script adds to its S3 client's trust; nothing without any.
Argument: the component's trustedCAs. */}}
{{- define "ms.trustedCAsVolume" }}
{{- with . }}
- name: trusted-cas
  projected:
    defaultMode: 0444
    sources:
      {{- range . }}
      - secret:
          name: {{ .secretName | quote }}
          items:
            - key: {{ .key | quote }}
              path: {{ .file | quote }}
      {{- end }}
{{- end }}
{{- end }}

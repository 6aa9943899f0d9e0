{{- /* The compute node (CN) StatefulSet of a shared-data instance. Argument:
dict "root" <root context> "i" <instance>; rendered by statefulsets.yaml when
the entry has compute. */}}
{{- define "ms.computeStatefulSet" }}
{{- $root := .root }}
{{- $i := .i }}
{{- $c := dict "i" $i "component" "compute" }}
{{- $retention := dig "instances" "persistentVolumeClaimRetention" "Retain" ($root.Values.managedStarrocks | default dict) }}
{{- $digests := $root.Values.global.modulesImages.digests.managedStarrocks }}
{{- if not (index $digests "starrocksCn") }}
{{- fail "a shared-data instance needs the CN image: global.modulesImages.digests.managedStarrocks.starrocksCn is not set" }}
{{- end }}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  {{- include "ms.instanceMetadata" (merge (dict "name" $i.names.computeStatefulSet) $c) | nindent 2 }}
spec:
  {{- /* Without a fixed count the HorizontalPodAutoscaler owns
  .spec.replicas: the field is left out, and the module's writes keep the live
  count (hooks/internal/kubewrite keepScaledReplicas). */}}
  {{- with $i.compute.replicas }}
  replicas: {{ int64 . }}
  {{- end }}
  serviceName: {{ $i.names.computeHeadlessService | quote }}
  {{- /* CNs hold no tablets of their own (the data is in the object
  storage), so they start and stop together: the agent adds each CN as it
  appears. */}}
  podManagementPolicy: Parallel
  {{- /* OnDelete, like the FEs and BEs: the instances hook restarts the CNs
  one at a time before any FE (pkg/desired/rollout.go): StarRocks' upgrade
  order, BEs and CNs before the FEs, which RollingUpdate, rolling each
  StatefulSet on its own, would not keep. */}}
  updateStrategy:
    type: OnDelete
  {{- /* The cache volumes of CNs scaled in go with them: they hold copies
  of the object storage only. */}}
  persistentVolumeClaimRetentionPolicy:
    whenDeleted: {{ $retention | quote }}
    whenScaled: Delete
  selector:
    matchLabels:
      {{- include "ms.selectorLabels" $c | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "ms.podLabels" $c | nindent 8 }}
      annotations:
        checksum/config: {{ $i.compute.configChecksum | quote }}
    spec:
      {{- /* The CN talks to no API: no token in its pods. */}}
      automountServiceAccountToken: false
      {{- /* The graceful exit of the preStop hook waits for the running
      fragments, as a BE's (docs.starrocks.io/docs/administration/management/graceful_exit);
      120 s is the StarRocks operator's default grace period. */}}
      terminationGracePeriodSeconds: 120
      {{- include "ms.priorityClassName" $i | nindent 6 }}
      securityContext:
        {{- include "ms.podSecurityContext" . | nindent 8 }}
      {{- include "ms.scheduling" $c | nindent 6 }}
      containers:
        - name: starrocks
          image: {{ include "ms.image" (list $root "starrocksCn") | quote }}
          {{- /* Upstream's CN image (starrocks/cn-ubuntu, as the StarRocks
          operator runs it) keeps the CN under /opt/starrocks/cn.
          cn-start.sh (images/starrocks-cn, added by werf) creates the spill
          directory (cn.conf spill_local_storage_dir), builds the CA bundle
          of the object storage when the instance names one and execs
          start_cn.sh --logconsole, which execs the CN process
          (start_backend.sh --cn): it gets the kubelet's SIGTERM itself. */}}
          command: ["/bin/sh", "/opt/managed-starrocks/cn-start.sh", "/opt/starrocks/cn/storage/spill"]
          {{- /* What the StarRocks operator runs before a CN stops: the
          graceful exit (stop_cn.sh -g; StarRocks/starrocks-kubernetes-operator
          pkg/k8sutils/templates/pod/spec.go GetPreStopCommand). */}}
          lifecycle:
            preStop:
              exec:
                command: ["/bin/bash", "-c", "/opt/starrocks/cn/bin/stop_cn.sh -g"]
          ports:
            - name: cn-thrift
              containerPort: 9060
            - name: cn-http
              containerPort: 8040
            - name: cn-heartbeat
              containerPort: 9050
            - name: cn-brpc
              containerPort: 8060
            - name: cn-starlet
              containerPort: 9070
          startupProbe:
            httpGet:
              path: /api/health
              port: cn-http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 60
          livenessProbe:
            httpGet:
              path: /api/health
              port: cn-http
            periodSeconds: 15
            timeoutSeconds: 5
            failureThreshold: 4
          readinessProbe:
            httpGet:
              path: /api/health
              port: cn-http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 3
          resources:
            {{- include "ms.resources" $i.compute.resources | nindent 12 }}
          securityContext:
            {{- include "ms.containerSecurityContext" false | nindent 12 }}
          volumeMounts:
            - name: cache
              mountPath: /opt/starrocks/cn/storage
            - name: config
              mountPath: /opt/starrocks/cn/conf/cn.conf
              subPath: cn.conf
              readOnly: true
            - name: log
              mountPath: /opt/starrocks/cn/log
            {{- if $i.compute.trustedCAs }}
            - name: trusted-cas
              mountPath: /etc/starrocks/trusted-cas
              readOnly: true
            {{- end }}
      volumes:
        - name: config
          configMap:
            name: {{ $i.names.configMap | quote }}
            defaultMode: 0444
            items:
              - key: cn.conf
                path: cn.conf
        {{- include "ms.logVolume" . | nindent 8 }}
        {{- include "ms.trustedCAsVolume" $i.compute.trustedCAs | nindent 8 }}
  volumeClaimTemplates:
    - metadata:
        name: cache
        labels:
          {{- include "ms.instanceLabels" $c | nindent 10 }}
      spec:
        accessModes: ["ReadWriteOnce"]
        {{- with $i.compute.cache.storageClassName }}
        storageClassName: {{ . | quote }}
        {{- end }}
        resources:
          requests:
            {{- /* The size the StatefulSet was created with: the apiserver
            refuses any change of volumeClaimTemplates; a grown cache is
            the instances hook's expansion of each PVC. */}}
            storage: {{ $i.compute.cache.templateSize | default $i.compute.cache.size | quote }}
{{- end }}

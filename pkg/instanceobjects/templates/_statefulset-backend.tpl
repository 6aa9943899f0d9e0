{{- /* The backend StatefulSet of an instance. Argument: dict "root" <root
context> "i" <instance>; rendered by statefulsets.yaml. */}}
{{- define "ms.backendStatefulSet" }}
{{- $root := .root }}
{{- $i := .i }}
{{- $c := dict "i" $i "component" "backend" }}
{{- $retention := dig "instances" "persistentVolumeClaimRetention" "Retain" ($root.Values.managedStarrocks | default dict) }}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  {{- include "ms.instanceMetadata" (merge (dict "name" $i.names.backendStatefulSet) $c) | nindent 2 }}
spec:
  replicas: {{ int64 $i.backend.replicas }}
  serviceName: {{ $i.names.backendHeadlessService | quote }}
  {{- /* BEs join independently (the agent adds each one), no ordering needed. */}}
  podManagementPolicy: Parallel
  {{- /* OnDelete: the instances hook restarts the BEs one at a time before
  any FE (pkg/desired/rollout.go). */}}
  updateStrategy:
    type: OnDelete
  persistentVolumeClaimRetentionPolicy:
    whenDeleted: {{ $retention | quote }}
    whenScaled: Retain
  selector:
    matchLabels:
      {{- include "ms.selectorLabels" $c | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "ms.podLabels" $c | nindent 8 }}
      annotations:
        checksum/config: {{ $i.backend.configChecksum | quote }}
    spec:
      {{- /* The BE talks to no API: no token in its pods. */}}
      automountServiceAccountToken: false
      {{- /* No imagePullSecrets: Deckhouse configures containerd on every node
      with the credentials of its registry (bashible step 032_configure_containerd,
      registry.configs.<host>.auth, deckhouse/deckhouse
      candi/bashible/common-steps/all/032_configure_containerd.sh.tpl), so the
      kubelet pulls the module's images without a Secret. None is copied into
      tenant namespaces, where any team member could read it. */}}
      {{- /* The preStop hook's graceful exit (SIGTERM) marks the BE Exiting,
      refuses new fragments and waits for the running ones,
      loop_count_wait_fragments_finish (2) times 10 s, before it shuts down
      (docs.starrocks.io/docs/administration/management/graceful_exit);
      120 s is the StarRocks operator's default grace period
      (StarRocks/starrocks-kubernetes-operator pkg/apis/starrocks/v1
      component_type.go GetTerminationGracePeriodSeconds). */}}
      terminationGracePeriodSeconds: 120
      {{- include "ms.priorityClassName" $i | nindent 6 }}
      securityContext:
        {{- include "ms.podSecurityContext" . | nindent 8 }}
      {{- include "ms.scheduling" $c | nindent 6 }}
      containers:
        - name: starrocks
          image: {{ include "ms.image" (list $root "starrocksBe") | quote }}
          {{- /* be-start.sh (images/starrocks-be, added by werf) creates the
          spill directory (be.conf spill_local_storage_dir), builds the CA bundle of the backup and restore
          endpoints when the instance names one and execs start_be.sh --be
          --logconsole. The 4.1 images start tini as their ENTRYPOINT;
          command replaces the ENTRYPOINT, so tini does not run here: the
          shell execs start_be.sh, which execs starrocks_be, so the BE is
          PID 1 and gets the kubelet's SIGTERM itself
          (StarRocks/starrocks bin/start_backend.sh). */}}
          command: ["/bin/sh", "/opt/managed-starrocks/be-start.sh", "/opt/starrocks/be/storage/spill"]
          {{- /* What the StarRocks operator runs before a stop for BE 3.3.19,
          3.4.8, 3.5.6 and later: stop_be.sh -g, the graceful exit, waiting
          for the process (StarRocks/starrocks-kubernetes-operator
          pkg/k8sutils/templates/pod/spec.go GetPreStopCommand). */}}
          lifecycle:
            preStop:
              exec:
                command: ["/bin/bash", "-c", "/opt/starrocks/be/bin/stop_be.sh -g"]
          ports:
            - name: be-port
              containerPort: 9060
            - name: be-http
              containerPort: 8040
            - name: be-heartbeat
              containerPort: 9050
            - name: be-brpc
              containerPort: 8060
          {{- /* Loading tablet metadata of a large storage takes long: 30
          minutes, probed every 5 s as the FE's. */}}
          startupProbe:
            httpGet:
              path: /api/health
              port: be-http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 360
          livenessProbe:
            httpGet:
              path: /api/health
              port: be-http
            periodSeconds: 15
            timeoutSeconds: 5
            failureThreshold: 4
          readinessProbe:
            httpGet:
              path: /api/health
              port: be-http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 3
          resources:
            {{- include "ms.resources" $i.backend.resources | nindent 12 }}
          {{- /* The BE writes under its installation directory, so the root
          filesystem stays writable: start_backend.sh creates UDF_RUNTIME_DIR,
          chmods lib/starrocks_be and checks PID_DIR/be.pid
          (StarRocks/starrocks bin/start_backend.sh; pkg/instanceobjects/README.md). The
          container's ephemeral-storage limit (ms.resources) bounds that;
          logs go to the console, LOG_DIR is a bounded volume and spill files
          go to the data volume (be.conf). */}}
          securityContext:
            {{- include "ms.containerSecurityContext" false | nindent 12 }}
          volumeMounts:
            - name: storage
              mountPath: /opt/starrocks/be/storage
            - name: config
              mountPath: /opt/starrocks/be/conf/be.conf
              subPath: be.conf
              readOnly: true
            - name: log
              mountPath: /opt/starrocks/be/log
            {{- if $i.backend.trustedCAs }}
            {{- /* The backup and restore endpoints' CA bundles, which
            be-start.sh adds to the BE's S3 client's CA bundle. */}}
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
              - key: be.conf
                path: be.conf
        {{- include "ms.logVolume" . | nindent 8 }}
        {{- include "ms.trustedCAsVolume" $i.backend.trustedCAs | nindent 8 }}
  volumeClaimTemplates:
    - metadata:
        name: storage
        labels:
          {{- include "ms.instanceLabels" $c | nindent 10 }}
      spec:
        accessModes: ["ReadWriteOnce"]
        {{- with $i.backend.storage.storageClassName }}
        storageClassName: {{ . | quote }}
        {{- end }}
        {{- /* The size the StatefulSet was created with: the apiserver refuses
        changes of volumeClaimTemplates; the hooks expand grown PVCs instead. */}}
        resources:
          requests:
            storage: {{ $i.backend.storage.templateSize | default $i.backend.storage.size | quote }}
{{- end }}

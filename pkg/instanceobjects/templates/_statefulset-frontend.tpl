{{- /* The frontend StatefulSet of an instance. Argument: dict "root" <root
context> "i" <instance>; rendered by statefulsets.yaml. */}}
{{- define "ms.frontendStatefulSet" }}
{{- $root := .root }}
{{- $i := .i }}
{{- $c := dict "i" $i "component" "frontend" }}
{{- $retention := dig "instances" "persistentVolumeClaimRetention" "Retain" ($root.Values.managedStarrocks | default dict) }}
{{- $clusterDomain := include "ms.clusterDomain" $root }}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  {{- include "ms.instanceMetadata" (merge (dict "name" $i.names.frontendStatefulSet) $c) | nindent 2 }}
spec:
  replicas: {{ int64 $i.frontend.replicas }}
  serviceName: {{ $i.names.frontendHeadlessService | quote }}
  {{- /* Followers wait for the agent anyway, so starting them together is safe
  and a cold start does not take three startup probes in a row. */}}
  podManagementPolicy: Parallel
  {{- /* OnDelete: a changed template reaches a pod only when the instances
  hook deletes it, one pod at a time, the BEs first, the FE leader last
  (pkg/desired/rollout.go): StarRocks' upgrade order, which RollingUpdate
  of two StatefulSets at once cannot keep. */}}
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
        checksum/config: {{ $i.frontend.configChecksum | quote }}
        {{- /* The FE reads its PKCS12 keystore only at start: a renewed
        certificate (a new Certificate revision) restarts the FE pods, one at a
        time through the hook's rollout. Revision 1
        (the first issuance) renders nothing, so neither the first issuance nor
        a module upgrade restarts running FEs. */}}
        {{- $rev := int64 ($i.tls.certificateRevision | default 1) }}
        {{- if gt $rev 1 }}
        managed-starrocks.deckhouse.io/certificate-revision: {{ $rev | toString | quote }}
        {{- end }}
    spec:
      serviceAccountName: {{ printf "%s-agent" $i.names.frontendStatefulSet | quote }}
      {{- /* The StarRocks container must not hold the agent's token: the pod
      gets none, the agent container mounts a projected one (volume
      kube-api-access below). */}}
      automountServiceAccountToken: false
      {{- /* No imagePullSecrets: Deckhouse configures containerd on every node
      with the credentials of its registry (bashible step 032_configure_containerd,
      registry.configs.<host>.auth, deckhouse/deckhouse
      candi/bashible/common-steps/all/032_configure_containerd.sh.tpl), so the
      kubelet pulls the module's images without a Secret. None is copied into
      tenant namespaces, where any team member could read it. */}}
      {{- /* The preStop hook's graceful exit answers 500 on /api/health at
      once (the readiness probe below takes the pod out of the Service within
      15 s, the time StarRocks waits at least), hands leadership over, drains
      connections and ends after 60 s at most
      (docs.starrocks.io/docs/administration/management/graceful_exit; fe
      StarRocksFE.java handleGracefulExit; a single FE exits at once). 120 s
      is the StarRocks operator's default grace period for every component
      (StarRocks/starrocks-kubernetes-operator pkg/apis/starrocks/v1
      component_type.go GetTerminationGracePeriodSeconds). */}}
      terminationGracePeriodSeconds: 120
      {{- include "ms.priorityClassName" $i | nindent 6 }}
      securityContext:
        {{- include "ms.podSecurityContext" . | nindent 8 }}
      {{- include "ms.scheduling" $c | nindent 6 }}
      containers:
        - name: starrocks
          image: {{ include "ms.image" (list $root "starrocksFe") | quote }}
          {{- /* The 4.1 images start tini as their ENTRYPOINT; command
          replaces the ENTRYPOINT, so tini does not run here: the wrapper
          execs start_fe.sh, which execs the JVM, so the FE is PID 1 and gets
          the kubelet's SIGTERM itself (the JVM handles it; it forks no
          children to reap). */}}
          command: ["/bin/sh", "/opt/managed-starrocks/fe-start.sh"]
          {{- /* What the StarRocks operator runs before a stop: stop_fe.sh -g
          sends SIGUSR1, the FE's graceful exit, and waits for the process;
          the grace period bounds it (StarRocks/starrocks-kubernetes-operator
          pkg/k8sutils/templates/pod/spec.go GetPreStopCommand; StarRocks/starrocks
          bin/stop_fe.sh). */}}
          lifecycle:
            preStop:
              exec:
                command: ["/bin/bash", "-c", "/opt/starrocks/fe/bin/stop_fe.sh -g"]
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: STARROCKS_KEYSTORE_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: {{ required "tls.keystorePasswordSecretName is required" $i.tls.keystorePasswordSecretName | quote }}
                  key: password
            {{- if $i.frontend.restoreClusterSnapshot }}
            {{- /* Where the source's storage volume is: fe-start.sh renders
            StarRocks' conf/cluster_snapshot.yaml from these and the keys of
            the cluster-snapshot volume on the first FE's bootstrap start. */}}
            {{- $v := $i.agentConfig.sharedData.storageVolume }}
            - name: CLUSTER_SNAPSHOT_VOLUME_NAME
              value: {{ $v.name | quote }}
            - name: CLUSTER_SNAPSHOT_VOLUME_LOCATION
              value: {{ $v.location | quote }}
            - name: CLUSTER_SNAPSHOT_S3_ENDPOINT
              value: {{ $v.endpoint | quote }}
            - name: CLUSTER_SNAPSHOT_S3_REGION
              value: {{ $v.region | default "us-east-1" | quote }}
            - name: CLUSTER_SNAPSHOT_S3_PATH_STYLE
              value: {{ $v.pathStyle | default false | toString | quote }}
            - name: CLUSTER_SNAPSHOT_S3_ENABLE_SSL
              value: {{ $v.enableSSL | toString | quote }}
            {{- end }}
          ports:
            - name: fe-http
              containerPort: 8030
            - name: fe-rpc
              containerPort: 9020
            - name: fe-query
              containerPort: 9030
            - name: fe-https
              containerPort: 8443
            - name: fe-edit-log
              containerPort: 9010
          {{- /* A cold start replays the whole edit log and a new follower copies
          the leader's image first: allow 30 minutes before liveness applies.
          Every 5 s, as StarRocks' operator probes (pkg/k8sutils/templates/pod
          StartupProbe): a restarted pod of a rollout is Ready at most 5 s
          after it answers, and the rollout's next step follows. */}}
          startupProbe:
            httpGet:
              path: /api/health
              port: fe-http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 360
          livenessProbe:
            httpGet:
              path: /api/health
              port: fe-http
            periodSeconds: 15
            timeoutSeconds: 5
            failureThreshold: 4
          readinessProbe:
            httpGet:
              path: /api/health
              port: fe-http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 3
          resources:
            {{- include "ms.resources" $i.frontend.resources | nindent 12 }}
          {{- /* StarRocks writes under its installation directory, so the root
          filesystem stays writable: the FE process writes and locks
          PID_DIR/fe.pid (bin/ by default), the wrapper copies fe.conf into
          conf/ where start_fe.sh reads it (3.x's start_fe.sh --logconsole
          also appended a line to it; 4.1's no longer does), and the FE keeps
          temp_dir, small_files and downloaded JDBC drivers under
          STARROCKS_HOME (StarRocks/starrocks bin/start_fe.sh, fe Config.java).
          The container's ephemeral-storage limit (ms.resources) bounds them;
          logs go to the console and LOG_DIR is a bounded volume. */}}
          securityContext:
            {{- include "ms.containerSecurityContext" false | nindent 12 }}
          volumeMounts:
            - name: meta
              mountPath: /opt/starrocks/fe/meta
            {{- /* Read-only where the operator mounts it; fe-start.sh copies
            fe.conf into conf/. */}}
            - name: config
              mountPath: /etc/starrocks/fe/conf
              readOnly: true
            - name: log
              mountPath: /opt/starrocks/fe/log
            - name: tls
              mountPath: /etc/starrocks/tls
              readOnly: true
            - name: agent-run
              mountPath: /opt/starrocks/agent-run
              readOnly: true
            {{- if $i.frontend.trustedCAs }}
            {{- /* The backup and restore endpoints' CA bundles, which
            fe-start.sh adds to the JVM's trust store (see fe.conf JAVA_OPTS). */}}
            - name: trusted-cas
              mountPath: /etc/starrocks/trusted-cas
              readOnly: true
            {{- end }}
            {{- if $i.frontend.restoreClusterSnapshot }}
            - name: cluster-snapshot
              mountPath: /etc/starrocks/cluster-snapshot
              readOnly: true
            {{- end }}
        - name: agent
          image: {{ include "ms.image" (list $root "agent") | quote }}
          args:
            - --config=/etc/starrocks-agent/config/agent.json
            - --tls-ca-file=/etc/starrocks/tls/ca.crt
            - --credentials-dir=/etc/starrocks-agent/credentials
            - --admin-credentials-dir=/etc/starrocks-agent/admin-credentials
            - --pod-name=$(POD_NAME)
            - --pod-namespace=$(POD_NAMESPACE)
            - {{ printf "--self-host=$(POD_NAME).%s.%s.svc.%s" $i.names.frontendHeadlessService $i.namespace $clusterDomain | quote }}
            - --listen=:8090
            - --helper-file=/opt/starrocks/agent-run/fe-helper
            {{- /* Whether the FE's meta is empty: the bootstrap guard. */}}
            - --meta-dir=/opt/starrocks/fe/meta
            {{- if $i.frontend.restoreSourceCredentialsSecret }}
            - --source-credentials-dir=/etc/starrocks-agent/source-credentials
            {{- end }}
            - {{ printf "--log-level=%s" (include "ms.logLevel" $root) | quote }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
          ports:
            - name: agent-http
              containerPort: 8090
          livenessProbe:
            httpGet:
              path: /healthz
              port: agent-http
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: agent-http
            periodSeconds: 10
            failureThreshold: 3
          {{- /* The agent writes only its console log, which the kubelet
          rotates (containerLogMaxSize × containerLogMaxFiles, 10Mi × 5 by
          default): the limit only stops a runaway from filling the node. */}}
          resources:
            requests:
              cpu: 10m
              memory: 32Mi
              ephemeral-storage: 16Mi
            limits:
              memory: 128Mi
              ephemeral-storage: 256Mi
          securityContext:
            {{- include "ms.containerSecurityContext" true | nindent 12 }}
          volumeMounts:
            {{- /* A directory mount (not subPath) so agent.json updates reach the
            running agent: runtime-mutable changes need no restart. */}}
            - name: agent-config
              mountPath: /etc/starrocks-agent/config
              readOnly: true
            {{- /* The module's accounts (d8_agent, root's password) and the team's
            admin account it creates: in the agent only, never in the StarRocks
            container. */}}
            - name: credentials
              mountPath: /etc/starrocks-agent/credentials
              readOnly: true
            - name: admin-credentials
              mountPath: /etc/starrocks-agent/admin-credentials
              readOnly: true
            {{- if $i.frontend.restoreSourceCredentialsSecret }}
            - name: source-credentials
              mountPath: /etc/starrocks-agent/source-credentials
              readOnly: true
            {{- end }}
            - name: kube-api-access
              mountPath: /var/run/secrets/kubernetes.io/serviceaccount
              readOnly: true
            - name: tls
              mountPath: /etc/starrocks/tls
              readOnly: true
            - name: agent-run
              mountPath: /opt/starrocks/agent-run
            {{- /* Read only, to see whether the FE has meta: an FE with none
            on a bootstrapped instance rejoins the leader (bootstrap guard). */}}
            - name: meta
              mountPath: /opt/starrocks/fe/meta
              readOnly: true
      volumes:
        - name: config
          configMap:
            name: {{ $i.names.configMap | quote }}
            defaultMode: 0444
            items:
              - key: fe.conf
                path: fe.conf
        - name: agent-config
          configMap:
            name: {{ $i.names.configMap | quote }}
            defaultMode: 0444
            items:
              - key: agent.json
                path: agent.json
        - name: credentials
          secret:
            secretName: {{ $i.names.agentCredentialsSecret | quote }}
            defaultMode: 0440
            items:
              - key: username
                path: username
              - key: password
                path: password
              - key: root-password
                path: root-password
        {{- if $i.frontend.restoreSourceCredentialsSecret }}
        {{- /* Root's password of the instance this one was restored from:
        the restored FE has the source's accounts, and only root may change
        root's password. Optional: without it the agent reports
        RootPasswordRefused. */}}
        - name: source-credentials
          secret:
            secretName: {{ $i.frontend.restoreSourceCredentialsSecret | quote }}
            defaultMode: 0440
            optional: true
            items:
              - key: root-password
                path: root-password
        {{- end }}
        - name: admin-credentials
          secret:
            secretName: {{ $i.names.credentialsSecret | quote }}
            defaultMode: 0440
            items:
              - key: username
                path: username
              - key: password
                path: password
        {{- /* What the kubelet mounts for automountServiceAccountToken, for the
        agent container alone: a bound, expiring token, the cluster CA and the
        namespace. */}}
        - name: kube-api-access
          projected:
            defaultMode: 0444
            sources:
              - serviceAccountToken:
                  path: token
                  expirationSeconds: 3607
              - configMap:
                  name: kube-root-ca.crt
                  items:
                    - key: ca.crt
                      path: ca.crt
              - downwardAPI:
                  items:
                    - path: namespace
                      fieldRef:
                        apiVersion: v1
                        fieldPath: metadata.namespace
        - name: tls
          secret:
            secretName: {{ $i.tls.secretName | quote }}
            defaultMode: 0440
        {{- include "ms.trustedCAsVolume" $i.frontend.trustedCAs | nindent 8 }}
        {{- if $i.frontend.restoreClusterSnapshot }}
        {{- /* The team's object storage keys, read only by fe-start.sh on
        the restore start. Optional: a Secret deleted later must not keep
        an FE that has its meta from starting. */}}
        {{- $cred := $i.agentConfig.sharedData.storageVolume.credentials }}
        - name: cluster-snapshot
          secret:
            secretName: {{ $cred.secretName | quote }}
            defaultMode: 0440
            optional: true
            items:
              - key: {{ $cred.accessKeyIdKey | quote }}
                path: access-key
              - key: {{ $cred.secretAccessKeyKey | quote }}
                path: secret-key
        {{- end }}
        - name: agent-run
          emptyDir:
            medium: Memory
            sizeLimit: 1Mi
        {{- include "ms.logVolume" . | nindent 8 }}
  volumeClaimTemplates:
    - metadata:
        name: meta
        labels:
          {{- include "ms.instanceLabels" $c | nindent 10 }}
      spec:
        accessModes: ["ReadWriteOnce"]
        {{- with $i.frontend.storage.storageClassName }}
        storageClassName: {{ . | quote }}
        {{- end }}
        {{- /* The size the StatefulSet was created with: the apiserver refuses
        changes of volumeClaimTemplates; the hooks expand grown PVCs instead. */}}
        resources:
          requests:
            storage: {{ $i.frontend.storage.templateSize | default $i.frontend.storage.size | quote }}
{{- end }}

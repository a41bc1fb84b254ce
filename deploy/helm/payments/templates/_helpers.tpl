{{/*
Shared named templates. An app is rendered by "payments.workload" with a dict:
  root      the chart's root context ($)
  component the app's directory under apps/ (orchestrator, gateway-adapter, callback-ingest,
            gateway-sandbox); also the container command dist/apps/<component>/src/main.js
  app       the app's values (.Values.orchestrator, ...)
  common    true to start the app's environment from .Values.commonEnv
*/}}

{{- define "payments.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "payments.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* (dict "root" $ "component" "orchestrator") → <release>-payments-orchestrator */}}
{{- define "payments.componentName" -}}
{{- printf "%s-%s" (include "payments.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "payments.selectorLabels" -}}
app.kubernetes.io/name: {{ include "payments.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "payments.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "payments.selectorLabels" . }}
app.kubernetes.io/version: {{ default .root.Chart.AppVersion .root.Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: payments
{{- end -}}

{{- define "payments.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "payments.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "payments.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The plain (non-secret) environment of one app, as YAML: .Values.commonEnv (when common), then
the app's env (wins), then what the chart fixes: HTTP_PORT from the app's port, APP_VERSION from
the image tag, and DATABASE_MIGRATE_ON_BOOT=false for the orchestrator when the migration Job
runs instead.
*/}}
{{- define "payments.env" -}}
{{- $root := .root -}}
{{- $env := deepCopy (default (dict) .app.env) -}}
{{- if .common -}}
{{- $env = merge $env (deepCopy (default (dict) $root.Values.commonEnv)) -}}
{{- end -}}
{{- $_ := set $env "HTTP_PORT" (toString .app.port) -}}
{{- $_ = set $env "APP_VERSION" (toString (default $root.Chart.AppVersion $root.Values.image.tag)) -}}
{{- if and (eq .component "orchestrator") $root.Values.migrations.job.enabled -}}
{{- $_ = set $env "DATABASE_MIGRATE_ON_BOOT" "false" -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* ConfigMap, Deployment, Service and PodDisruptionBudget of one app. */}}
{{- define "payments.workload" -}}
{{- $root := .root -}}
{{- $app := .app -}}
{{- $name := include "payments.componentName" . -}}
{{- $env := include "payments.env" . | fromYaml -}}
{{- $mountRoot := $root.Values.secretsMountRoot -}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}
  labels:
    {{- include "payments.labels" . | nindent 4 }}
data:
  {{- range $key, $value := $env }}
  {{ $key }}: {{ $value | toString | quote }}
  {{- end }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "payments.labels" . | nindent 4 }}
spec:
  {{- if not (dig "autoscaling" "enabled" false $app) }}
  replicas: {{ $app.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "payments.selectorLabels" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  template:
    metadata:
      labels:
        {{- include "payments.selectorLabels" . | nindent 8 }}
      annotations:
        checksum/config: {{ toYaml $env | sha256sum }}
        {{- if $root.Values.metrics.scrapeAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $app.port | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $app.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      serviceAccountName: {{ include "payments.serviceAccountName" $root }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      # >= the consumers' shutdown bound: drain in-flight handlers and commit (libs/kafka
      # shutdownTimeoutMs, 30 s), then leave the group (up to 30 s more).
      terminationGracePeriodSeconds: {{ $app.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with $app.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $app.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $app.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $app.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "payments.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: ["node", "dist/apps/{{ .component }}/src/main.js"]
          ports:
            - name: http
              containerPort: {{ $app.port }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ $name }}
          {{- if or $app.secretEnv $app.secretFiles }}
          env:
            {{- range $var, $ref := $app.secretEnv }}
            - name: {{ $var }}
              valueFrom:
                secretKeyRef:
                  name: {{ $ref.secretName }}
                  key: {{ $ref.key }}
            {{- end }}
            {{- range $app.secretFiles }}
            - name: {{ .envVar }}
              value: {{ printf "%s/%s/%s" $mountRoot .name .key | quote }}
            {{- end }}
          {{- end }}
          {{- with $root.Values.probes }}
          # Started: the process is up (migrations and the broker wait happen before this).
          startupProbe:
            httpGet:
              path: /health/live
              port: http
            {{- toYaml .startup | nindent 12 }}
          # Alive: the process and (orchestrator, gateway-adapter) its Kafka consumers run; a
          # consumer that crashed for good makes the pod restart.
          livenessProbe:
            httpGet:
              path: /health/live
              port: http
            {{- toYaml .liveness | nindent 12 }}
          # Ready: the broker (and the database, where the app has one) answer; traffic and
          # rollouts wait for it.
          readinessProbe:
            httpGet:
              path: /health/ready
              port: http
            {{- toYaml .readiness | nindent 12 }}
          {{- end }}
          {{- if $app.preStopSleepSeconds }}
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "{{ $app.preStopSleepSeconds }}"]
          {{- end }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          resources:
            {{- toYaml $app.resources | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- range $app.secretFiles }}
            - name: secret-{{ .name }}
              mountPath: {{ printf "%s/%s" $mountRoot .name }}
              readOnly: true
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- range $app.secretFiles }}
        - name: secret-{{ .name }}
          secret:
            secretName: {{ .secretName }}
            defaultMode: 0440
        {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "payments.labels" . | nindent 4 }}
  {{- with (dig "service" "annotations" (dict) $app) }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ dig "service" "type" "ClusterIP" $app }}
  selector:
    {{- include "payments.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ dig "service" "port" $app.port $app }}
      targetPort: http
      protocol: TCP
{{- if $app.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  labels:
    {{- include "payments.labels" . | nindent 4 }}
spec:
  {{- if $app.pdb.minAvailable }}
  minAvailable: {{ $app.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ default 1 $app.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "payments.selectorLabels" . | nindent 6 }}
{{- end }}
{{- include "payments.autoscaling" . }}
{{- end -}}

{{- /*
An app's autoscaling: a CPU HorizontalPodAutoscaler (autoscaling/v2), or, with autoscaling.keda
enabled, a KEDA ScaledObject on the consumer group's lag (plus CPU), which makes its own HPA.
Either way the Deployment leaves replicas to the autoscaler. Consumers gain nothing beyond
KAFKA_TOPIC_PARTITIONS / KAFKA_CONSUMER_CONCURRENCY pods: keep maxReplicas within it.
*/ -}}
{{- define "payments.autoscaling" -}}
{{- $root := .root -}}
{{- $app := .app -}}
{{- $name := include "payments.componentName" . -}}
{{- with $app.autoscaling }}
{{- if .enabled }}
{{- if (dig "keda" "enabled" false .) }}
{{- $brokers := $root.Values.commonEnv.KAFKA_BROKERS | default "" }}
{{- $brokers = dig "env" "KAFKA_BROKERS" $brokers $app }}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ $name }}
  labels:
    {{- include "payments.labels" $ | nindent 4 }}
spec:
  scaleTargetRef:
    name: {{ $name }}
  minReplicaCount: {{ .minReplicas }}
  maxReplicaCount: {{ .maxReplicas }}
  triggers:
    - type: kafka
      metadata:
        bootstrapServers: {{ required "commonEnv.KAFKA_BROKERS is required for a KEDA kafka trigger" $brokers | quote }}
        consumerGroup: {{ required (printf "%s.autoscaling.keda.consumerGroup is required" $.component) .keda.consumerGroup | quote }}
        lagThreshold: {{ .keda.lagThreshold | toString | quote }}
    - type: cpu
      metricType: Utilization
      metadata:
        value: {{ .targetCPUUtilizationPercentage | toString | quote }}
{{- else }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $name }}
  labels:
    {{- include "payments.labels" $ | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $name }}
  minReplicas: {{ .minReplicas }}
  maxReplicas: {{ .maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .targetCPUUtilizationPercentage }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{- /*
Which of Deckhouse's two RBACv2 role models the cluster runs: "true" for the
model of Deckhouse 1.78 and later (capabilities selected by
rbac.deckhouse.io/aggregate-to-namespace-as, PRs deckhouse/deckhouse#21165 and
#21846), anything else for the manage/use model before it. The
templates/rbacv2/ files render one object or the other, never both: a 1.78
cluster aggregates a legacy "use" object into the cluster-wide
d8:subsystem:kubernetes:* roles (the selector there is any
aggregate-to-kubernetes-as), so a tenant's namespace rights would become
rights in every namespace.

The name and the `if eq (include ...) "true"` shape are those of the gate
deckhouse/deckhouse modules/140-user-authz/docs/internal/rbacv2-migrate-module.sh
writes (PR #23127); dmt's rbac linter recognises a template carrying it as one
that serves both models on purpose.

global.deckhouseVersion is what Deckhouse's startup hook reads from
/deckhouse/version (deckhouse/deckhouse global-hooks/deckhouse_version.go):
a release tag such as v1.78.2, or "dev" on a build off a branch, or "unknown"
without the file. Only major.minor is compared: semver puts 1.78.0-rc.1 below
1.78.0, and a release candidate of 1.78 already runs the new model. What is
not a version answers "true": semverCompare would fail the whole render on
it, and of the two wrong answers the new model on an old cluster only loses
access (nothing there selects it), while the old model on a new one widens
it. toString because an unquoted 1.78 in a values file is a float.
*/ -}}
{{- define "managed-starrocks.rbacv2_new_scheme" -}}
{{- $version := (.Values.global).deckhouseVersion | default "" | toString -}}
{{- $majorMinor := regexFind "^v?[0-9]+[.][0-9]+" $version | trimPrefix "v" -}}
{{- if $majorMinor -}}
{{- semverCompare ">= 1.78" (printf "%s.0" $majorMinor) -}}
{{- else -}}
true
{{- end -}}
{{- end -}}

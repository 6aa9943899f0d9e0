/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/backupplan"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// backupClass allows backups to the test's S3 server only (by host), with
// at most 3 scheduled backups kept.
const backupClass = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: backups
spec:
  topology: {allowedTopologies: [Ignored], defaultTopology: Ignored}
  sizingPolicies:
    - cores: {min: 1, max: 8}
      memory: {min: 2Gi, max: 32Gi, step: 1Gi}
      coreFractions: [50, 100]
  backup:
    allowed: true
    allowedEndpoints: [127.0.0.1]
    maxRetention: {keepLast: 3}
`

// TestBackupAndRestore runs backups and restore at the Kubernetes level:
// the module under the real addon-operator, the real webhook, versitygw, and the real agent binary
// (as the agent's service account) against the FE-dialect server. Rows
// are backed up by a StarrocksBackup the team creates, the snapshot is in
// the bucket, the instance is deleted while its StarrocksBackup stays,
// and a new instance restores it: the rows are back, Restored is True and
// the client ports open only then. Bad input is refused at admission
// naming the field and the rule, and no storage key reaches the status,
// the events or the agent's log.
func TestBackupAndRestore(t *testing.T) {
	t.Parallel()
	const ns, name, copyName, bucket = "team-bk", "olap", "copy", "team-backups"
	s3 := s3server.Start(t)
	s3.CreateBucket(t, bucket)
	e := sharedEnv(t, withWebhook)
	e.apply(backupClass)
	e.apply(fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: s3-keys, namespace: %s}
stringData: {accessKeyID: %q, secretAccessKey: %q}
`, ns, s3.AccessKey, s3.SecretKey))
	caYAML, _ := json.Marshal(string(s3.CA.CertPEM))
	e.apply(fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: s3-ca, namespace: %s}
stringData: {ca.crt: %s}
`, ns, caYAML))
	storage := func(endpoint, bucket string) string {
		return fmt.Sprintf(`
    storage:
      endpoint: %q
      bucket: %s
      pathStyle: true
      caSecretRef: {name: s3-ca}
      credentialsSecretRef: {name: s3-keys}`, endpoint, bucket)
	}
	ok := storage(s3.URL(), bucket)

	// Admission: each bad spec is refused naming the field and the rule,
	// and nothing is created.
	for _, tc := range []struct{ what, backup, want string }{
		{"an endpoint the class does not allow", storage("https://s3.elsewhere.example.com", bucket), "spec.backup.storage.endpoint"},
		{"an invalid cron", ok + "\n    schedule: \"61 * * * *\"", "spec.backup.schedule"},
		{"a retention beyond the class limit", ok + "\n    retention: {keepLast: 50}", "spec.backup.retention.keepLast"},
	} {
		doc := backupInstance(ns, "refused", "  backup:"+tc.backup)
		if _, err := e.tryApply(doc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %s", tc.what, err, tc.want)
		}
	}
	if _, err := e.tryApply(backupInstance(ns, "refused", "  restore: {backupName: nowhere}")); err == nil || !strings.Contains(err.Error(), "spec.restore") {
		t.Errorf("a restore from a StarrocksBackup that does not exist: %v, want a refusal naming spec.restore", err)
	}
	if _, err := e.get("Starrocks", ns, "refused"); err == nil {
		t.Fatal("a refused Starrocks exists")
	}

	// The source: rows in a table, backed up by a StarrocksBackup of the
	// team ("backup now"). The schedule does not fire during the test.
	e.apply(backupInstance(ns, name, "  databases: [{name: sales}]\n  backup:"+ok+"\n    schedule: \"0 3 1 1 *\"\n    retention: {keepLast: 2}"))
	a := startBackupSidecar(t, e, ns, name)
	e.eventually("AccountsReady of "+name, func() (bool, string) {
		s, r, m := e.condition(ns, name, "AccountsReady")
		return s == "True", fmt.Sprintf("%s %s: %s\nagent logs:\n%s", s, r, m, tail(a.logs.String()))
	})
	admin := a.loginAs(t, agentconfig.AdminUser, sidecarAdminPassword)
	mustExec(t, admin, "CREATE DATABASE IF NOT EXISTS sales")
	mustExec(t, admin, "CREATE TABLE sales.orders (id INT, item STRING)")
	mustExec(t, admin, "INSERT INTO sales.orders VALUES (1, 'apple'), (2, 'pear'), (3, 'plum')")

	e.apply(fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: olap-now, namespace: %s}
spec: {instanceName: %s}
`, ns, name))
	var location string
	e.eventually("StarrocksBackup olap-now Completed", func() (bool, string) {
		b, err := e.dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).Get(context.Background(), "olap-now", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
		location, _, _ = unstructured.NestedString(b.Object, "status", "location")
		dbs, _, _ := unstructured.NestedSlice(b.Object, "status", "databases")
		st, _ := json.Marshal(b.Object["status"])
		return phase == "Completed" && len(dbs) == 1 && dbs[0].(map[string]any)["name"] == "sales",
			fmt.Sprintf("status %s\nagent logs:\n%s", st, tail(a.logs.String()))
	})
	prefix := strings.TrimPrefix(location, "s3://"+bucket+"/")
	keys := s3.Keys(t, bucket, prefix)
	if !slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "/__ss_") && strings.Contains(k, "/__info_") }) ||
		!slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "/__ss_content/") }) {
		t.Fatalf("the bucket under %s holds no finished snapshot: %v", location, keys)
	}

	// The instance goes; its StarrocksBackup and the bucket's objects stay.
	if err := e.resource("Starrocks", ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("Starrocks "+name+" is gone", func() (bool, string) {
		_, err := e.get("Starrocks", ns, name)
		return err != nil, fmt.Sprint(err)
	})
	if _, err := e.dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).Get(context.Background(), "olap-now", metav1.GetOptions{}); err != nil {
		t.Fatalf("the StarrocksBackup did not outlive its instance: %v", err)
	}
	if got := s3.Keys(t, bucket, prefix); !slices.Equal(got, keys) {
		t.Fatalf("the bucket changed when the instance went: %v, was %v", got, keys)
	}

	// A new instance restores it. The FE holds its jobs at first: the
	// client ports stay closed while the restore runs.
	e.apply(backupInstance(ns, copyName, "  restore: {backupName: olap-now}\n  backup:"+ok+"\n    retention: {keepLast: 2}"))
	c := startBackupSidecar(t, e, ns, copyName)
	c.fe.HoldJobs(true)
	e.eventually("Restored=False Restoring of "+copyName, func() (bool, string) {
		s, r, m := e.condition(ns, copyName, "Restored")
		return s == "False" && r == "Restoring" && c.fe.JobState("sales") != "", fmt.Sprintf("%s %s: %s (job %q)\nagent logs:\n%s", s, r, m, c.fe.JobState("sales"), tail(c.logs.String()))
	})
	if e.clientPortsOpen(ns, copyName) {
		t.Fatal("the client ports are open while the restore runs")
	}
	c.fe.HoldJobs(false)
	e.eventually("Restored=True of "+copyName+" and the client ports open", func() (bool, string) {
		s, r, m := e.condition(ns, copyName, "Restored")
		return s == "True" && e.clientPortsOpen(ns, copyName), fmt.Sprintf("%s %s: %s\nagent logs:\n%s", s, r, m, tail(c.logs.String()))
	})
	if got := fmt.Sprint(c.fe.TableRows("sales", "orders")); got != "[[1 apple] [2 pear] [3 plum]]" {
		t.Fatalf("rows after the restore: %s", got)
	}

	// Bad storage, each in turn on the restored instance: BackupsHealthy
	// turns False with StarRocks' (or the agent's) words naming what is
	// wrong, and the instance stays open to its clients.
	const wrongSecret = "WrongSecretKeyZ9y8x7w6v5u4t3"
	e.apply(fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: s3-wrong, namespace: %s}
stringData: {accessKeyID: %q, secretAccessKey: %q}
`, ns, s3.AccessKey, wrongSecret))
	e.apply(fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: s3-empty, namespace: %s}
stringData: {other: x}
`, ns))
	broken := func(secret, bucket string) string {
		return fmt.Sprintf(`
    storage:
      endpoint: %q
      bucket: %s
      pathStyle: true
      caSecretRef: {name: s3-ca}
      credentialsSecretRef: {name: %s}
    retention: {keepLast: 2}`, s3.URL(), bucket, secret)
	}
	for _, tc := range []struct{ what, backup, want string }{
		{"wrong keys", broken("s3-wrong", bucket), "SignatureDoesNotMatch"},
		{"a bucket that does not exist", broken("s3-keys", "no-such-bucket"), "NoSuchBucket"},
		{"a Secret without the keys", broken("s3-empty", bucket), `Secret s3-empty has no key "accessKeyID"`},
	} {
		e.apply(backupInstance(ns, copyName, "  restore: {backupName: olap-now}\n  backup:"+tc.backup))
		e.eventually("BackupsHealthy=False for "+tc.what, func() (bool, string) {
			s, r, m := e.condition(ns, copyName, "BackupsHealthy")
			return s == "False" && strings.Contains(m, tc.want), fmt.Sprintf("%s %s: %s\nagent logs:\n%s", s, r, m, tail(c.logs.String()))
		})
		// No kubelet runs here (pods are never Ready): the instance's own
		// state is its accounts, its restore and its client ports.
		for _, cond := range []string{"AccountsReady", "Restored"} {
			if s, r, m := e.condition(ns, copyName, cond); s != "True" {
				t.Errorf("%s: %s %s %s: %s", tc.what, cond, s, r, m)
			}
		}
		if !e.clientPortsOpen(ns, copyName) {
			t.Errorf("%s: the client ports closed", tc.what)
		}
	}

	// A StarrocksBackup that did not complete is no source for a restore.
	e.apply(fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: copy-failing, namespace: %s}
spec: {instanceName: %s}
`, ns, copyName))
	if _, err := e.tryApply(backupInstance(ns, "refused", "  restore: {backupName: copy-failing}\n  backup:"+ok+"\n    retention: {keepLast: 2}")); err == nil || !strings.Contains(err.Error(), "spec.restore.backupName") {
		t.Errorf("a restore from a StarrocksBackup that is not Completed: %v, want a refusal naming spec.restore.backupName", err)
	}

	// Scheduled backups and retention: every minute, the newest one kept.
	// Once the second scheduled backup has completed the first goes, with
	// exactly its snapshot's objects; the team's own olap-now stays.
	e.apply(backupInstance(ns, copyName, "  restore: {backupName: olap-now}\n  backup:"+ok+"\n    schedule: \"* * * * *\"\n    retention: {keepLast: 1}"))
	// addon-operator runs the instances hook on its minute schedule, as
	// Deckhouse does: that is what starts the scheduled backups.
	scheduled := func() map[string]string {
		list, err := e.dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: backupplan.LabelScheduled})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, b := range list.Items {
			phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
			out[b.GetName()] = phase
		}
		return out
	}
	var first, firstLocation string
	e.eventuallyWithin(150*time.Second, "a scheduled backup Completed", func() (bool, string) {
		for n, phase := range scheduled() {
			if phase == "Completed" {
				first = n
				b, _ := e.dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).Get(context.Background(), n, metav1.GetOptions{})
				firstLocation, _, _ = unstructured.NestedString(b.Object, "status", "location")
				return true, ""
			}
		}
		cs, cr, cm := e.condition(ns, copyName, "BackupsHealthy")
		failing, _ := e.dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).Get(context.Background(), "copy-failing", metav1.GetOptions{})
		var failingStatus any
		if failing != nil {
			failingStatus = failing.Object["status"]
		}
		return false, fmt.Sprintf("scheduled backups %v; BackupsHealthy %s %s: %s; copy-failing status %v\nagent logs:\n%s",
			scheduled(), cs, cr, cm, failingStatus, tail(c.logs.String()))
	})
	copyPrefix := strings.TrimPrefix(firstLocation, "s3://"+bucket+"/")
	before := s3.Keys(t, bucket, copyPrefix)
	e.eventuallyWithin(150*time.Second, "the first scheduled backup expires once a newer one completed", func() (bool, string) {
		now := scheduled()
		if _, ok := now[first]; ok {
			return false, fmt.Sprintf("scheduled backups %v", now)
		}
		for _, phase := range now {
			if phase == "Completed" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("scheduled backups %v", now)
	})
	after := s3.Keys(t, bucket, copyPrefix)
	var gone []string
	for _, k := range before {
		if !slices.Contains(after, k) {
			gone = append(gone, k)
		}
	}
	firstLabel := ""
	for _, k := range gone {
		if !strings.Contains(k, "/__ss_") {
			t.Errorf("retention removed %s, which is no snapshot's", k)
			continue
		}
		l := strings.SplitN(k[strings.Index(k, "/__ss_")+len("/__ss_"):], "/", 2)[0]
		if firstLabel == "" {
			firstLabel = l
		} else if l != firstLabel {
			t.Errorf("retention removed objects of two snapshots: %s and %s", firstLabel, l)
		}
	}
	if len(gone) == 0 {
		t.Errorf("retention removed nothing under %s: %v", copyPrefix, after)
	}
	for _, k := range after {
		if firstLabel != "" && strings.Contains(k, "/__ss_"+firstLabel+"/") {
			t.Errorf("an object of the expired snapshot is left: %s", k)
		}
	}
	if got := s3.Keys(t, bucket, prefix); !slices.Equal(got, keys) {
		t.Errorf("the source's snapshot changed: %v, was %v", got, keys)
	}

	// No key anywhere a tenant or an operator reads.
	for _, n := range []string{copyName} {
		sr, err := e.get("Starrocks", ns, n)
		if err != nil {
			t.Fatal(err)
		}
		status, _ := json.Marshal(sr.Object["status"])
		events, _ := json.Marshal(e.starrocksEvents(ns, n))
		release, err := e.ao.DeployedRelease(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		values, _ := json.Marshal(release)
		for where, text := range map[string]string{"status": string(status), "events": string(events), "values": string(values),
			"source agent log": a.logs.String(), "restoring agent log": c.logs.String(), "module and hooks log": e.moduleLogs.String()} {
			for _, key := range []string{s3.SecretKey, wrongSecret} {
				if strings.Contains(text, key) {
					t.Errorf("a secret access key is in the %s", where)
				}
			}
		}
	}
}

// backupInstance is a Standalone instance of the class backups with more
// spec lines (indented by two spaces).
func backupInstance(namespace, name, more string) string {
	return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: %s
  namespace: %s
spec:
  starrocksClassName: backups
  type: Standalone
  frontend:
    cpu: {cores: 1}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: 10Gi}
  backend:
    cpu: {cores: 2}
    memory: {size: 8Gi}
    persistentVolumeClaim: {size: 50Gi}
%s
`, name, namespace, more)
}

// startBackupSidecar runs the real agent of the instance's first FE pod
// against a fake FE that trusts what the module gives the real one (see
// frontendTrustStore), following the instance's agent configuration as the
// kubelet would.
func startBackupSidecar(t *testing.T, e *env, namespace, name string) *sidecar {
	t.Helper()
	pod := e.waitFirstFrontendPod(namespace, name)
	fe := "d8ms-sr-" + name
	var rendered agentconfig.Config
	if err := json.Unmarshal([]byte(e.configMapData(namespace, fe+"-config")[agentconfig.FileName].(string)), &rendered); err != nil {
		t.Fatal(err)
	}
	a := startSidecar(t, e.agentKubeconfig(namespace, pod), namespace, name, pod, rendered.Frontends[0])
	a.fe.SetS3RootCAs(e.frontendTrustStore(namespace, name))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go a.followConfigMap(ctx, e, namespace, fe+"-config")
	return a
}

// frontendTrustStore is what a real FE of the instance trusts for S3:
// the JDK's CAs (here the system's) and the certificates of the CA
// Secrets the module mounts into the FE StatefulSet's trusted-cas volume,
// which fe-start.sh adds to the JVM's trust store. Nothing the module does
// not render: the test's S3 CA is trusted only when the instance's FE gets
// it as StarRocks would.
func (e *env) frontendTrustStore(namespace, name string) *x509.CertPool {
	e.t.Helper()
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	sts, err := e.kube.AppsV1().StatefulSets(namespace).Get(context.Background(), desired.NamesFor(name).FrontendStatefulSet, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name != "trusted-cas" || v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.Secret == nil {
				continue
			}
			data := e.secretData(namespace, src.Secret.Name)
			for _, item := range src.Secret.Items {
				if !pool.AppendCertsFromPEM(data[item.Key]) {
					e.t.Fatalf("Secret %s key %s the FE mounts holds no certificate", src.Secret.Name, item.Key)
				}
			}
		}
	}
	return pool
}

// clientPortsOpen: the instance's NetworkPolicy admits clients to 9030.
func (e *env) clientPortsOpen(namespace, name string) bool {
	np, err := e.get("NetworkPolicy", namespace, "d8ms-sr-"+name)
	if err != nil {
		return false
	}
	rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	for _, r := range rules {
		ports, _, _ := unstructured.NestedSlice(r.(map[string]any), "ports")
		for _, p := range ports {
			if fmt.Sprint(p.(map[string]any)["port"]) == "9030" {
				return true
			}
		}
	}
	return false
}

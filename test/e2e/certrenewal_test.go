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
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

const certificateRevisionAnnotation = "managed-starrocks.deckhouse.io/certificate-revision"

// TestCertificateRenewalRollsTheFrontends plays cert-manager: the first
// issuance (revision 1) must leave the FE pods created with the instance
// alone; a renewal (revision 2) must change the FE pod template, so the
// hooks restart the FEs onto the new keystore (rollout_test.go); the BE pod
// template never changes.
func TestCertificateRenewalRollsTheFrontends(t *testing.T) {
	t.Parallel()
	const ns, name = "team-c", "tls"
	e := sharedEnv(t, withWebhook)
	e.apply(testClass)
	e.apply(instance(ns, name, "Standalone", ""))
	e.waitObjects(ns, name, 1, 1)
	fe, be := "d8ms-sr-"+name, "d8ms-sr-"+name+"-be"
	fe0, be0 := e.podTemplate(ns, fe), e.podTemplate(ns, be)
	feRevision0 := e.updateRevision(ns, fe)

	e.markCertificateRevision(ns, fe, 1)
	e.eventually("the hook saw the issued Certificate", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "TLSReady")
		return reason != "" && reason != "CertificateNotReady" && reason != "CertificateMissing", fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	time.Sleep(time.Second) // a few more passes, each applying the StatefulSets
	if got := e.podTemplate(ns, fe); got != fe0 {
		t.Fatalf("the first issuance changed the FE pod template (the FEs would restart for nothing):\nbefore:\n%s\nafter:\n%s", fe0, got)
	}

	e.markCertificateRevision(ns, fe, 2)
	e.eventually("FE pod template annotated with revision 2", func() (bool, string) {
		got := e.podAnnotation(ns, fe, certificateRevisionAnnotation)
		return got == "2", fmt.Sprintf("annotation %q", got)
	})
	if got := e.podTemplate(ns, be); got != be0 {
		t.Errorf("a renewal changed the BE pod template:\nbefore:\n%s\nafter:\n%s", be0, got)
	}
	// The StatefulSet controller took it as a new revision to roll out.
	e.eventually("a new FE controller revision", func() (bool, string) {
		got := e.updateRevision(ns, fe)
		return got != "" && got != feRevision0, fmt.Sprintf("updateRevision %q (was %q)", got, feRevision0)
	})
	if !strings.Contains(e.podTemplate(ns, fe), "checksum/config") {
		t.Error("the FE pod template lost its config checksum")
	}
}

// markCertificateRevision plays cert-manager issuing revision rev.
func (e *env) markCertificateRevision(namespace, name string, rev int) {
	e.t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	patch := fmt.Sprintf(`{"status":{"revision":%d,"notBefore":%q,"notAfter":%q,"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"Certificate is up to date and has not expired","lastTransitionTime":%q}]}}`,
		rev, now, time.Now().Add(90*24*time.Hour).UTC().Format(time.RFC3339), now)
	if _, err := e.resource("Certificate", namespace).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatalf("set certificate revision %d: %v", rev, err)
	}
}

func (e *env) podAnnotation(namespace, sts, key string) string {
	e.t.Helper()
	obj, err := e.get("StatefulSet", namespace, sts)
	if err != nil {
		e.t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "annotations", key)
	return v
}

func (e *env) updateRevision(namespace, sts string) string {
	e.t.Helper()
	obj, err := e.get("StatefulSet", namespace, sts)
	if err != nil {
		e.t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision")
	return v
}

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

package chartrender_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The backup endpoint's CA Secret reaches the FE container (the trusted-cas
// volume, mounted where fe-start.sh reads it) and the FE's JAVA_OPTS name
// the trust store fe-start.sh builds; an instance without one renders
// neither, and its FE config checksum does not move.
func TestBackupCAReachesTheFrontend(t *testing.T) {
	render := func(withCA bool) (sts, fe, checksum string) {
		t.Helper()
		sr := backupInstance()
		if !withCA {
			sr.Spec.Backup.Storage.CASecretRef = nil
		}
		objs, rejected, err := layers(t, backupClass(), sr)
		if err != nil || rejected != "" {
			t.Fatalf("the instance does not render: %v %s", err, rejected)
		}
		for _, o := range objs {
			switch {
			case o.GetKind() == "StatefulSet" && o.GetName() == desired.NamesFor(sr.Name).FrontendStatefulSet:
				b, _ := json.Marshal(o.Object)
				sts = string(b)
				checksum, _, _ = unstructured.NestedString(o.Object, "spec", "template", "metadata", "annotations", "checksum/config")
			case o.GetKind() == "ConfigMap":
				if s, ok, _ := unstructured.NestedString(o.Object, "data", "fe.conf"); ok {
					fe = s
				}
			}
		}
		if sts == "" || fe == "" {
			t.Fatal("no FE StatefulSet or fe.conf rendered")
		}
		return sts, fe, checksum
	}
	sts, fe, withSum := render(true)
	for _, want := range []string{`"name":"trusted-cas"`, `"mountPath":"/etc/starrocks/trusted-cas"`, `"secret":{"items":[{"key":"ca.crt","path":"backup.crt"}],"name":"s3-ca"}`} {
		if !strings.Contains(sts, want) {
			t.Errorf("the FE StatefulSet lacks %s", want)
		}
	}
	if !strings.Contains(fe, "-Djavax.net.ssl.trustStore=/opt/starrocks/fe/conf/trusted-cas.p12 -Djavax.net.ssl.trustStoreType=PKCS12") {
		t.Errorf("fe.conf JAVA_OPTS name no trust store:\n%s", fe)
	}
	sts, fe, withoutSum := render(false)
	if strings.Contains(sts, "trusted-cas") || strings.Contains(fe, "trustStore") {
		t.Error("an instance without a CA Secret renders the trust store")
	}
	if withSum == withoutSum {
		t.Error("the FE config checksum does not cover the CA Secret: the FEs would not restart to trust it")
	}
}

// The same CA Secret reaches the BE container, where be-start.sh builds the
// bundle its S3 client reads, and moves the BE config checksum so the BEs
// restart to read it; without one nothing is mounted and the BE checksum
// stays.
func TestBackupCAReachesTheBackend(t *testing.T) {
	render := func(withCA bool) (sts, checksum string) {
		t.Helper()
		sr := backupInstance()
		if !withCA {
			sr.Spec.Backup.Storage.CASecretRef = nil
		}
		objs, rejected, err := layers(t, backupClass(), sr)
		if err != nil || rejected != "" {
			t.Fatalf("the instance does not render: %v %s", err, rejected)
		}
		for _, o := range objs {
			if o.GetKind() == "StatefulSet" && o.GetName() == desired.NamesFor(sr.Name).BackendStatefulSet {
				b, _ := json.Marshal(o.Object)
				sts = string(b)
				checksum, _, _ = unstructured.NestedString(o.Object, "spec", "template", "metadata", "annotations", "checksum/config")
			}
		}
		if sts == "" {
			t.Fatal("no BE StatefulSet rendered")
		}
		return sts, checksum
	}
	sts, withSum := render(true)
	for _, want := range []string{`"name":"trusted-cas"`, `"mountPath":"/etc/starrocks/trusted-cas"`, `"secret":{"items":[{"key":"ca.crt","path":"backup.crt"}],"name":"s3-ca"}`} {
		if !strings.Contains(sts, want) {
			t.Errorf("the BE StatefulSet lacks %s", want)
		}
	}
	sts, withoutSum := render(false)
	if strings.Contains(sts, "trusted-cas") {
		t.Error("an instance without a CA Secret mounts one into its BEs")
	}
	if withSum == withoutSum {
		t.Error("the BE config checksum does not cover the CA Secret: the BEs would not restart to trust it")
	}
}

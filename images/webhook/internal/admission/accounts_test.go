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

package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// The webhook refuses hostile and reserved database, role and user names
// and password Secret references even in an object the CRD schema did not
// check (an older CRD, a request replayed to the webhook): every answer
// names the field in a cause and in the message, on one line.
func TestValidateStarrocksRefusesHostileAccountNames(t *testing.T) {
	h := newHandler(testClass())
	valid := func() *v1alpha1.Starrocks {
		sr := testInstance()
		sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}}
		sr.Spec.Roles = []v1alpha1.Role{{Name: "reader", Privileges: []v1alpha1.Privilege{{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT"}}}}}
		sr.Spec.Users = []v1alpha1.User{{Name: "bi", Roles: []string{"reader"}, PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "bi-password", Key: "password"}}}
		return sr
	}
	resp, err := h.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, valid(), nil))
	if err != nil || !resp.Allowed {
		t.Fatalf("valid accounts: %v %s", err, describe(resp))
	}

	hostile := []string{"a'b", "a\"b", "a`b", "a;b", "x`; DROP DATABASE sales; --", "\u0431\u0430\u0437\u0430", "a\nb", strings.Repeat("a", 1000)}
	fields := map[string]func(sr *v1alpha1.Starrocks, v string){
		"spec.databases[0].name":               func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Databases[0].Name = v },
		"spec.roles[0].name":                   func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[0].Name = v },
		"spec.roles[0].privileges[0].database": func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[0].Privileges[0].Database = v },
		"spec.users[0].name":                   func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Name = v },
		"spec.users[0].roles[0]":               func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Roles[0] = v },
		"spec.users[0].passwordSecretRef.name": func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].PasswordSecretRef.Name = v },
		"spec.users[0].passwordSecretRef.key":  func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].PasswordSecretRef.Key = v },
	}
	type tc struct{ field, value, want string }
	var cases []tc
	for field := range fields {
		for _, v := range hostile {
			cases = append(cases, tc{field, v, ""})
		}
	}
	cases = append(cases,
		tc{"spec.users[0].name", "root", "user root is reserved"},
		tc{"spec.users[0].name", "d8_agent", "user d8_agent is reserved"},
		tc{"spec.users[0].name", "admin", "user admin is reserved"},
		tc{"spec.roles[0].name", "d8ms_managed", "role d8ms_managed is reserved"},
		tc{"spec.roles[0].name", "root", "role root is reserved"},
		tc{"spec.databases[0].name", "on", "a database may not be called on"},
		tc{"spec.users[0].name", "to", "a user may not be called to"},
	)
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s=%.20q", c.field, c.value), func(t *testing.T) {
			sr := valid()
			fields[c.field](sr, c.value)
			resp, err := h.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, sr, nil))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Allowed {
				t.Fatalf("%s = %q admitted", c.field, c.value)
			}
			msg := resp.Result.Message
			if !strings.Contains(msg, c.field+": ") || !strings.Contains(msg, c.want) {
				t.Errorf("denial does not name %s (and %q):\n%s", c.field, c.want, msg)
			}
			if strings.Contains(msg, "\n") || len(msg) > 2000 {
				t.Errorf("denial is not one bounded line (%d bytes):\n%s", len(msg), msg)
			}
			named := false
			for _, cause := range resp.Result.Details.Causes {
				named = named || cause.Field == c.field
			}
			if !named {
				t.Errorf("no cause names %s: %+v", c.field, resp.Result.Details.Causes)
			}
		})
	}
}

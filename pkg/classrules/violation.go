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

// Package classrules decides whether a Starrocks instance is valid for its
// StarrocksClass. It is the single home of these rules: the admission webhook
// uses it to reject or default a request early, the hooks use it to decide
// what is rendered and to explain in status why an instance is not.
//
// Use:
//
//	compiled, classProblems := cache.Get(class) // CEL compiled once per class generation
//	compiled.Default(sr)                        // webhook only: fill what the user left out
//	resolved, violations := compiled.Resolve(sr)
//
// Every Violation names the field, the offending value and the class rule
// (policy, list or CEL rule) that rejected it.
package classrules

import (
	"fmt"
	"strings"
)

// Violation is one broken rule.
type Violation struct {
	// Field is the path of the offending field, e.g. spec.frontend.memory.size.
	Field string
	// Value is the offending value as the user wrote it (or as resolved).
	Value string
	// Rule names the class rule or policy, e.g.
	// `class "default" sizingPolicies[1].memory.step 1Gi`.
	Rule string
	// Message is a sentence for a person.
	Message string
}

// Error renders "<field>: <message> (value <v>; <rule>)".
func (v Violation) Error() string {
	if v.Field == "" {
		return v.Detail()
	}
	return v.Field + ": " + v.Detail()
}

// Detail is Error without the field: "<message> (value <v>; <rule>)", for
// places that show the field apart (a StatusCause carries it in Field, and
// kubectl prints "<field>: <message>").
func (v Violation) Detail() string {
	return fmt.Sprintf("%s (value %s; %s)", v.Message, v.Value, v.Rule)
}

// Violations is every broken rule of one object. A nil or empty Violations
// means valid; use ErrOrNil to get a nil error in that case.
type Violations []Violation

// Error joins the violations with "; ".
func (vs Violations) Error() string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Error()
	}
	return strings.Join(parts, "; ")
}

// ErrOrNil returns nil for no violations (a typed nil slice in an error
// interface is not nil, which is a classic trap).
func (vs Violations) ErrOrNil() error {
	if len(vs) == 0 {
		return nil
	}
	return vs
}

// MissingClass is the violation of an instance whose class does not exist.
func MissingClass(className string) Violations {
	return Violations{{
		Field:   "spec.starrocksClassName",
		Value:   className,
		Rule:    "the referenced StarrocksClass must exist",
		Message: fmt.Sprintf("StarrocksClass %q does not exist; ask the platform admin which classes are available (kubectl get starrocksclasses)", className),
	}}
}

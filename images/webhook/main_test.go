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

package main

import (
	"log/slog"
	"testing"

	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		args    []string
		want    slog.Level
		listen  string
		wantErr bool
	}{
		{name: "defaults to Info on :9443", want: slog.LevelInfo, listen: ":9443"},
		{name: "takes the level from LOG_LEVEL", env: "Debug", want: slog.LevelDebug, listen: ":9443"},
		{name: "flag overrides LOG_LEVEL", env: "Debug", args: []string{"--log-level=Error", "--listen=:1"}, want: slog.LevelError, listen: ":1"},
		{name: "rejects an unknown level", args: []string{"--log-level=Verbose"}, wantErr: true},
		{name: "rejects stray arguments", args: []string{"serve"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LOG_LEVEL", tt.env)
			c, err := parseFlags(tt.args)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseFlags(%q) succeeded", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", tt.args, err)
			}
			if c.LogLevel != tt.want || c.Listen != tt.listen || c.HealthListen != ":8080" {
				t.Fatalf("got level %v listen %q health %q", c.LogLevel, c.Listen, c.HealthListen)
			}
		})
	}
}

func TestParseFlagsMaxInstances(t *testing.T) {
	for _, tt := range []struct {
		env, arg string
		want     int
		wantErr  bool
	}{
		{want: desired.DefaultMaxInstances},
		{env: "40", want: 40},
		{env: "40", arg: "--max-instances=7", want: 7},
		{arg: "--max-instances=0", want: 0},
		{arg: "--max-instances=-1", wantErr: true},
		{env: "many", wantErr: true},
	} {
		t.Setenv("MAX_INSTANCES", tt.env)
		var args []string
		if tt.arg != "" {
			args = []string{tt.arg}
		}
		c, err := parseFlags(args)
		switch {
		case tt.wantErr && err == nil:
			t.Errorf("env %q args %q: parsed, want an error", tt.env, args)
		case !tt.wantErr && err != nil:
			t.Errorf("env %q args %q: %v", tt.env, args, err)
		case !tt.wantErr && c.MaxInstances != tt.want:
			t.Errorf("env %q args %q: MaxInstances %d, want %d", tt.env, args, c.MaxInstances, tt.want)
		}
	}
}

func TestParseFlagsMaxPerNamespace(t *testing.T) {
	for _, tt := range []struct {
		env, arg string
		want     int
		wantErr  bool
	}{
		{want: 0},
		{env: "5", want: 5},
		{env: "5", arg: "--max-per-namespace=2", want: 2},
		{arg: "--max-per-namespace=-1", wantErr: true},
		{env: "some", wantErr: true},
	} {
		t.Setenv("MAX_PER_NAMESPACE", tt.env)
		var args []string
		if tt.arg != "" {
			args = []string{tt.arg}
		}
		c, err := parseFlags(args)
		switch {
		case tt.wantErr && err == nil:
			t.Errorf("env %q args %q: parsed, want an error", tt.env, args)
		case !tt.wantErr && err != nil:
			t.Errorf("env %q args %q: %v", tt.env, args, err)
		case !tt.wantErr && c.MaxPerNamespace != tt.want:
			t.Errorf("env %q args %q: MaxPerNamespace %d, want %d", tt.env, args, c.MaxPerNamespace, tt.want)
		}
	}
}

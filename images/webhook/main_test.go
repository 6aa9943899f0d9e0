package main

import (
	"log/slog"
	"testing"
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

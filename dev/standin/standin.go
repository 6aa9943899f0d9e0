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

// Package standin holds what the StarRocks stand-ins of the local node
// (dev/cmd/fakefe, dev/cmd/fakebe; images in dev/images) share: reading
// fe.conf/be.conf, the pid file the stop scripts signal, and the record of
// every stop the tests read. Development tooling, never shipped.
package standin

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// StopsLog is the file in the stand-in's persistent directory (the FE's
// meta_dir, the BE's storage root) where each stop appends a line; it
// outlives the pod, so a test reads it after a rollout. dev/images names it
// too.
const StopsLog = "standin-stops.log"

var confVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ReadConf reads a StarRocks configuration file: "key = value" lines,
// comments after #, values optionally in double quotes, ${NAME} replaced by
// the environment variable NAME (fe-core ConfigBase and the BE's config
// parser substitute environment variables the same way; the module's fe.conf
// relies on it for ${STARROCKS_KEYSTORE_PASSWORD}).
func ReadConf(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	conf := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: not key = value", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		conf[strings.TrimSpace(k)] = confVar.ReplaceAllStringFunc(v, func(m string) string {
			return os.Getenv(confVar.FindStringSubmatch(m)[1])
		})
	}
	return conf, sc.Err()
}

// Port is conf[key] as a port number, def when unset.
func Port(conf map[string]string, key string, def int) (int, error) {
	v, ok := conf[key]
	if !ok || v == "" {
		return def, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p <= 0 || p > 65535 {
		return 0, fmt.Errorf("%s = %q: not a port", key, v)
	}
	return p, nil
}

// WritePID writes this process's pid where the stop script reads it
// (PID_DIR/fe.pid, PID_DIR/be.pid).
func WritePID(path string) error {
	return os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

// RecordStop appends "<time> <component> <what>" to dir/StopsLog and syncs
// it, so the line is on the volume before the process ends.
func RecordStop(dir, component, what string) error {
	f, err := os.OpenFile(filepath.Join(dir, StopsLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), component, what)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

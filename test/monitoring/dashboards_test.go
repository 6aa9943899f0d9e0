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

package monitoring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const dashboardsDir = "../../monitoring/grafana-dashboards"

type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Panels  []panel  `json:"panels"` // collapsed rows nest their panels
	Targets []target `json:"targets"`
}

type target struct {
	Expr string `json:"expr"`
}

type variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"`
}

// grafanaVars replaces Grafana's template variables with values PromQL
// accepts, as Grafana does before it sends a query.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "5m",
	"$__interval", "1m",
	"$__range", "1h",
	"${namespace}", "team-a",
	"$namespace", "team-a",
	"${instance}", "sr1",
	"$instance", "sr1",
)

var labelValuesRe = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

func loadDashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dashboardsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no dashboards in %s", dashboardsDir)
	}
	out := map[string]dashboard{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s is not valid dashboard JSON: %v", f, err)
		}
		out[filepath.Base(f)] = d
	}
	return out
}

func flatten(panels []panel) []panel {
	var all []panel
	for _, p := range panels {
		all = append(all, p)
		all = append(all, flatten(p.Panels)...)
	}
	return all
}

func TestDashboardQueriesParseAsPromQL(t *testing.T) {
	for file, d := range loadDashboards(t) {
		if d.Title == "" || d.UID == "" {
			t.Errorf("%s: needs a title and a uid", file)
		}
		vars := map[string]bool{}
		for _, v := range d.Templating.List {
			vars[v.Name] = true
			if v.Type != "query" {
				continue
			}
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				if err := json.Unmarshal(v.Query, &q.Query); err != nil {
					t.Errorf("%s: variable %s: query is neither an object nor a string", file, v.Name)
					continue
				}
			}
			m := labelValuesRe.FindStringSubmatch(strings.TrimSpace(q.Query))
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(<selector>, <label>)", file, v.Name, q.Query)
				continue
			}
			expr, err := promql.ParseExpr(grafanaVars.Replace(m[1]))
			if err != nil {
				t.Errorf("%s: variable %s: %v", file, v.Name, err)
				continue
			}
			checkMetrics(t, file+" variable "+v.Name, expr)
		}
		for _, want := range []string{"namespace", "instance"} {
			if !vars[want] {
				t.Errorf("%s: not templated by %s", file, want)
			}
		}

		queries := 0
		for _, p := range flatten(d.Panels) {
			for _, tg := range p.Targets {
				queries++
				where := file + " panel " + p.Title
				if !strings.Contains(tg.Expr, "$namespace") || !strings.Contains(tg.Expr, "$instance") {
					t.Errorf("%s: query is not limited to the chosen namespace and instance: %s", where, tg.Expr)
				}
				expr, err := promql.ParseExpr(grafanaVars.Replace(tg.Expr))
				if err != nil {
					t.Errorf("%s: %v\n%s", where, err, tg.Expr)
					continue
				}
				checkMetrics(t, where, expr)
			}
		}
		if queries == 0 {
			t.Errorf("%s has no queries", file)
		}
	}
}

func TestInstanceDashboardCoversWhatOnCallLooksAt(t *testing.T) {
	d, ok := loadDashboards(t)["starrocks-instance.json"]
	if !ok {
		t.Fatal("no starrocks-instance.json dashboard")
	}
	var titles []string
	for _, p := range flatten(d.Panels) {
		titles = append(titles, strings.ToLower(p.Title))
	}
	all := strings.Join(titles, "|")
	for _, topic := range []string{"fe up", "be up", "queries per second", "latency", "errors", "load", "compaction", "memory", "disk", "certificate", "backup",
		"cn up", "cn count", "cache hit ratio", "object storage latency", "object storage errors", "cluster snapshot"} {
		if !strings.Contains(all, topic) {
			t.Errorf("no panel about %q (panels: %v)", topic, titles)
		}
	}
}

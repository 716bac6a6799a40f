package observability

import (
	"bytes"
	"testing"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// parseAlerts reads a Prometheus rule file (unknown keys refused, as
// promtool does) and checks what every alert must have: a unique name, an
// expression, a `for`, a severity and a summary.
func parseAlerts(t *testing.T, raw []byte) []rule {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	var rules []rule
	groups, names := map[string]bool{}, map[string]bool{}
	for _, g := range f.Groups {
		if g.Name == "" || groups[g.Name] {
			t.Errorf("group %q: name missing or repeated", g.Name)
		}
		groups[g.Name] = true
		for _, r := range g.Rules {
			if r.Alert == "" || r.Record != "" {
				t.Errorf("group %s: a rule that is not an alert (%q)", g.Name, r.Record)
				continue
			}
			if names[r.Alert] {
				t.Errorf("alert %s: name repeated", r.Alert)
			}
			names[r.Alert] = true
			if r.Expr == "" {
				t.Errorf("alert %s: no expr", r.Alert)
			}
			if _, err := model.ParseDuration(r.For); err != nil {
				t.Errorf("alert %s: for %q: %v (every alert says how long it must hold)", r.Alert, r.For, err)
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("alert %s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("alert %s: no summary annotation", r.Alert)
			}
			rules = append(rules, r)
		}
	}
	for _, g := range []string{"harvest-driver", "harvest-placer", "harvest-blob", "harvest-plugins"} {
		if !groups[g] {
			t.Errorf("no group %s", g)
		}
	}
	return rules
}

func TestAlertRules(t *testing.T) {
	if rules := parseAlerts(t, Alerts); len(rules) == 0 {
		t.Fatal("alerts.yml holds no alerts")
	}
}

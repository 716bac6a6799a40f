package observability

import (
	"encoding/json"
	"fmt"
	"testing"
)

type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

func parseDashboard(t *testing.T, raw []byte) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("grafana-dashboard.json is not valid JSON: %v", err)
	}
	return d
}

// allPanels flattens rows' panels (a collapsed row holds its own).
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// dashboardUses returns every PromQL expression of the dashboard: panel
// targets and query variables.
func dashboardUses(t *testing.T, d dashboard) []use {
	t.Helper()
	var uses []use
	for _, p := range allPanels(d.Panels) {
		for _, tg := range p.Targets {
			uses = append(uses, use{fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			if err := json.Unmarshal(v.Query, &q.Query); err != nil {
				t.Fatalf("variable %s: query is neither a string nor {query}: %s", v.Name, v.Query)
			}
		}
		uses = append(uses, use{"variable " + v.Name, q.Query})
	}
	return uses
}

func TestDashboardIsAGrafanaDashboard(t *testing.T) {
	d := parseDashboard(t, Dashboard)
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q: want both", d.Title, d.UID)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: want a current Grafana's (39)", d.SchemaVersion)
	}
	ds := false
	for _, v := range d.Templating.List {
		if v.Name == "DS_PROMETHEUS" && v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			ds = true
		}
	}
	if !ds {
		t.Error("no DS_PROMETHEUS data source variable of type prometheus")
	}
	ids := map[int]bool{}
	rows := map[string]bool{}
	var cells [][24]bool // occupied grid cells, by row
	for _, p := range allPanels(d.Panels) {
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("panel %q: id %d is missing or taken", p.Title, p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v is off the 24-column grid", p.Title, g)
			continue
		}
		for len(cells) < g.Y+g.H {
			cells = append(cells, [24]bool{})
		}
		for y := g.Y; y < g.Y+g.H; y++ {
			for x := g.X; x < g.X+g.W; x++ {
				if cells[y][x] {
					t.Errorf("panel %q: gridPos %+v overlaps another panel", p.Title, g)
					y = g.Y + g.H
					break
				}
				cells[y][x] = true
			}
		}
		if p.Type == "row" {
			rows[p.Title] = true
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${DS_PROMETHEUS}" {
			t.Errorf("panel %q: data source %+v, want uid ${DS_PROMETHEUS}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
	}
	for _, r := range []string{"Driver (per node)", "Placer", "Blob front", "Plugins"} {
		if !rows[r] {
			t.Errorf("no row %q", r)
		}
	}
}

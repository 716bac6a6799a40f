package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseReplayFlags(t *testing.T, args ...string) *replayFlags {
	t.Helper()
	var f replayFlags
	fs := flag.NewFlagSet("exporter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

func TestExporterReplayFlags(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte("tenant,timestamp,cpu_percent\nsearch/frontend,2026-01-01T00:00:00Z,50\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rep, err := parseReplayFlags(t, "-replay", trace, "-replay-start", "2026-01-01T00:00:00Z", "-speedup", "30",
		"-node-cores", "12", "-tenant", "/harvest-15000-client-1-primary=search/frontend").replay(now)
	if err != nil {
		t.Fatal(err)
	}
	if rep.NodeCores != 12 || rep.Trace.Speedup != 30 || !rep.Trace.Began.Equal(now) ||
		rep.Tenants["/harvest-15000-client-1-primary"] != "search/frontend" {
		t.Errorf("replay %+v, trace began %s", rep, rep.Trace.Began)
	}
	rep, err = parseReplayFlags(t, "-replay", trace, "-replay-start", "2026-01-01T00:00:00Z", "-replay-began", "2030-01-01T00:00:05.25Z",
		"-node-cores", "2", "-tenant", "/p=search/frontend").replay(now)
	if err != nil || !rep.Trace.Began.Equal(now.Add(5250*time.Millisecond)) {
		t.Errorf("-replay-began: %v %v", rep, err)
	}
	if rep, err := parseReplayFlags(t).replay(now); rep != nil || err != nil {
		t.Errorf("no -replay: %v %v", rep, err)
	}
	for _, args := range [][]string{
		{"-tenant", "/p=a/b"},
		{"-replay", trace, "-node-cores", "2", "-tenant", "/p=search/frontend"},
		{"-replay", trace, "-replay-start", "2026-01-01T00:00:00Z", "-tenant", "/p=search/frontend"},
		{"-replay", trace, "-replay-start", "2026-01-01T00:00:00Z", "-node-cores", "2"},
		{"-replay", trace, "-replay-start", "2026-01-01T00:00:00Z", "-node-cores", "2", "-tenant", "/p"},
		{"-replay", trace, "-replay-start", "2026-01-01T00:00:00Z", "-node-cores", "2", "-speedup", "0", "-tenant", "/p=search/frontend"},
	} {
		if _, err := parseReplayFlags(t, args...).replay(now); err == nil {
			t.Errorf("%s: accepted", strings.Join(args, " "))
		}
	}
}

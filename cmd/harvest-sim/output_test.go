package main

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestOutputsRegisterAndEmit(t *testing.T) {
	dir := t.TempDir()
	var o outputs
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o.register(fs, "csv usage", "plot usage")
	if err := fs.Parse([]string{"-json", "-json-file", filepath.Join(dir, "s.json"), "-csv", "c", "-plot", "p"}); err != nil {
		t.Fatal(err)
	}
	if fs.Lookup("csv").Usage != "csv usage" || fs.Lookup("plot").Usage != "plot usage" {
		t.Error("-csv and -plot do not carry the subcommand's usage")
	}
	var did []string
	to := func(name string) func(string) error {
		return func(path string) error { did = append(did, name+":"+path); return nil }
	}
	summary := map[string]int{"n": 7}
	out := stdoutOf(t, func() error { return o.emit(summary, to("csv"), to("plot"), func() { did = append(did, "table") }) })
	if !slices.Equal(did, []string{"csv:c", "plot:p"}) {
		t.Errorf("did %v: want the CSV, then the plot, and no table with -json", did)
	}
	var printed, written map[string]int
	if err := json.Unmarshal(out, &printed); err != nil || printed["n"] != 7 {
		t.Errorf("printed %q: %v", out, err)
	}
	if b, err := os.ReadFile(o.jsonPath); err != nil || json.Unmarshal(b, &written) != nil || written["n"] != 7 {
		t.Errorf("-json-file: %q, %v", b, err)
	}

	// without -json: the table; an output's error stops the rest
	o.asJSON, did = false, nil
	if out := stdoutOf(t, func() error { return o.emit(summary, to("csv"), to("plot"), func() { did = append(did, "table") }) }); len(out) != 0 {
		t.Errorf("printed %q besides the table", out)
	}
	if !slices.Equal(did, []string{"csv:c", "plot:p", "table"}) {
		t.Errorf("did %v: want the CSV, the plot, then the table", did)
	}
	boom := errors.New("boom")
	did = nil
	err := o.emit(summary, func(string) error { return boom }, to("plot"), func() { did = append(did, "table") })
	if !errors.Is(err, boom) || len(did) != 0 {
		t.Errorf("err %v, did %v: want the CSV's error and nothing after it", err, did)
	}
}
